"""Migrations: a new database gets the schema; processes migrating it at once take turns."""

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from starlette.testclient import TestClient

from catalogo.domain.busca import Query, terms, trigrams
from catalogo.domain.historico import authorship
from catalogo.domain.produtos import Produto
from catalogo.runtime.settings import Settings
from catalogo.storage import migrations, open_storage
from catalogo.storage.paging import Cursor
from catalogo.storage.sqlite.busca import match
from tests.databases import Database


def test_a_new_database_gets_the_whole_schema(empty_database: str) -> None:
    migrations.upgrade(Settings(database_url=empty_database))
    db = Database(empty_database)
    search = ["produtos_busca"] if db.backend == "sqlite" else []  # PostgreSQL: an index
    assert db.tables() == [
        "alembic_version",
        *(["busca_pendente"] if db.backend == "sqlite" else []),
        "entregas",
        "eventos",
        "idempotency_keys",
        "importacao_linhas",
        "importacoes",
        "login_attempts",
        "produtos",
        *search,
        "schema_floor",
        "sessions",
        "tokens",
        "usuarios",
        "webhooks",
    ]
    assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("0018",)]
    db.close()


def test_the_head_a_worker_compares_with_is_alembics_newest_revision() -> None:
    config = Config()
    config.set_main_option("script_location", "catalogo.storage:migrations")
    assert ScriptDirectory.from_config(config).get_current_head() == migrations.HEAD


@pytest.mark.parametrize("backend", ["sqlite"])
def test_words_an_edit_kept_are_found_again_after_0010(empty_database: str) -> None:
    """Under 0008's triggers an edit that kept a word lost it from SQLite's search index;
    0010 fixes the trigger and makes the index again."""

    async def edit_and_find(words: str) -> list[int | None]:
        storage = await open_storage(Settings(database_url=empty_database))
        try:
            kept = Produto(nome="Maçã", descricao="caixa com 12", preco=Decimal(4))
            await storage.update(1, kept, None, authorship(None, "cli", ""))
            page = await storage.find(Query(terms(words)), Cursor(9))
            return [p.id for p in page.items]
        finally:
            await storage.close()

    settings = Settings(database_url=empty_database)
    migrations.upgrade(settings, "0009")
    db = Database(empty_database)
    db.execute(
        "INSERT INTO produtos (nome, descricao, preco_centavos, nome_chave, busca) "
        "VALUES ('Maçã', 'caixa com 6', 399, 'maca', 'maca' || char(10) || 'caixa com 6')"
    )
    # The edit as storage wrote it then (today's storage needs today's schema).
    db.execute("UPDATE produtos SET busca = 'maca' || char(10) || 'caixa com 12'")
    found = "SELECT -rowid FROM produtos_busca WHERE produtos_busca MATCH ?"
    assert db.execute(found, (match(trigrams("caixa")),)).fetchall() == []  # the fault
    migrations.upgrade(settings)
    assert asyncio.run(edit_and_find("caixa")) == [1]
    db.execute(
        "UPDATE produtos SET descricao = 'caixa com 24', "
        "busca = 'maca' || char(10) || 'caixa com 24'"
    )
    assert asyncio.run(edit_and_find("caixa com")) == [1]
    db.close()


def test_keys_answered_before_0003_keep_the_product_a_json_creation_made(
    empty_database: str,
) -> None:
    migrations.upgrade(Settings(database_url=empty_database), "0002")
    db = Database(empty_database)
    db.insert("Caneca", 1000)
    created_at = time.time()
    for key, status, body in [
        ("json", 201, b'{"id":1,"nome":"Caneca","descricao":"","preco":"10.00","versao":1}'),
        ("form", 303, b""),
    ]:
        db.execute(
            "INSERT INTO idempotency_keys (key, fingerprint, created_at, status, headers, body) "
            "VALUES (?, 'f', ?, ?, '[]', ?)",
            (key, created_at, status, body),
        )
    db.execute(
        "INSERT INTO idempotency_keys (key, fingerprint, created_at) VALUES ('running', 'f', ?)",
        (created_at,),
    )
    migrations.upgrade(Settings(database_url=empty_database))
    rows = db.execute("SELECT key, produto_id FROM idempotency_keys ORDER BY key").fetchall()
    assert [tuple(row) for row in rows] == [("json", 1), ("running", None)]
    db.close()


