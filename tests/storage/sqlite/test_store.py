"""The SQLite store: group commit keeps every write apart, and no failure stops the writer."""

import asyncio
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from catalogo.domain.busca import Query, terms, trigrams
from catalogo.domain.contas import NewSession, NewToken, UserChange
from catalogo.domain.errors import QueryTimeout, StorageUnavailable
from catalogo.domain.historico import CLI
from catalogo.runtime.settings import Settings
from catalogo.storage import migrations
from catalogo.storage.paging import Cursor
from catalogo.storage.sqlite import busca, store
from catalogo.storage.sqlite.busca import match
from catalogo.storage.sqlite.store import SQLiteStorage
from tests.databases import Database
from tests.helpers import ONLY_SQLITE, eventually_in_loop
from tests.storage.test_storage import produto

pytestmark = ONLY_SQLITE
T = TypeVar("T")


def run(settings: Settings, test: Callable[[SQLiteStorage], Awaitable[None]]) -> None:
    """Runs `test` against a store opened on the test's database file, then closes it."""

    async def opened() -> None:
        storage = SQLiteStorage(settings.sqlite_path)
        try:
            await test(storage)
        finally:
            await storage.close()

    asyncio.run(opened())


async def in_one_batch(storage: SQLiteStorage, count: int, writes: Callable[[], Awaitable[T]]) -> T:
    """What `writes` starts (`count` jobs), committed together: they start once the writer
    waits at a gate, in a batch of its own, which opens when all of them are queued (left to
    the scheduler, one sometimes went alone into a batch of its own); at most 5 s."""
    inside, gate = threading.Event(), threading.Event()

    def hold(connection: sqlite3.Connection) -> None:
        inside.set()
        gate.wait(5)

    held = storage._writer.submit(hold)
    await asyncio.to_thread(inside.wait, 5)
    pending = asyncio.ensure_future(writes())
    await eventually_in_loop(lambda: storage._writer._jobs.qsize() >= count, seconds=5)
    gate.set()
    await held
    return await pending


def test_writes_committed_together_each_get_their_own_id(settings: Settings, db: Database) -> None:
    async def test(storage: SQLiteStorage) -> None:
        criados = await asyncio.gather(*(storage.create(produto(f"p{n}"), CLI) for n in range(300)))
        assert sorted(p.id for p in criados if p.id) == list(range(1, 301))

    run(settings, test)
    assert db.execute("SELECT count(*), count(DISTINCT nome) FROM produtos").fetchone() == (
        300,
        300,
    )


def test_writes_a_turn_of_the_event_loop_hands_over_are_committed_in_one_batch(
    settings: Settings,
) -> None:
    """Even when what the loop does between them lets go of the GIL (a read's statement, a
    password's hash), which would let the writer, woken by the first, commit it alone."""
    batches: list[int] = []

    async def between() -> None:
        time.sleep(0.05)  # holding the loop, letting go of the GIL

    async def opened() -> None:
        storage = SQLiteStorage(settings.sqlite_path, committed=batches.append)
        try:
            writes = [storage.create(produto(f"p{n}"), CLI) for n in range(3)]
            await asyncio.gather(writes[0], between(), writes[1], between(), writes[2])
        finally:
            await storage.close()

    asyncio.run(opened())
    assert batches == [3]


def test_a_write_handed_over_as_the_writer_stops_is_answered_unavailable(
    settings: Settings,
) -> None:
    async def test(storage: SQLiteStorage) -> None:
        written = storage._writer.submit(lambda connection: "written")
        storage._writer.stop()  # before this turn of the loop hands the write over
        with pytest.raises(StorageUnavailable, match="stopped"):
            await written

    run(settings, test)


def test_one_failing_write_does_not_undo_the_others_in_its_batch(
    settings: Settings, db: Database
) -> None:
    async def test(storage: SQLiteStorage) -> None:
        bad = storage._writer.submit(
            lambda c: c.execute("INSERT INTO produtos (nome, preco_centavos) VALUES ('', 0)")
        )
        results = await asyncio.gather(
            storage.create(produto("antes"), CLI),
            bad,
            storage.create(produto("depois"), CLI),
            return_exceptions=True,
        )
        assert isinstance(results[1], sqlite3.IntegrityError)

    run(settings, test)
    assert [r[0] for r in db.execute("SELECT nome FROM produtos ORDER BY id")] == [
        "antes",
        "depois",
    ]


