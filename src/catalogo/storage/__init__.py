"""Where products are kept: one small interface, one folder per database, SQL only there.

`open_storage(settings)` opens the store that `CATALOGO_DATABASE_URL` names: a SQLite file
(`sqlite/`) or a PostgreSQL database (`postgres/`). Both answer alike, down to the byte: the
suite runs whole against each. A database that cannot answer now is `StorageUnavailable`.

The rooms: `port.py` is the interface (one Protocol per role, as the backends are mixed from
one class per role), `paging.py` the keyset pages every list is read in and `sql.py` the
statements both databases share, written once; `migrations/` the schema (Alembic); this module
opens the store the settings name. May import runtime and domain; nothing of services, http or
cli. A list's `Query` (domain/busca.py) is answered the same on both databases, each choosing
per query how to find it fast (docs/search.md).

Writes that name the versions they expect (`versions`) fail with `VersionConflict` when the
product has moved on, checked in the same statement as the write, so two editors can never
overwrite each other unseen. A write that would give a product a code another product
holds (live or removed, blind to case) fails with `CodigoTaken`, checked in its transaction.

An idempotency key remembers which product its first request created: the key is claimed first
(`claim_key`), then the product is inserted and the key marked with its id in one transaction
(`create_once`), so a retry never creates twice, even across a crash. A claim whose request
failed is released (`release_key`); one left behind (the database was gone, or the process died)
is taken over by a retry once its request can no longer finish it: on PostgreSQL, as soon as the
session that claimed it has ended; on SQLite, after ABANDONED_AFTER_SECONDS. Storage keeps data
only; the answers are services/idempotency.py's.

Accounts (domain/contas.py) keep users, sessions, tokens and sign-in attempts: every call that finds
who is asking reads the database, so that a revoked token or an ended session stops working at
once on every instance. A sign-in is counted before its password is checked (`reserve_sign_in`),
so that tries sent together meet the throttle one after another.
"""

from collections.abc import Callable
from dataclasses import dataclass

from catalogo.runtime.settings import Settings
from catalogo.storage.port import (
    ABANDONED_AFTER_SECONDS,
    KEY_TTL_SECONDS,
    TOKEN_USE_GRAIN_S,
    Importacao,
    ImportClosed,
    KeyClaim,
    NotRemoved,
    Removal,
    Saved,
    Schema,
    StagedLine,
    Storage,
    VersionConflict,
    Write,
    existing_claim,
)

__all__ = [
    "ABANDONED_AFTER_SECONDS",
    "KEY_TTL_SECONDS",
    "TOKEN_USE_GRAIN_S",
    "ImportClosed",
    "Importacao",
    "Instruments",
    "KeyClaim",
    "NotRemoved",
    "Removal",
    "Saved",
    "Schema",
    "StagedLine",
    "Storage",
    "VersionConflict",
    "Write",
    "existing_claim",
    "open_storage",
]


def unobserved(value: int) -> None:
    """An instrument no one reads: the default."""


@dataclass(frozen=True)
class Instruments:
    """What storage reports to the operators' metrics (runtime/metrics.py), as it happens; by
    default no one listens. Each is called with one number."""

    commit_size: Callable[[int], None] = unobserved  # SQLite: the writes of each group commit
    connections_taken: Callable[[int], None] = unobserved  # PostgreSQL: +1 taken, -1 returned


async def open_storage(settings: Settings, instruments: Instruments = Instruments()) -> Storage:
    """The store the settings name. PostgreSQL's pool connects on first use, not here."""
    if settings.database == "postgresql":
        from catalogo.storage.postgres.store import PostgresStorage

        return await PostgresStorage.open(
            settings.database_url,
            settings.database_pool_size,
            settings.lock_timeout_ms,
            instruments.connections_taken,
            settings.query_timeout_ms,
        )
    from catalogo.storage.sqlite.store import SQLiteStorage

    return SQLiteStorage(
        settings.sqlite_path,
        settings.lock_timeout_ms,
        instruments.commit_size,
        settings.query_timeout_ms,
    )
