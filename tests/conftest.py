"""Fixtures: the real app over a real database per test, once on SQLite and once on
PostgreSQL, and a connection of the test's own to check what was stored.

`-m "not postgresql"` runs the SQLite half alone. Without a reachable PostgreSQL the other half
is skipped with a message saying how to enable it; under CI=true or CATALOGO_TEST_STRICT=1
every skip is a failure instead.
"""

import shutil
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from catalogo.storage import migrations
from tests.databases import STRICT, Database, PostgreSQLServer
from tests.helpers import LOCK_TIMEOUT_MS
from tests.processes import OwnPostgreSQL


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under CI every skip fails, whatever made it: `unavailable`, a marker, an xfail."""
    report = yield
    if STRICT and report.skipped:
        report.outcome = "failed"
    return report


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The browser suite runs in a pytest of its own (scripts/test does both): Playwright's
    sync API leaves an event loop running in its process, which every asyncio.run() of the
    other tests would refuse. A run that collected both leaves the browser tests out, and
    under CI=true or CATALOGO_TEST_STRICT=1 refuses to run, as leaving them out is a skip.
    So does a marker expression there (`-m "not postgresql"` would drop a whole database)."""
    if STRICT and config.option.markexpr:
        raise pytest.UsageError(
            f"-m {config.option.markexpr!r}: under CI nothing may be left out by marker"
        )
    browser = [item for item in items if "tests/e2e/" in item.nodeid]
    if browser and len(browser) < len(items):
        if STRICT:
            raise pytest.UsageError(
                "tests/e2e runs in a pytest of its own (scripts/test runs both); "
                "under CI nothing may be left out"
            )
        config.hook.pytest_deselected(items=browser)
        items[:] = [item for item in items if "tests/e2e/" not in item.nodeid]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.fixture(scope="session")
def postgresql() -> Iterator[PostgreSQLServer]:
    server = PostgreSQLServer.reachable()
    yield server
    server.drop_wiped()


@pytest.fixture(scope="session")
def own_postgresql() -> Iterator[OwnPostgreSQL]:
    """A PostgreSQL server that tests may stop and start; they leave it running."""
    server = OwnPostgreSQL()
    yield server
    server.remove()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A migrated database, copied for each test (`database`): migrating each time is slow."""
    url = f"sqlite:///{tmp_path_factory.mktemp('template') / 'catalogo.db'}"
    migrations.upgrade(Settings(database_url=url))
    return url


@pytest.fixture(scope="session")
def postgresql_template(postgresql: PostgreSQLServer) -> Iterator[str]:
    """The same on PostgreSQL, where the copies are made with CREATE DATABASE ... TEMPLATE."""
    url = postgresql.create()
    migrations.upgrade(Settings(database_url=url))
    yield url
    postgresql.drop(url)


@pytest.fixture
def empty_database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a database that has nothing in it yet, not even a schema."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'catalogo.db'}"
        return
    server: PostgreSQLServer = request.getfixturevalue("postgresql")
    url = server.create()
    yield url
    server.drop(url)


@pytest.fixture
def database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a migrated database of the test's own."""
    template: str = request.getfixturevalue(f"{backend}_template")
    if backend == "sqlite":
        path = tmp_path / "catalogo.db"
        shutil.copy(template.removeprefix("sqlite:///"), path)
        yield f"sqlite:///{path}"
        return
    server: PostgreSQLServer = request.getfixturevalue("postgresql")
    url = server.copy(template)
    yield url
    server.give_back(url, template)


@pytest.fixture
def settings(database: str) -> Settings:
    return Settings(
        database_url=database,
        page_size=3,
        lock_timeout_ms=LOCK_TIMEOUT_MS,
        allowed_hosts=("testserver",),  # the Host of Starlette's TestClient
        # tests/http/middleware/test_outermost.py reads it; elsewhere it would only be noise
        access_log=False,
        users_recheck_ms=0,  # a user a test adds takes effect at its next request
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), follow_redirects=False) as client:
        yield client


@pytest.fixture
def db(database: str, request: pytest.FixtureRequest) -> Iterator[Database]:
    """A second connection to the same database: what the app stored, seen from outside it.
    On PostgreSQL it is the connection the suite keeps to each copy, which also wipes it."""
    if database.startswith("postgresql:"):
        server: PostgreSQLServer = request.getfixturevalue("postgresql")
        yield server.session(database)
        return
    connection = Database(database)
    yield connection
    connection.close()
