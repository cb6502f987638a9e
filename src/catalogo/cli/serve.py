"""`catalogo serve`: whether it may listen where it was asked (protected mode), the limits it
sets for itself, the metrics beside it, and Granian, run through runtime/serving.py."""

import contextlib
import ipaddress
import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator

from catalogo.runtime.settings import Settings
from catalogo.storage import Storage


def may_listen(settings: Settings, host: str) -> Callable[[Storage], Awaitable[bool]]:
    async def check(storage: Storage) -> bool:
        if settings.auth is not None or _loopback(host):
            return True
        return await storage.users_exist()

    return check


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# How long a worker may take to finish what it began once told to stop: over the app's own
# worst case (about 20 s, a database that does not answer), and with DRAIN_S (in
# runtime/granian_adjusted.py) under systemd's TimeoutStopSec (30 s in deploy/).
STOP_TIMEOUT_S = 25


def serve(settings: Settings, host: str, port: int, workers: int) -> None:
    """Granian serves until SIGTERM (or Ctrl-C), however it comes (runtime/serving.py): serve stops
    accepting, lets every worker finish the requests it has begun (within STOP_TIMEOUT_S),
    then runs the app's shutdown; this returns when all are done.

    It holds CATALOGO_MAX_CONNECTIONS at once: Granian's default of 1,024 (its backlog) let
    idle uploads take every slot, and then nothing else was accepted. A slot is held only for a
    while: the guard ends a slow body, and the header timeout a connection that sends no
    request, even one that never sends a byte (hyper times those only in HTTP/1-only mode; its
    HTTP/2 detection waits forever). Each slot costs a file descriptor: the soft limit is
    raised towards the hard one to hold them all."""
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings

    from catalogo.runtime import serving

    serving.hold_stop_signals()  # before the metrics' process, which inherits it
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.max_connections + 1024  # the database, the logs, the listening socket
    if soft != resource.RLIM_INFINITY and soft < wanted:
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    with _metrics_exported(settings, port):
        if (reason := serving.unadjusted_because()) is not None:
            print(
                f"catalogo: aviso: {reason}; o Granian serve como ele é, e uma parada pode "
                "travar ou perder conexões (docs/operations.md)",
                flush=True,
            )
        print(f"catalogo: servindo http://{host}:{port}/produtos", flush=True)
        try:
            serving.serve(
                target="catalogo.http.app:create_app",
                address=host,
                port=port,
                workers=workers,
                interface=Interfaces.ASGI,
                http=HTTPModes.http1,
                http1_settings=HTTP1Settings(header_read_timeout=settings.header_timeout_ms),
                backlog=4096,  # the kernel keeps at most net.core.somaxconn of these
                backpressure=max(1, settings.max_connections // workers),
                workers_kill_timeout=STOP_TIMEOUT_S,
            )
        except serving.CannotListen as error:
            sys.exit(f"catalogo: {error}")


@contextlib.contextmanager
def _metrics_exported(settings: Settings, port: int) -> Iterator[None]:
    """With CATALOGO_METRICS_PORT set, the workers' metrics are served there (runtime/metrics.py)
    from a folder of this serve's own, removed when it stops."""
    if settings.metrics_port is None:
        yield
        return
    if settings.metrics_port == port:
        sys.exit("catalogo: CATALOGO_METRICS_PORT deve ser outra porta que a do site")
    folder = tempfile.mkdtemp(prefix="catalogo-metrics-")
    # Before prometheus_client is first imported: it chooses multiprocess mode on import, and
    # the workers forked from this process keep what was imported here.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    from catalogo.runtime import metrics

    try:
        with metrics.exporting(settings.metrics_host, settings.metrics_port, folder):
            print(
                f"catalogo: métricas em http://{settings.metrics_host}:{settings.metrics_port}"
                "/metrics",
                flush=True,
            )
            yield
    except metrics.CannotExport as error:
        sys.exit(f"catalogo: {error}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
