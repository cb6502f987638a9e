"""The real `catalogo serve` process, driven over a socket: restarts, kill -9, two workers."""

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.databases import Database
from tests.helpers import (
    ONLY_POSTGRESQL,
    ONLY_SQLITE,
    all_at_once,
    create_via_form,
    post_form,
    stored_names,
)
from tests.processes import CATALOGO, catalogo, fetch, free_port, http_client, serving, stop


def test_the_whole_flow_works_over_a_socket(database: str, tmp_path: Path, db: Database) -> None:
    with serving(database, tmp_path) as (base, _), http_client(base) as client:
        id = create_via_form(client, db, "Caneta", "9,90")
        listing = client.get("/produtos")
        assert "Produto «Caneta» adicionado." in listing.text
        assert client.get(f"/produtos/{id}").status_code == 200
        update = {"_method": "PUT", "produto.nome": "Lápis", "produto.preco": "1"}
        assert client.post(f"/produtos/{id}", data=update).status_code == 303
        assert client.post(f"/produtos/{id}", data={"_method": "DELETE"}).status_code == 303
        assert client.post(f"/produtos/{id}").status_code == 405
        head = client.head("/produtos")
        assert head.status_code == 200 and head.content == b""
    assert stored_names(db) == []


def test_acknowledged_writes_survive_a_restart_and_a_kill_9(
    database: str, tmp_path: Path, db: Database
) -> None:
    with serving(database, tmp_path) as (base, _), http_client(base) as client:
        create_via_form(client, db, "antes do reinício", "9,90")
    with serving(database, tmp_path) as (base, process), http_client(base) as client:
        assert "antes do reinício" in client.get("/produtos").text
        for n in range(20):
            create_via_form(client, db, f"p{n}", "9,90")
        stop(process, signal.SIGKILL)
    assert stored_names(db) == ["antes do reinício"] + [f"p{n}" for n in range(20)]
    with serving(database, tmp_path) as (base, _), http_client(base) as client:
        assert "p19" in client.get("/produtos").text


@pytest.mark.parametrize("workers", ["1", "2"])
def test_forty_simultaneous_creates_make_exactly_forty_products(
    database: str, tmp_path: Path, db: Database, workers: str
) -> None:
    with serving(database, tmp_path, "--workers", workers) as (base, _):

        def create(n: int, start: Callable[[], None]) -> int:
            with http_client(base, timeout=30) as client:
                start()
                return post_form(client, f"p{n}", "9,90").status_code

        statuses = all_at_once(40, create)
    assert statuses == [303] * 40
    assert sorted(stored_names(db)) == sorted(f"p{n}" for n in range(40))


def test_migrate_creates_the_schema_and_exits(empty_database: str) -> None:
    result = catalogo(empty_database, "migrate")
    assert result.returncode == 0, result.stderr
    db = Database(empty_database)
    assert stored_names(db) == []
    db.close()


@ONLY_SQLITE
def test_serve_migrates_a_new_sqlite_file_itself(empty_database: str, tmp_path: Path) -> None:
    with serving(empty_database, tmp_path) as (base, _):
        assert fetch("GET", f"{base}/readyz").status_code == 200


@ONLY_POSTGRESQL
@pytest.mark.parametrize("command", [["serve"], ["seed", "3"]])
def test_postgresql_is_never_migrated_unasked(empty_database: str, command: list[str]) -> None:
    result = catalogo(empty_database, *command)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "catalogo: the database schema is empty, this version of catalogo needs 0004: "
        "run `catalogo migrate` first"
    )
    db = Database(empty_database)
    assert db.tables() == []
    db.close()


@ONLY_POSTGRESQL
def test_serve_refuses_a_postgresql_schema_left_at_an_older_revision(
    database: str, db: Database
) -> None:
    db.execute("UPDATE alembic_version SET version_num = '0001'")
    result = catalogo(database, "serve")
    assert result.returncode == 1
    assert "at revision 0001, this version of catalogo needs 0004" in result.stderr


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
