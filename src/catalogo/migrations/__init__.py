"""Schema migrations (Alembic), shipped inside the package so `catalogo migrate` needs no files.

SQLite runs every migration inside one `BEGIN IMMEDIATE` transaction: two workers starting at
once on a new file take turns instead of both creating the table.
"""

import sqlite3
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, event

from catalogo.settings import Settings


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", "catalogo:migrations")
    return config


def head() -> str | None:
    """The revision a current schema is at: what /readyz compares the database with."""
    return ScriptDirectory.from_config(_config()).get_current_head()


def upgrade(settings: Settings) -> None:
    Path(settings.sqlite_path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        "sqlite://", creator=lambda: sqlite3.connect(settings.sqlite_path, timeout=30)
    )

    @event.listens_for(engine, "connect")
    def _leave_transactions_to_us(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        dbapi_connection.execute("PRAGMA journal_mode=WAL")

    @event.listens_for(engine, "begin")
    def _lock_for_writing(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    try:
        config = _config()
        config.attributes["engine"] = engine
        command.upgrade(config, "head")
    finally:
        engine.dispose()
