"""The databases the suite runs on, and a connection of the tests' own to each.

Every test that touches storage runs twice: on a SQLite file and on a PostgreSQL database of
its own, made from a migrated template in a few milliseconds. The tests read what was stored
through `Database`, a plain DB-API connection (sqlite3, psycopg) outside the app, with SQL
written once: `?` placeholders, and `db.centavos` for a price in cents.
"""

import functools
import itertools
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import psycopg
import psycopg.errors
import pytest

POSTGRESQL_URL = os.environ.get(
    "CATALOGO_TEST_POSTGRESQL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
# Nothing may be skipped in CI: CI services set CI=true, and .ci/run also sets the explicit one.
STRICT = os.environ.get("CATALOGO_TEST_STRICT") == "1" or os.environ.get("CI") == "true"


def unavailable(what: str) -> NoReturn:
    """Skips a test that needs something this machine lacks, saying how to get it. Under
    CATALOGO_TEST_STRICT=1 or CI=true that is a failure instead: CI must run every test."""
    if STRICT:
        pytest.fail(f"{what} (CATALOGO_TEST_STRICT=1 or CI=true: nothing may be skipped)")
    pytest.skip(what)


class Database:
    """What the app stored, seen from outside it, through a connection of the test's own."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.backend = "sqlite" if url.startswith("sqlite:") else "postgresql"
        self._connection: Any
        self.IntegrityError: type[Exception]
        if self.backend == "sqlite":
            path = urllib.parse.unquote(url.removeprefix("sqlite:///"))
            self._connection = sqlite3.connect(path, isolation_level=None)
            self.centavos = "preco_centavos"
            self.IntegrityError = sqlite3.IntegrityError
        else:
            self._connection = psycopg.connect(url, autocommit=True)
            self.centavos = "(preco * 100)::bigint"
            self.IntegrityError = psycopg.IntegrityError

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Runs SQL written with `?` placeholders on either database; returns the cursor."""
        if self.backend == "postgresql":
            sql = sql.replace("%", "%%").replace("?", "%s")
        return self._connection.execute(sql, params)

    def insert(self, nome: str, centavos: int) -> None:
        """Stores a product behind the app's back, as any other program could."""
        if self.backend == "sqlite":
            sql = "INSERT INTO produtos (nome, preco_centavos) VALUES (?, ?)"
        else:
            sql = "INSERT INTO produtos (nome, preco) VALUES (?, ?::numeric / 100)"
        self.execute(sql, (nome, centavos))

    def wipe(self) -> None:
        """Empties every table but the schema's revision and floor, and restarts the ids: the
        database is then as a new copy of the migrated template. One transaction; cheaper than
        TRUNCATE for the few rows a test leaves."""
        if self.backend == "postgresql":
            self.execute(_WIPE)
            return
        kept = ("alembic_version", "schema_floor", "produtos_busca")
        tables = [t for t in self.tables() if t not in kept]
        self.execute("BEGIN")
        try:
            for table in [*tables, "sqlite_sequence"]:
                self.execute(f"DELETE FROM {table}")
            # The search index is contentless (FTS5 takes no DELETE) and the products' triggers
            # queued their texts' removal: both emptied at once.
            self.execute("INSERT INTO produtos_busca (produtos_busca) VALUES ('delete-all')")
            self.execute("DELETE FROM busca_pendente")
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def tables(self) -> list[str]:
        if self.backend == "sqlite":
            sql = (  # FTS5's own tables (produtos_busca_data, ...) are its business
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'produtos_busca_%'"
            )
        else:
            sql = "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        return sorted(row[0] for row in self.execute(sql))

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Another session holds the write lock: SQLite's whole file, PostgreSQL's table (reads
        go on, as they do under SQLite's lock in WAL mode)."""
        if self.backend == "sqlite":
            self.execute("BEGIN EXCLUSIVE")
        else:
            self.execute("BEGIN")
            self.execute("LOCK TABLE produtos, idempotency_keys IN EXCLUSIVE MODE")
        try:
            yield
        finally:
            self.execute("ROLLBACK")

    def writes(self) -> object:
        """A mark that changes whenever someone else writes to the database."""
        if self.backend == "sqlite":
            self.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return self.execute("PRAGMA data_version").fetchone()
        if "escritas" not in self.tables():
            self.execute("CREATE TABLE escritas (tabela text)")
            self.execute(
                "CREATE FUNCTION anotar() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN INSERT INTO escritas VALUES (TG_TABLE_NAME); RETURN NULL; END $$"
            )
            for tabela in ("produtos", "idempotency_keys", "alembic_version"):
                self.execute(
                    f"CREATE TRIGGER anotar AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
                    f"ON {tabela} FOR EACH STATEMENT EXECUTE FUNCTION anotar()"
                )
        return self.execute("SELECT count(*) FROM escritas").fetchone()

    def close(self) -> None:
        self._connection.close()


# Empties every table but alembic_version and restarts every sequence where it started, in one
# round trip and one transaction (setval, unlike TRUNCATE or ALTER SEQUENCE ... RESTART, makes
# no new files for the server to sync).
_WIPE = """
DO $$
DECLARE
    name text;
BEGIN
    -- Tables others refer to (usuarios) last, after the rows that refer to them.
    FOR name IN SELECT tablename FROM pg_tables
        WHERE schemaname = 'public' AND tablename NOT IN ('alembic_version', 'schema_floor')
        ORDER BY (SELECT count(*) FROM pg_constraint
            WHERE confrelid = format('%I', tablename)::regclass)
    LOOP
        EXECUTE format('DELETE FROM %I', name);
    END LOOP;
    PERFORM setval(seqrelid::regclass, seqstart, false) FROM pg_sequence
        JOIN pg_class ON pg_class.oid = seqrelid
        WHERE relnamespace = 'public'::regnamespace;
END
$$
"""

# What a test could change in a database besides its rows; a database that still matches its
# template here is wiped and given to the next test, which is 50 times faster than a new copy.
_SHAPE = """
SELECT (SELECT string_agg(version_num, ',') FROM alembic_version),
    (SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) FROM pg_class
        WHERE relnamespace = 'public'::regnamespace),
    (SELECT count(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace),
    (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal)
"""


class PostgreSQLServer:
    """A server the suite makes databases on, each dropped, or wiped for reuse, after its test."""

    _numbers = itertools.count()

    def __init__(self, url: str) -> None:
        self.url = url
        self._wiped: dict[str, list[str]] = {}  # template: databases made from it, now empty
        self._sessions: dict[str, Database] = {}  # a copy's URL: the suite's connection to it

    @classmethod
    def reachable(cls, url: str = POSTGRESQL_URL) -> "PostgreSQLServer":
        try:
            psycopg.connect(url, connect_timeout=5).close()
        except psycopg.OperationalError as erro:
            unavailable(
                f"PostgreSQL is not reachable at {url} ({str(erro).strip()}): start it, or point "
                "CATALOGO_TEST_POSTGRESQL at a server where this user may create databases, "
                "to run the PostgreSQL half of the suite"
            )
        return cls(url)

    def create(self, template: str | None = None, name: str | None = None) -> str:
        """A new database, empty or a copy of the database at URL `template`; returns its URL.
        Names carry the process id, so that several test processes share a server."""
        name = name or f"catalogo_test_{os.getpid()}_{next(self._numbers)}"
        copy = f" TEMPLATE {_name(template)}" if template else ""
        self._run(f"CREATE DATABASE {name}{copy}")
        return urllib.parse.urlsplit(self.url)._replace(path=f"/{name}").geturl()

    def copy(self, template: str) -> str:
        """A database as `template` is: a new copy, or one that a finished test gave back."""
        wiped = self._wiped.setdefault(template, [])
        return wiped.pop() if wiped else self.create(template)

    def session(self, url: str) -> Database:
        """The suite's own connection to a copy, open for as long as the copy lives: a test's
        `db`, and what wipes the copy afterwards (a connection costs more than most tests)."""
        if url not in self._sessions:
            self._sessions[url] = Database(url)
        return self._sessions[url]

    def give_back(self, url: str, template: str) -> None:
        """Wipes a copy of `template` for the next test, or drops it if its schema changed."""
        try:
            session = self.session(url)
            try:
                shape = session.execute(_SHAPE).fetchone()
            except psycopg.errors.UndefinedTable:  # the test dropped alembic_version
                shape = None
            if shape is not None and shape == self._shape(template):
                session.wipe()
                self._wiped[template].append(url)
                return
        except psycopg.Error:  # the test left the session unusable: start again from a copy
            pass
        self.drop(url)

    @functools.cache  # noqa: B019 - one server object per session
    def _shape(self, template: str) -> tuple[Any, ...] | None:
        with psycopg.connect(template) as connection:
            return connection.execute(_SHAPE).fetchone()

    def drop(self, url: str) -> None:
        session = self._sessions.pop(url, None)
        if session is not None:
            session.close()
        self._run(f"DROP DATABASE IF EXISTS {_name(url)} WITH (FORCE)")

    def drop_wiped(self) -> None:
        for url in itertools.chain.from_iterable(self._wiped.values()):
            self.drop(url)
        self._wiped.clear()

    def _run(self, sql: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(sql.encode())  # names made here, never from input


def _name(url: str) -> str:
    return urllib.parse.urlsplit(url).path.removeprefix("/")
