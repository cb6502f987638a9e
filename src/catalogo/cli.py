"""`catalogo serve`, `migrate` and `seed`: the only entry point, the same locally and in CI.

SQLite migrates itself before any command, so that one command starts a new catalog.
PostgreSQL is migrated only by `catalogo migrate`, run once per deployment; `serve` and `seed`
refuse a schema that is not current, since several instances must never race to change it.
"""

import argparse
import asyncio
import contextlib
import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Iterator

from catalogo import migrations, produtos
from catalogo.settings import Settings, SettingsError
from catalogo.storage import StorageUnavailable, open_storage


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="catalogo",
        description="Product catalog service. The store is chosen by CATALOGO_DATABASE_URL "
        "(default sqlite:///./catalogo.db).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="serve HTTP (Granian); SQLite is migrated first, PostgreSQL must be current"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument("--workers", type=int, default=1, help="worker processes")
    commands.add_parser("migrate", help="bring the database schema up to date, then exit")
    seed = commands.add_parser("seed", help="add N sample products (demos, benchmarks)")
    seed.add_argument("count", type=int, help="how many products to add")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        sys.exit(f"catalogo: {error}")
    try:
        if args.command == "migrate" or settings.database == "sqlite":
            migrations.upgrade(settings)  # once here, so that workers start on a current schema
        if args.command == "serve":
            asyncio.run(_check(settings))
            _serve(settings, args.host, args.port, args.workers)
        elif args.command == "seed":
            print(f"catalogo: added {asyncio.run(_seed(settings, args.count))} products")
    except migrations.SchemaOutdated as error:
        sys.exit(f"catalogo: {error}")
    except (StorageUnavailable, OSError) as error:
        sys.exit(f"catalogo: the database does not answer ({error})")


async def _check(settings: Settings) -> None:
    storage = await open_storage(settings)
    try:
        await migrations.require_current(storage)
    finally:
        await storage.close()


async def _seed(settings: Settings, count: int) -> int:
    storage = await open_storage(settings)
    try:
        await migrations.require_current(storage)
        return await storage.create_many(produtos.exemplos(count))
    finally:
        await storage.close()


# How long a worker may take to finish what it began once told to stop: over the app's own
# worst case (about 20 s, a database that does not answer), under systemd's TimeoutStopSec (30
# s in deploy/). It also ends a worker that misses the signal: Granian's workers lose a
# SIGTERM that comes while they are still starting, and would then be waited for forever.
STOP_TIMEOUT_S = 25


def _serve(settings: Settings, host: str, port: int, workers: int) -> None:
    """Granian serves until SIGTERM (or Ctrl-C): it stops accepting, lets every worker finish
    the requests it has begun (within STOP_TIMEOUT_S), then runs the app's shutdown; this
    returns when all are done.

    It holds CATALOGO_MAX_CONNECTIONS at once: Granian's default of 1,024 (its backlog) let
    idle uploads take every slot, and then nothing else was accepted. A slot is held only for a
    while: the guard ends a slow body, and the header timeout a connection that sends no
    request, even one that never sends a byte (hyper times those only in HTTP/1-only mode; its
    HTTP/2 detection waits forever). Each slot costs a file descriptor: the soft limit is
    raised towards the hard one to hold them all."""
    from granian import Granian
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.max_connections + 1024  # the database, the logs, the listening socket
    if soft != resource.RLIM_INFINITY and soft < wanted:
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    with _metrics_exported(settings, port):
        print(f"catalogo: serving http://{host}:{port}/produtos", flush=True)
        Granian(
            "catalogo.app:create_app",
            factory=True,
            address=host,
            port=port,
            workers=workers,
            interface=Interfaces.ASGI,
            http=HTTPModes.http1,
            http1_settings=HTTP1Settings(header_read_timeout=settings.header_timeout_ms),
            backlog=4096,  # the kernel keeps at most net.core.somaxconn of these
            backpressure=max(1, settings.max_connections // workers),
            workers_kill_timeout=STOP_TIMEOUT_S,
        ).serve()


@contextlib.contextmanager
def _metrics_exported(settings: Settings, port: int) -> Iterator[None]:
    """With CATALOGO_METRICS_PORT set, the workers' metrics are served there (metrics.py) from a
    folder of this serve's own, removed when it stops."""
    if settings.metrics_port is None:
        yield
        return
    if settings.metrics_port == port:
        sys.exit("catalogo: CATALOGO_METRICS_PORT must be another port than the site's")
    folder = tempfile.mkdtemp(prefix="catalogo-metrics-")
    # Before prometheus_client is first imported: it chooses multiprocess mode on import, and
    # the workers forked from this process keep what was imported here.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    from catalogo import metrics

    try:
        with metrics.exporting(settings.metrics_host, settings.metrics_port, folder):
            print(
                f"catalogo: metrics on http://{settings.metrics_host}:{settings.metrics_port}"
                "/metrics",
                flush=True,
            )
            yield
    except metrics.CannotExport as error:
        sys.exit(f"catalogo: {error}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