def test_a_write_that_fails_after_changing_something_leaves_none_of_it(
    settings: Settings, db: Database
) -> None:
    def half_done(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO produtos (nome, preco_centavos) VALUES ('metade', 1)")
        raise ValueError("the second half failed")

    async def test(storage: SQLiteStorage) -> None:
        def written() -> Awaitable[tuple[Any, ...]]:
            return asyncio.gather(
                storage.create(produto("antes"), CLI),
                storage._writer.submit(half_done),
                storage.create(produto("depois"), CLI),
                return_exceptions=True,
            )

        antes, failed, depois = await in_one_batch(storage, 3, written)
        assert isinstance(failed, ValueError)
        assert (antes.nome, depois.nome) == ("antes", "depois")

    run(settings, test)
    assert [r[0] for r in db.execute("SELECT nome FROM produtos ORDER BY id")] == [
        "antes",
        "depois",
    ]
    assert db.execute("SELECT count(*) FROM eventos").fetchone()[0] == 2


def test_who_a_credential_names_is_asked_again_once_another_instance_changed_anything(
    settings: Settings,
) -> None:
    """The kept principals (sqlite_accounts.py): an instance that has just read a session and
    a token sees, at its next request, the session ended, the token revoked and the user
    demoted by another instance on the same file."""

    async def test(here: SQLiteStorage) -> None:
        there = SQLiteStorage(settings.sqlite_path)
        try:
            now = time.time()
            user = await there.create_user("ana", "editor", "x", now)
            await there.create_session(NewSession(user.id, "s1", now, now + 3600, "", ""))
            token = await there.create_token(NewToken(user.id, "t", "editor", "t1", now, None))
            for _ in range(2):  # the second from what is kept
                assert (await here.session_principal("s1", now)) is not None
            await here.token_principal("t1", now)  # notes its use: one query, then kept
            assert (await here.token_principal("t1", now)) is not None
            assert (await here.token_principal("t1", now)) is not None
            await there.update_user("ana", UserChange(papel="leitor"))
            demoted = await here.session_principal("s1", now)
            assert demoted is not None and demoted.papel == "leitor"
            await there.end_session("s1")
            assert await here.session_principal("s1", now) is None
            await there.revoke_token(token.id, now)
            assert await here.token_principal("t1", now) is None
            assert await here.session_principal("s1", now + 7200) is None
        finally:
            await there.close()

    run(settings, test)


def test_a_product_read_again_unchanged_is_the_one_kept_and_a_changed_one_is_read_anew(
    settings: Settings,
) -> None:
    """Products are kept by the row they were read from (sqlite.historico.kept_produto_of): a list
    read again shares them, and a change, by this instance or another on the same file, shows
    at once, since the changed row is another key."""

    async def test(here: SQLiteStorage) -> None:
        there = SQLiteStorage(settings.sqlite_path)
        try:
            made = await here.create(produto("Caneca"), CLI)
            assert made.id is not None

            async def listed() -> Any:
                return (await here.find(Query(), Cursor(10))).items[0]

            first = await listed()
            assert await listed() is first and await here.get(made.id) is first
            await there.update(made.id, produto("Caneca azul"), None, CLI)
            changed = await listed()
            assert (changed.nome, changed.versao) == ("Caneca azul", 2)
            assert await here.get(made.id) is changed
            await here.update(made.id, produto("Caneca"), None, CLI)
            again = await listed()
            assert (again.nome, again.versao) == ("Caneca", 3) and again != first
        finally:
            await there.close()

    run(settings, test)


def test_a_product_read_again_is_not_asked_of_sqlite_until_something_is_committed(
    settings: Settings,
) -> None:
    """While the file's mark stays (sqlite_changes.py) the product read before is the answer;
    a commit by another instance, of anything, makes the next read ask the file again."""

    async def test(here: SQLiteStorage) -> None:
        there = SQLiteStorage(settings.sqlite_path)
        try:
            made = await here.create(produto("Caneca"), CLI)
            assert made.id is not None
            first = await here.get(made.id)
            asked: list[str] = []
            here._reader.connection.set_trace_callback(asked.append)
            assert await here.get(made.id) is first and asked == []
            await there.update(made.id, produto("Caneca azul"), None, CLI)
            changed = await here.get(made.id)
            assert changed is not None and changed.nome == "Caneca azul" and len(asked) == 1
            await there.remove(made.id, None, CLI)
            assert await here.get(made.id) is None
            await there.restore(made.id, CLI)
            assert await here.get(made.id) is not None
            await there._submit(lambda c: c.execute("DELETE FROM sessions"))  # any commit
            asked.clear()
            await here.get(made.id)
            assert len(asked) == 1
        finally:
            await there.close()

    run(settings, test)


def test_a_list_page_read_again_is_not_asked_of_sqlite_until_something_is_committed(
    settings: Settings,
) -> None:
    """Pages are kept by what was asked (the query, the cursor, the count and the position) while
    the file's mark stays: a search read on a reader thread as well as a page read on the loop;
    a commit by another instance, of anything, makes the next read ask the file again."""

    async def test(here: SQLiteStorage) -> None:
        there = SQLiteStorage(settings.sqlite_path)
        try:
            await here.create(produto("Caneca"), CLI)
            asked: list[str] = []
            here._reader.connection.set_trace_callback(asked.append)
            searched = Query(terms=("caneca",))
            for query in (Query(), searched):
                first = await here.find(query, Cursor(10), 100, position=True)
                asked.clear()
                assert await here.find(query, Cursor(10), 100, position=True) is first
                assert asked == []
                assert await here.find(query, Cursor(10)) is not first  # another question
            await there.create(produto("Caneca azul"), CLI)
            for query in (Query(), searched):
                page = await here.find(query, Cursor(10), 100, position=True)
                assert [p.nome for p in page.items] == ["Caneca azul", "Caneca"]
                assert page.total == 2
            await there._submit(lambda c: c.execute("DELETE FROM sessions"))  # any commit
            asked.clear()
            await here.find(Query(), Cursor(10))
            assert asked != []
        finally:
            await there.close()

    run(settings, test)


def test_a_list_page_whose_count_ran_past_its_budget_is_counted_again(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def test(storage: SQLiteStorage) -> None:
        for nome in ("Caneca", "Caneta", "Cadeira"):  # more than a page: counted apart
            await storage.create(produto(nome), CLI)
        monkeypatch.setattr(busca, "_remembered", _past_budget)
        assert (await storage.find(Query(), Cursor(1), 100)).total is None
        assert storage._pages == {}
        monkeypatch.undo()
        assert (await storage.find(Query(), Cursor(1), 100)).total == 3

    run(settings, test)


def _past_budget(*args: object) -> int:
    raise QueryTimeout(5000)


def test_kept_list_pages_are_bounded(settings: Settings) -> None:
    async def test(storage: SQLiteStorage) -> None:
        storage._pages.most = 2
        await storage.create(produto("Caneca"), CLI)
        for limit in range(1, 6):
            await storage.find(Query(), Cursor(limit))
            assert len(storage._pages) <= 2

    run(settings, test)


def test_rows_kept_by_id_are_bounded_and_the_least_recently_read_go_first(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "ROWS_KEPT", 2)

    async def test(storage: SQLiteStorage) -> None:
        ids = [(await storage.create(produto(nome), CLI)).id or 0 for nome in "abc"]
        asked: list[str] = []
        storage._reader.connection.set_trace_callback(asked.append)
        for id in (ids[0], ids[1], ids[0], ids[2]):  # the third read of `a` makes `b` the oldest
            await storage.get(id)
        assert len(asked) == 3 and len(storage._rows) == 2
        await storage.get(ids[0])
        assert len(asked) == 3
        await storage.get(ids[1])
        assert len(asked) == 4

    run(settings, test)


def test_a_writer_left_idle_copies_what_it_wrote_into_the_file(settings: Settings) -> None:
    """Reads find a page in a long WAL dearer than in the file (sqlite.writer.IDLE_S):
    once the writer has had nothing to do for a while, what it wrote is in the file itself,
    where a connection that never looks at the WAL (immutable) finds it."""

    def in_the_file(id: int) -> bool:
        file = sqlite3.connect(f"file:{settings.sqlite_path}?immutable=1", uri=True)
        try:
            return bool(file.execute("SELECT 1 FROM produtos WHERE id = ?", (id,)).fetchall())
        finally:
            file.close()

    async def test(storage: SQLiteStorage) -> None:
        made = await storage.create(produto("Caneca"), CLI)
        assert made.id is not None and not in_the_file(made.id)  # in the WAL, for now
        await eventually_in_loop(lambda: in_the_file(made.id or 0), seconds=10)

    run(settings, test)


async def names_found(storage: SQLiteStorage, words: str) -> list[str]:
    """The names a search for `words` finds, newest first (a page of 9)."""
    page = await storage.find(Query(terms(words)), Cursor(9))
    return [p.nome for p in page.items]


def test_a_batch_of_writes_leaves_the_search_index_as_its_last_texts_say(
    settings: Settings, db: Database
) -> None:
    """The index's changes are queued by the triggers and moved in at the commit
    (storage/sqlite/busca.py's INDEX_PENDING): for each product, only its text after the batch
    counts, however many times the batch changed it, removed or brought it back."""

    async def test(storage: SQLiteStorage) -> None:
        (old,) = [await storage.create(produto("Caneca azul antiga"), CLI)]

        async def story() -> None:
            made = await storage.create(produto("Caneca azul"), CLI)
            assert made.id is not None
            await storage.update(made.id, produto("Caneca verde"), None, CLI)
            gone = await storage.create(produto("Prato azul"), CLI)
            assert gone.id is not None
            await storage.remove(gone.id, None, CLI)

        assert old.id is not None

        def writes() -> Awaitable[tuple[Any, ...]]:
            assert old.id is not None
            return asyncio.gather(
                storage.update(old.id, produto("Caneca amarela"), None, CLI),
                storage.remove(old.id, None, CLI),
                storage.restore(old.id, CLI),
            )

        await in_one_batch(storage, 3, writes)
        await story()

        assert await names_found(storage, "azul") == []
        assert await names_found(storage, "verde") == ["Caneca verde"]
        assert await names_found(storage, "amarela") == ["Caneca amarela"]
        assert await names_found(storage, "caneca") == ["Caneca verde", "Caneca amarela"]

    run(settings, test)
    assert db.execute("SELECT count(*) FROM busca_pendente").fetchone() == (0,)


def queued(db: Database) -> int:
    """How many changes wait to be moved into the search index (sqlite_search.py)."""
    return int(db.execute("SELECT count(*) FROM busca_pendente").fetchone()[0])


def test_a_write_leaves_its_search_text_queued_and_a_search_moves_it_in_first(
    settings: Settings, db: Database
) -> None:
    """A write no longer pays for the index: its text waits in the queue; but a search sees
    every write committed before it, here or by another process on the file."""

    async def test(here: SQLiteStorage) -> None:
        there = SQLiteStorage(settings.sqlite_path)
        try:
            made = await there.create(produto("Caneca azul"), CLI)
            assert made.id is not None
            await there.update(made.id, produto("Caneca verde"), None, CLI)
            assert queued(db) == 3  # in, out, in again
            assert await names_found(here, "verde") == ["Caneca verde"]
            assert queued(db) == 0
            assert (await here.find(Query(terms("azul")), Cursor(9))).items == []
        finally:
            await there.close()

    run(settings, test)


def test_a_search_by_short_words_or_none_leaves_the_queue_alone(
    settings: Settings, db: Database
) -> None:
    """Words under three characters and lists without words never read the index."""

    async def test(storage: SQLiteStorage) -> None:
        await storage.create(produto("Pá de lixo"), CLI)
        assert await names_found(storage, "pá") == ["Pá de lixo"]
        assert len((await storage.find(Query(), Cursor(9))).items) == 1
        assert queued(db) == 1

    run(settings, test)


def test_an_export_by_words_sees_the_queued_writes(settings: Settings, db: Database) -> None:
    async def test(storage: SQLiteStorage) -> None:
        await storage.create(produto("Caneca azul"), CLI)
        await storage.create(produto("Prato fundo"), CLI)
        chunks = [chunk async for chunk in storage.export(Query(terms("caneca")))]
        assert [p.nome for chunk in chunks for p in chunk] == ["Caneca azul"]

    run(settings, test)
    assert queued(db) == 0


def test_a_long_queue_goes_into_the_index_with_the_commit_that_makes_it_long(
    settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(busca, "PENDING_MAX", 3)

    async def test(storage: SQLiteStorage) -> None:
        for nome in ("Caneca", "Prato"):
            await storage.create(produto(nome), CLI)
        assert queued(db) == 2
        await storage.create(produto("Copo"), CLI)
        assert queued(db) == 0
        found = "SELECT -rowid FROM produtos_busca WHERE produtos_busca MATCH ?"
        assert db.execute(found, (match(trigrams("copo")),)).fetchall() == [(3,)]

    run(settings, test)


def test_a_writer_left_idle_or_stopped_moves_the_queue_into_the_index(
    settings: Settings, db: Database
) -> None:
    async def test(storage: SQLiteStorage) -> None:
        await storage.create(produto("Caneca"), CLI)
        assert queued(db) == 1
        await eventually_in_loop(lambda: queued(db) == 0, seconds=10)
        await storage.create(produto("Prato"), CLI)

    run(settings, test)  # closed at once, well within a second of the last write
    assert queued(db) == 0


def test_a_failing_database_answers_unavailable_and_the_writer_goes_on(
    settings: Settings, db: Database
) -> None:
    def damaged(connection: sqlite3.Connection) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    async def test(storage: SQLiteStorage) -> None:
        def both() -> Awaitable[tuple[Any, ...]]:
            return asyncio.gather(
                storage._writer.submit(damaged), storage.create(produto("x"), CLI)
            )

        with pytest.raises(StorageUnavailable, match="malformed"):
            await in_one_batch(storage, 2, both)
        assert (await storage.create(produto("depois"), CLI)).nome == "depois"

    run(settings, test)
    assert [r[0] for r in db.execute("SELECT nome FROM produtos")] == ["depois"]


def test_the_schema_version_of_a_file_is_read_without_making_one(empty_database: str) -> None:
    settings = Settings(database_url=empty_database)
    path = Path(settings.sqlite_path)
    assert store.schema_version_of(str(path)) is None
    assert not path.exists()
    sqlite3.connect(path).close()
    assert store.schema_version_of(str(path)) is None  # there, never migrated
    migrations.upgrade(settings)
    assert store.schema_version_of(str(path)) == migrations.HEAD
