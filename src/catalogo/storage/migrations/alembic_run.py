"""Alembic, run on a connection opened and locked here: loaded only by a process that
migrates (the CLI, or an app started on a SQLite file not yet current), as Alembic and
SQLAlchemy are some 30 MB of a process's memory (bench/results/history.md).

Every migration of one run happens in one transaction that first takes a lock, so that two
processes migrating one database at once take turns instead of both creating the tables:
SQLite's `BEGIN IMMEDIATE`, PostgreSQL's advisory lock. PostgreSQL is migrated through
asyncpg, the driver the app uses, so that both read the URL the same way.
"""

import asyncio
import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, create_engine, event, inspect, text
from sqlalchemy.ext.asyncio import create_async_engine

from catalogo.runtime.settings import Settings

MIGRATION_LOCK = 0x636174616C6F676F  # "catalogo": the advisory lock every migrate run takes


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", "catalogo.storage:migrations")
    return config


def newest() -> str | None:
    """The revision Alembic finds at the head of versions/."""
    return ScriptDirectory.from_config(_config()).get_current_head()


def upgrade(settings: Settings, revision: str) -> None:
    migrate = functools.partial(_migrate, revision=revision)
    if settings.database == "postgresql":
        asyncio.run(_upgrade_postgresql(settings.database_url, migrate))
    else:
        _upgrade_sqlite(settings.sqlite_path, migrate)


def _migrate(connection: Connection, revision: str) -> None:
    config = _config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)
    _record_floor(connection, ScriptDirectory.from_config(config))


def _record_floor(connection: Connection, scripts: ScriptDirectory) -> None:
    """Writes the oldest revision whose code serves the schema as it now is: the newest
    migration applied that older code cannot serve after (its `OLDER_CODE_SERVES`)."""
    if not inspect(connection).has_table("schema_floor"):
        return  # migrated to a revision before 0018 (the tests name older ones)
    current = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one()
    floor = next(
        script.revision
        for script in scripts.iterate_revisions(current, "base")
        if not script.module.OLDER_CODE_SERVES
    )
    connection.exec_driver_sql("DELETE FROM schema_floor")
    connection.execute(
        text("INSERT INTO schema_floor (revision) VALUES (:floor)"), {"floor": floor}
    )


def _upgrade_sqlite(path: str, migrate: Callable[[Connection], None]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(path, timeout=30))

    @event.listens_for(engine, "connect")
    def _leave_transactions_to_us(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _lock_for_writing(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    try:
        with engine.begin() as connection:
            migrate(connection)
    finally:
        engine.dispose()


async def _upgrade_postgresql(url: str, migrate: Callable[[Connection], None]) -> None:
    engine = create_async_engine(
        "postgresql+asyncpg://", async_creator=functools.partial(asyncpg.connect, url)
    )
    try:
        async with engine.begin() as connection:
            await connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            await connection.run_sync(migrate)
    finally:
        await engine.dispose()
