"""SQLite's readers (storage/sqlite/readers.py), in a real `catalogo serve`: a list that reads
the whole catalog runs on a reader thread, so the worker goes on answering everything else."""

import asyncio
import shutil
import threading
from pathlib import Path

import httpx2

from catalogo.domain.busca import Position, Query, terms
from catalogo.domain.errors import QueryTimeout, StorageUnavailable
from catalogo.domain.produtos import Produto
from catalogo.runtime.settings import Settings
from catalogo.storage import open_storage
from catalogo.storage.paging import Cursor, Page
from catalogo.storage.sqlite.readers import THREAD_CACHE_KIB, THREADS, Reader, Readers
from tests.databases import Database
from tests.helpers import BUDGET_MS, EVERYWHERE, JSON, big_catalog
from tests.processes import catalogo, http_client, serving


def test_a_search_that_reads_the_whole_catalog_holds_up_no_other_request(tmp_path: Path) -> None:
    """On the event loop, the search held every other request of the worker until it ended:
    one or two answers got in around it. Beside it, dozens do."""
    database = f"sqlite:///{tmp_path / 'catalogo.db'}"
    assert catalogo(database, "seed", "40000").returncode == 0
    nothing = {"q": f"{EVERYWHERE} kw", "ordem": "-preco"}  # every product read, none found
    found: list[httpx2.Response] = []
    with serving(database, tmp_path, env={"CATALOGO_QUERY_TIMEOUT_MS": "60000"}) as (base, _):

        def search() -> None:
            with http_client(base, timeout=60) as client:
                found.append(client.get("/produtos", params=nothing, headers=JSON))

        searching = threading.Thread(target=search)
        answered = 0
        with http_client(base, timeout=60) as client:
            searching.start()
            while searching.is_alive():
                assert client.get("/healthz").status_code == 200
                assert client.get("/produtos/7").status_code == 200
                answered += 1
        searching.join()
    assert found[0].status_code == 200 and found[0].json()["produtos"] == []
    assert answered >= 10, answered


def test_a_read_that_waited_its_budget_for_a_reader_thread_is_not_begun(
    tmp_path: Path, sqlite_template: str
) -> None:
    """Every reader is busy with a read that runs to its budget; those that waited as long in
    line are told to come back (503), not run after a wait no balancer would sit out."""
    database = f"sqlite:///{tmp_path / 'catalogo.db'}"
    shutil.copy(sqlite_template.removeprefix("sqlite:///"), database.removeprefix("sqlite:///"))
    db = Database(database)
    big_catalog(database, db)
    db.close()
    nothing = Query(terms(f"{EVERYWHERE} kw"), ordem="-preco")

    async def crowd() -> list[BaseException | Page[Produto, Position]]:
        storage = await open_storage(Settings(database_url=database, query_timeout_ms=BUDGET_MS))
        try:
            reads = [storage.find(nothing, Cursor(20)) for _ in range(3 * THREADS)]
            return await asyncio.gather(*reads, return_exceptions=True)
        finally:
            await storage.close()

    outcomes = [type(outcome) for outcome in asyncio.run(crowd())]
    assert set(outcomes) == {QueryTimeout, StorageUnavailable}, outcomes


def test_a_reader_thread_keeps_a_small_page_cache_of_its_own(
    tmp_path: Path, sqlite_template: str
) -> None:
    """Its reads walk more of the file than any cache holds; the event loop's reader, whose
    reads by id come back to the same pages, keeps SQLite's default."""
    path = tmp_path / "catalogo.db"
    shutil.copy(sqlite_template.removeprefix("sqlite:///"), path)
    readers = Readers(str(path), 5000, 5000)

    async def sizes() -> tuple[int, int]:
        threaded = await readers.run(lambda reader: reader.read("PRAGMA cache_size")[0][0])
        loop = Reader(str(path), 5000, 5000)
        try:
            return threaded, loop.read("PRAGMA cache_size")[0][0]
        finally:
            loop.connection.close()

    try:
        assert asyncio.run(sizes()) == (-THREAD_CACHE_KIB, -2000)
    finally:
        readers.close()