@pytest.mark.parametrize("backend", ["sqlite"])
def test_0015_checks_kinds_and_origins_without_building_a_table_per_row(
    empty_database: str,
) -> None:
    """SQLite builds a table of an IN list's values for every row it checks; 0015 writes the
    same checks as comparisons, which accept and refuse the same values, and its downgrade
    writes them back as they were."""
    settings = Settings(database_url=empty_database)
    migrations.upgrade(settings, "0014")
    path = settings.sqlite_path
    with sqlite3.connect(path) as before:
        schema_0014 = before.execute("SELECT name, sql FROM sqlite_schema ORDER BY name").fetchall()
    migrations.upgrade(settings)
    event = (
        "INSERT INTO eventos (produto_id, tipo, versao, origem, em) VALUES (1, ?, ?, ?, 0)",
        "INSERT INTO importacao_linhas (importacao_id, posicao, tipo, dados) "
        "VALUES ('i', ?, ?, '')",
    )
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO importacoes (id, arquivo, codificacao, criada_em, expira_em, estado, resumo) "
        "VALUES ('i', 'a.csv', 'utf-8', 0, 0, 'preparada', '')"
    )
    for sql, values in ((event[0], (1, "criado", "web")), (event[1], (1, "novo"))):
        plan = [row[1] for row in db.execute(f"EXPLAIN {sql}", values)]
        assert "OpenEphemeral" not in plan
    accepted = [(tipo, "web") for tipo in ("criado", "alterado", "removido", "restaurado")]
    accepted += [("criado", origem) for origem in ("api", "cli", "importacao", "lote")]
    for versao, (tipo, origem) in enumerate(accepted, 1):
        db.execute(event[0], (tipo, versao, origem))
    for posicao, tipo in enumerate(("novo", "alterado", "erro")):
        db.execute(event[1], (posicao, tipo))
    refusals: list[tuple[str, tuple[object, ...]]] = [
        (event[0], ("outro", 99, "web")),
        (event[0], ("criado", 99, "Web")),
        (event[0], ("criado", 99, None)),
        (event[1], (9, "removido")),
    ]
    for refused, wrong in refusals:
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(refused, wrong)
    db.commit()
    db.close()
    with sqlite3.connect(path) as after:
        assert after.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    _downgrade(empty_database, "0014")
    with sqlite3.connect(path) as again:
        schema = again.execute("SELECT name, sql FROM sqlite_schema ORDER BY name").fetchall()
    assert schema == schema_0014


def _downgrade(url: str, revision: str) -> None:
    """Alembic's downgrade of the SQLite file at `url` (catalogo only ever upgrades)."""
    path = Settings(database_url=url).sqlite_path
    engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(path))
    with engine.begin() as connection:
        config = Config()
        config.set_main_option("script_location", "catalogo.storage:migrations")
        config.attributes["connection"] = connection
        command.downgrade(config, revision)
    engine.dispose()


def test_migrating_again_changes_nothing(database: str, db: Database) -> None:
    db.insert("a", 1)
    migrations.upgrade(Settings(database_url=database))
    assert db.execute("SELECT count(*) FROM produtos").fetchone() == (1,)


def test_four_processes_migrating_one_new_database_at_once_all_succeed(
    empty_database: str,
) -> None:
    # Each process imports everything, says so, and waits on one pipe that all four read: when
    # the test closes its end, they all see the end of it at the same moment, and migrate.
    code = (
        "import sys; from catalogo.storage import migrations; "
        "from catalogo.runtime.settings import Settings; "
        "print('ready', flush=True); sys.stdin.read(); "
        f"migrations.upgrade(Settings(database_url={empty_database!r}))"
    )
    go_read, go_write = os.pipe()
    try:
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=go_read,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(4)
        ]
    finally:
        os.close(go_read)
    try:
        for process in processes:
            assert process.stdout is not None
            ready = process.stdout.readline()
            assert ready == b"ready\n", process.communicate(timeout=60)[1].decode()
    finally:
        os.close(go_write)  # go (or, after a failure, let the others end)
    for process in processes:
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr.decode()
    db = Database(empty_database)
    assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("0018",)]
    db.close()


