"""Fixtures: the real app over a real SQLite file per test, raw SQL to check what was stored."""

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from catalogo import migrations
from catalogo.app import create_app
from catalogo.settings import Settings


@pytest.fixture(scope="session")
def migrated_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated database, copied for each test: migrating 200 times would be slow."""
    path = tmp_path_factory.mktemp("template") / "catalogo.db"
    migrations.upgrade(Settings(database_url=f"sqlite:///{path}"))
    return path


@pytest.fixture
def settings(tmp_path: Path, migrated_file: Path) -> Settings:
    path = tmp_path / "catalogo.db"
    shutil.copy(migrated_file, path)
    return Settings(database_url=f"sqlite:///{path}", page_size=3)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), follow_redirects=False) as client:
        yield client


@pytest.fixture
def db(settings: Settings) -> Iterator[sqlite3.Connection]:
    """A second connection to the same file: what the app stored, seen from outside it."""
    connection = sqlite3.connect(settings.sqlite_path, isolation_level=None)
    yield connection
    connection.close()
