"""The real `catalogo serve` process, driven over a socket: restarts, kill -9, two workers."""

import os
import signal
import subprocess
import threading
from pathlib import Path

import httpx2
import pytest

from tests.databases import Database
from tests.processes import CATALOGO, catalogo, free_port, serving, stop


def criar(client: httpx2.Client, nome: str) -> httpx2.Response:
    return client.post("/produtos", data={"produto.nome": nome, "produto.preco": "9,90"})


def nomes(db: Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT nome FROM produtos ORDER BY id")]


def test_the_whole_flow_works_over_a_socket(database: str, tmp_path: Path, db: Database) -> None:
    with serving(database, tmp_path) as (base, _), httpx2.Client(base_url=base) as client:
        assert criar(client, "Caneta").status_code == 303
        lista = client.get("/produtos")
        assert "Produto «Caneta» adicionado." in lista.text
        assert client.get("/produtos/1").status_code == 200
        update = {"_method": "PUT", "produto.nome": "Lápis", "produto.preco": "1"}
        assert client.post("/produtos/1", data=update).status_code == 303
        assert client.post("/produtos/1", data={"_method": "DELETE"}).status_code == 303
        assert client.post("/produtos/1").status_code == 405
        head = client.head("/produtos")
        assert head.status_code == 200 and head.content == b""
    assert nomes(db) == []


def test_acknowledged_writes_survive_a_restart_and_a_kill_9(
    database: str, tmp_path: Path, db: Database
) -> None:
    with serving(database, tmp_path) as (base, _), httpx2.Client(base_url=base) as client:
        assert criar(client, "antes do reinício").status_code == 303
    with serving(database, tmp_path) as (base, process), httpx2.Client(base_url=base) as client:
        assert "antes do reinício" in client.get("/produtos").text
        for n in range(20):
            assert criar(client, f"p{n}").status_code == 303
        stop(process, signal.SIGKILL)
    assert nomes(db) == ["antes do reinício"] + [f"p{n}" for n in range(20)]
    with serving(database, tmp_path) as (base, _), httpx2.Client(base_url=base) as client:
        assert "p19" in client.get("/produtos").text


@pytest.mark.parametrize("workers", ["1", "2"])
def test_forty_simultaneous_creates_make_exactly_forty_products(
    database: str, tmp_path: Path, db: Database, workers: str
) -> None:
    statuses: list[int] = []
    start = threading.Barrier(40)

    def create(base: str, n: int) -> None:
        with httpx2.Client(base_url=base, timeout=30) as client:
            start.wait()
            statuses.append(criar(client, f"p{n}").status_code)

    with serving(database, tmp_path, "--workers", workers) as (base, _):
        threads = [threading.Thread(target=create, args=(base, n)) for n in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert statuses == [303] * 40
    assert sorted(nomes(db)) == sorted(f"p{n}" for n in range(40))


def test_migrate_creates_the_schema_and_exits(empty_database: str) -> None:
    result = catalogo(empty_database, "migrate")
    assert result.returncode == 0, result.stderr
    db = Database(empty_database)
    assert nomes(db) == []
    db.close()


@pytest.mark.parametrize("backend", ["sqlite"])
def test_serve_migrates_a_new_sqlite_file_itself(empty_database: str, tmp_path: Path) -> None:
    with serving(empty_database, tmp_path) as (base, _):
        assert httpx2.get(f"{base}/readyz").status_code == 200


@pytest.mark.parametrize("backend", ["postgresql"])
@pytest.mark.parametrize("command", [["serve"], ["seed", "3"]])
def test_postgresql_is_never_migrated_unasked(empty_database: str, command: list[str]) -> None:
    result = catalogo(empty_database, *command)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "catalogo: the database schema is empty, this version of catalogo needs 0003: "
        "run `catalogo migrate` first"
    )
    db = Database(empty_database)
    assert db.tables() == []
    db.close()


@pytest.mark.parametrize("backend", ["postgresql"])
def test_serve_refuses_a_postgresql_schema_left_at_an_older_revision(
    database: str, db: Database
) -> None:
    db.execute("UPDATE alembic_version SET version_num = '0001'")
    result = catalogo(database, "serve")
    assert result.returncode == 1
    assert "at revision 0001, this version of catalogo needs 0003" in result.stderr


@pytest.mark.parametrize("command", [["serve"], ["migrate"], ["seed", "1"]])
def test_an_unreachable_database_stops_the_command_with_a_message(command: list[str]) -> None:
    port = free_port()  # nothing listens there
    result = catalogo(f"postgresql://postgres@127.0.0.1:{port}/catalogo", *command)
    assert result.returncode == 1
    assert result.stderr.startswith("catalogo: the database does not answer (")
    assert "Traceback" not in result.stderr


def test_a_bad_setting_stops_the_command_with_a_message_naming_it() -> None:
    env = {**os.environ, "CATALOGO_PAGE_SIZE": "lots"}
    result = subprocess.run(
        [CATALOGO, "migrate"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr.strip() == "catalogo: CATALOGO_PAGE_SIZE must be a whole number"


def test_seed_adds_that_many_valid_products(database: str, db: Database) -> None:
    result = catalogo(database, "seed", "25")
    assert result.stdout.strip() == "catalogo: added 25 products"
    rows = db.execute(f"SELECT nome, {db.centavos} FROM produtos").fetchall()
    assert len(rows) == 25
    assert all(nome and 0 < centavos <= 99_999_999_999 for nome, centavos in rows)
