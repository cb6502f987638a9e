"""Schema migrations (Alembic), shipped inside the package so `catalogo migrate` needs no files.

A worker only compares its database with `HEAD`; the migrating itself is
storage/migrations/alembic_run.py's, imported by the processes that migrate.
"""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from catalogo.domain.errors import Unavailable
from catalogo.runtime.settings import Settings
from catalogo.storage import Storage

# The revision a current schema is at: what a worker and /readyz compare the database with.
# Written here rather than asked of Alembic, so that a worker never loads it; a test keeps it
# Alembic's head.
HEAD = "0017"


class SchemaOutdated(Unavailable):
    """The database's schema is not the one this code needs; the message says what to do."""


async def require_current(storage: Storage) -> None:
    """Refuses a database that is not at `HEAD`: PostgreSQL is migrated only on request."""
    current = await storage.schema_version()
    if current != HEAD:
        found = f"na revisão {current}" if current else "vazio"
        raise SchemaOutdated(
            f"o esquema do banco está {found}, esta versão do catalogo precisa da {HEAD}: "
            "rode `catalogo migrate` antes"
        )


def upgrade(settings: Settings, revision: str = "head") -> None:
    """Brings the schema to `revision` (tests name older ones). Not from inside an event loop:
    it runs one of its own."""
    from catalogo.storage.migrations import alembic_run

    alembic_run.upgrade(settings, revision)


def upgrade_apart(settings: Settings) -> None:
    """`upgrade` to the head in a process of its own: `catalogo serve` forks its workers from
    this one, and each would carry Alembic's memory."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child:
        child.submit(upgrade, settings).result()
