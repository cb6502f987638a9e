"""Schema migrations (Alembic), shipped inside the package so `catalogo migrate` needs no files.

A worker only compares its database with `HEAD`; the migrating itself is
storage/migrations/alembic_run.py's, imported by the processes that migrate.
"""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from catalogo.domain.errors import Unavailable
from catalogo.runtime.settings import Settings
from catalogo.storage import Schema, Storage

# The revision a current schema is at: what a worker and /readyz compare the database with.
# Written here rather than asked of Alembic, so that a worker never loads it; a test keeps it
# Alembic's head.
HEAD = "0018"


class SchemaOutdated(Unavailable):
    """The database's schema is not the one this code needs; the message says what to do."""


def behind(revision: str | None) -> bool:
    """Whether a database at `revision` needs migrating for this code (a newer one does not:
    this code may serve it, or refuse it, but never migrates it backwards)."""
    return revision is None or revision < HEAD


def serves(schema: Schema, head: str = HEAD) -> bool:
    """Whether code at revision `head` serves `schema`: its own revision, or a newer one that
    still lets code as old as `head` serve (its floor, written by every migrate): during a
    rolling upgrade, the instances not yet restarted keep serving."""
    if schema.revision is None:
        return False
    if schema.revision == head:
        return True
    return schema.revision > head and schema.floor is not None and schema.floor <= head


async def require_current(storage: Storage) -> None:
    """Refuses a database this code does not serve (`serves`): PostgreSQL is migrated only on
    request."""
    schema = await storage.schema()
    if not serves(schema):
        raise SchemaOutdated(schema_refused(schema))


def schema_refused(schema: Schema, head: str = HEAD) -> str:
    if schema.revision is None:
        return (
            f"o esquema do banco está vazio, esta versão do catalogo precisa da {head}: "
            "rode `catalogo migrate` antes"
        )
    if schema.revision < head:
        return (
            f"o esquema do banco está na revisão {schema.revision}, esta versão do catalogo "
            f"precisa da {head}: rode `catalogo migrate` antes"
        )
    return (
        f"o esquema do banco está na revisão {schema.revision}, que só código da revisão "
        f"{schema.floor} em diante serve, e este é da {head}: instale a versão nova"
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
