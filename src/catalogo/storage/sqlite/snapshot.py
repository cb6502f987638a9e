"""The SQLite file as a whole: an online backup (SQLite's backup API, which copies the pages a
reader sees, never a file half-written under WAL), and every table read in one transaction,
as `catalogo copiar` moves them to PostgreSQL.

Both see the catalog as it was at one instant: every write committed before it, none after,
while the service goes on writing meanwhile.
"""

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from catalogo.domain.errors import CatalogoError

CHUNK = 5_000  # rows read at a time


class BackupRefused(CatalogoError):
    """The backup cannot be written where it was asked; the message says why."""


def backup(source: str, target: str) -> dict[str, int]:
    """Copies the file `source` to `target`, a new file, while other processes may be writing
    to it; returns the backup's row count per table. The copy is written beside `target` and
    renamed onto it only once whole, synced and checked (`PRAGMA integrity_check`), so a
    backup interrupted leaves no file that looks whole."""
    destination = Path(target)
    if not target.strip():
        raise BackupRefused("diga onde gravar o backup: catalogo backup ARQUIVO")
    if destination.exists():
        raise BackupRefused(f"{target} já existe: escolha outro nome, ou apague-o antes")
    if not destination.parent.is_dir():
        raise BackupRefused(f"a pasta {destination.parent} não existe")
    handle, partial = tempfile.mkstemp(
        prefix=f".{destination.name}-", suffix=".parcial", dir=destination.parent
    )
    os.close(handle)
    try:
        with _closing(_read_only(source)) as reader, _closing(sqlite3.connect(partial)) as copy:
            reader.backup(copy)  # one step: one read transaction, one instant of the catalog
            copy.execute("PRAGMA journal_mode = DELETE")  # one file, whole, to keep or move
            problems = [row[0] for row in copy.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise BackupRefused("a cópia não passou no PRAGMA integrity_check: " + problems[0])
            counts = {table: _count(copy, table) for table in _tables(copy)}
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        _name_without_replacing(partial, destination)
        directory = os.open(destination.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except FileExistsError:
        raise BackupRefused(f"{target} já existe: escolha outro nome, ou apague-o antes") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    return counts


def _name_without_replacing(partial: str, destination: Path) -> None:
    """Gives the finished copy its name, failing (FileExistsError) rather than replacing a
    file that appeared there meanwhile: a hard link, or where the file system has none, a
    rename after a last look."""
    try:
        os.link(partial, destination)
    except FileExistsError:
        raise
    except OSError:
        if destination.exists():
            raise FileExistsError(destination) from None
        os.replace(partial, destination)


class Snapshot:
    """Every table of the file, read in one transaction: one instant of the catalog."""

    def __init__(self, path: str) -> None:
        self._connection = _read_only(path)
        self._connection.execute("BEGIN")
        # The transaction's snapshot begins at its first read, here, for every table after.
        self.tables = {
            table: _columns(self._connection, table) for table in _tables(self._connection)
        }

    def rows(self, table: str, columns: list[str]) -> Iterator[list[tuple[Any, ...]]]:
        """`table`'s rows, `columns` of each, in chunks of CHUNK."""
        names = ", ".join(f'"{column}"' for column in columns)
        cursor = self._connection.execute(f'SELECT {names} FROM "{table}"')
        while chunk := cursor.fetchmany(CHUNK):
            yield chunk

    def close(self) -> None:
        self._connection.close()


def _read_only(path: str) -> sqlite3.Connection:
    """A connection that only reads (not `mode=ro`: under WAL that needs the -shm file, which
    SQLite removes when the last connection closes)."""
    if not Path(path).is_file():
        raise BackupRefused(f"{path} não existe: não há catálogo para copiar")
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA busy_timeout = 5000")
    return connection


class _closing:
    """Closes a connection at the end of a `with`, which sqlite3's own does not."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        return self.connection

    def __exit__(self, *_: object) -> None:
        self.connection.close()


def _tables(connection: sqlite3.Connection) -> list[str]:
    """The file's tables, its search index's among them; not SQLite's own (sqlite_sequence)."""
    return [
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]


def _columns(connection: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]


def _count(connection: sqlite3.Connection, table: str) -> int:
    return int(connection.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