@pytest.mark.parametrize(
    ("nome", "centavos"), [("", 1), ("a" * 201, 1), ("a", 0), ("a", 100_000_000_000)]
)
def test_the_schema_refuses_what_the_rules_refuse(db: Database, nome: str, centavos: int) -> None:
    with pytest.raises(db.IntegrityError):
        db.insert(nome, centavos)
    assert db.execute("SELECT count(*) FROM produtos").fetchone() == (0,)


def test_require_current_refuses_an_outdated_schema_naming_the_command(
    empty_database: str,
) -> None:
    async def check() -> None:
        storage = await open_storage(Settings(database_url=empty_database))
        try:
            await migrations.require_current(storage)
        finally:
            await storage.close()

    with pytest.raises(migrations.SchemaOutdated, match="rode `catalogo migrate`"):
        asyncio.run(check())
    migrations.upgrade(Settings(database_url=empty_database))
    asyncio.run(check())


def test_a_new_sqlite_file_in_a_new_folder_is_in_wal_mode_once_the_app_opens_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "novo" / "dir" / "catalogo.db"
    settings = Settings(database_url=f"sqlite:///{path}")
    migrations.upgrade(settings)

    async def open_and_close() -> None:
        await (await open_storage(settings)).close()

    asyncio.run(open_and_close())
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_migrations_and_the_app_open_the_same_file_whatever_its_name(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/e%20f.db")
    migrations.upgrade(settings)
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".db"] == ["e f.db"]


def _scripts() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", "catalogo.storage:migrations")
    return ScriptDirectory.from_config(config)


def test_every_migration_says_whether_code_of_the_revision_before_keeps_serving() -> None:
    said = {
        script.revision: script.module.OLDER_CODE_SERVES for script in _scripts().walk_revisions()
    }
    assert set(said) == {f"{n:04d}" for n in range(1, int(migrations.HEAD) + 1)}
    assert all(isinstance(serves, bool) for serves in said.values())
    assert said["0018"] is False  # code before it knows no floor


def test_migrate_records_the_oldest_code_that_serves_the_schema(
    database: str, db: Database
) -> None:
    assert db.execute("SELECT revision FROM schema_floor").fetchall() == [("0018",)]
    db.execute("DELETE FROM schema_floor")
    migrations.upgrade(Settings(database_url=database))  # a migrate with nothing to apply
    assert db.execute("SELECT revision FROM schema_floor").fetchall() == [("0018",)]


@pytest.mark.parametrize(
    ("revision", "floor", "ready"),
    [
        ("0018", "0018", True),  # its own
        ("0019", "0018", True),  # newer, and its migrations let 0018's code serve
        ("0019", "0019", False),  # newer, and 0019's code at least
        ("0017", None, False),  # older: migrate first
    ],
)
def test_an_instance_serves_a_newer_schema_only_when_its_floor_lets_it(
    client: TestClient, db: Database, revision: str, floor: str | None, ready: bool
) -> None:
    """As during a rolling upgrade: the database migrated by a newer release, this instance
    still on the code of 0018."""
    db.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    db.execute("DELETE FROM schema_floor")
    if floor is not None:
        db.execute("INSERT INTO schema_floor (revision) VALUES (?)", (floor,))
    answer = client.get("/readyz", headers={"accept": "application/json"})
    assert answer.status_code == (200 if ready else 503)
    if ready:
        assert answer.json() == {"status": "ready", "schema": revision}
    elif revision > migrations.HEAD:
        assert "instale a versão nova" in answer.json()["detail"]
    db.execute("UPDATE alembic_version SET version_num = ?", (migrations.HEAD,))
    db.execute("DELETE FROM schema_floor")
    db.execute("INSERT INTO schema_floor (revision) VALUES (?)", (migrations.HEAD,))
