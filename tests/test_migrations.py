"""Migrations: a new file gets the schema; workers starting together on it take turns."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from catalogo import migrations
from catalogo.settings import Settings


def tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return sorted(r[0] for r in rows)


def test_a_new_file_in_a_new_folder_gets_the_schema_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "novo" / "dir" / "catalogo.db"
    migrations.upgrade(Settings(database_url=f"sqlite:///{path}"))
    assert tables(path) == ["alembic_version", "idempotency_keys", "produtos", "sqlite_sequence"]
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_migrating_again_changes_nothing(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'c.db'}")
    migrations.upgrade(settings)
    with sqlite3.connect(settings.sqlite_path) as connection:
        connection.execute(
            "INSERT INTO produtos (nome, descricao, preco_centavos) VALUES ('a', '', 1)"
        )
    migrations.upgrade(settings)
    with sqlite3.connect(settings.sqlite_path) as connection:
        assert connection.execute("SELECT count(*) FROM produtos").fetchone() == (1,)


def test_four_processes_migrating_one_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    code = (
        "from catalogo import migrations; from catalogo.settings import Settings; "
        f"migrations.upgrade(Settings(database_url='sqlite:///{path}'))"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE) for _ in range(4)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr.decode()
    assert "produtos" in tables(path)


def test_the_schema_refuses_what_the_rules_refuse(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'c.db'}")
    migrations.upgrade(settings)
    with sqlite3.connect(settings.sqlite_path) as connection:
        for nome, centavos in (("", 1), ("a" * 201, 1), ("a", 0), ("a", 100_000_000_000)):
            with pytest.raises(sqlite3.IntegrityError):
                connection.execute(
                    "INSERT INTO produtos (nome, preco_centavos) VALUES (?, ?)", (nome, centavos)
                )


def test_migrations_and_the_app_open_the_same_file_whatever_its_name(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/e%20f.db")
    migrations.upgrade(settings)
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".db"] == ["e f.db"]
