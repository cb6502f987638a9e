"""Prometheus metrics from every worker of `catalogo serve`, on a port of their own.

Off unless CATALOGO_METRICS_PORT is set. Then `catalogo serve` (cli/main.py) gives
prometheus-client's multiprocess mode a folder of its own (PROMETHEUS_MULTIPROC_DIR, set
before anything imports the library, so the workers Granian forks inherit it), each worker
writes its numbers there (`Recorder`, made by the app factory), and `exporting()` runs a small
process that adds them up and answers GET /metrics on CATALOGO_METRICS_HOST (127.0.0.1
unless set): a listener of its own, which nothing sent to the site's port can reach. The
folder goes when serve stops. When metrics are off, none of this is imported.

    catalogo_http_request_duration_seconds{method,route,status}
        histogram of the seconds each answer took; its `_count` is the number of requests.
        `route` is the template of the route that answered (`/produtos/{id}`) or "unmatched";
        `method` one that HTTP defines, or "other": no client can make new series.
    catalogo_http_unavailable_total       answers 503 (database unavailable, /readyz not ready)
    catalogo_idempotent_replays_total     creations answered again for a repeated Idempotency-Key
    catalogo_database_connections_in_use  PostgreSQL: pool connections in use, all workers
    catalogo_sqlite_commit_writes         histogram of the writes in each SQLite group commit
    catalogo_webhook_deliveries_total{outcome}
        webhook deliveries: `entregue` (2xx), `falhou` (another status, no answer, a timeout),
        `recusado` (its name resolved to an address deliveries may not reach)
    catalogo_webhook_oldest_undelivered_seconds{webhook}
        per subscription that is on, the age of the oldest event it has yet to receive (0: none)
"""

import multiprocessing
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.multiprocess import MultiProcessCollector

from catalogo.domain.errors import CatalogoError

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
_REPLAYED = (b"idempotent-replayed", b"true")
# From a cached page (0.5 ms) to a database that does not answer (about 20 s, then 503).
_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
_WRITES = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # storage/sqlite/store.py's MAX_BATCH is 256


class Recorder:
    """One worker's metrics. Made by the app factory, in the worker, so that neither serve's
    main process nor the exporter leaves files of its own in the folder."""

    def __init__(self) -> None:
        self._duration = Histogram(
            "catalogo_http_request_duration_seconds",
            "Seconds taken by each answer, by method, route template and status.",
            ["method", "route", "status"],
            buckets=_SECONDS,
            registry=None,
        )
        self._unavailable = Counter(
            "catalogo_http_unavailable", "Answers 503: the database is unavailable.", registry=None
        )
        self._replays = Counter(
            "catalogo_idempotent_replays", "Creations answered again for a key.", registry=None
        )
        self._in_use = Gauge(
            "catalogo_database_connections_in_use",
            "PostgreSQL pool connections in use, all workers together.",
            multiprocess_mode="livesum",
            registry=None,
        )
        self._commit_writes = Histogram(
            "catalogo_sqlite_commit_writes",
            "Writes committed together by one SQLite group commit.",
            buckets=_WRITES,
            registry=None,
        )
        self._deliveries = Counter(
            "catalogo_webhook_deliveries",
            "Webhook deliveries, by outcome: entregue, falhou, recusado.",
            ["outcome"],
            registry=None,
        )
        self._oldest = Gauge(
            "catalogo_webhook_oldest_undelivered_seconds",
            "Per subscription that is on: the age of the oldest event not yet delivered.",
            ["webhook"],
            multiprocess_mode="max",
            registry=None,
        )
        self._series: dict[tuple[str, str | None, int], Histogram] = {}

    def observe(
        self,
        method: str,
        route: str | None,
        status: int,
        seconds: float,
        headers: Sequence[tuple[bytes, bytes]],
    ) -> None:
        """One answer (http/middleware/outermost.py calls this once it is sent)."""
        method = method if method in _METHODS else "other"
        series = self._series.get((method, route, status))
        if series is None:  # labels() takes a lock and builds a key: once per series
            series = self._duration.labels(method, route or "unmatched", str(status))
            self._series[method, route, status] = series
        series.observe(seconds)
        if status == 503:
            self._unavailable.inc()
        elif status in (201, 303) and _REPLAYED in headers:
            self._replays.inc()

    def commit_size(self, writes: int) -> None:
        self._commit_writes.observe(writes)

    def connections_taken(self, change: int) -> None:
        self._in_use.inc(change)

    def webhook_delivery(self, outcome: str) -> None:
        self._deliveries.labels(outcome).inc()

    def webhook_backlog(self, ages: dict[int, float]) -> None:
        """Seconds by subscription id."""
        for id, age in ages.items():
            self._oldest.labels(str(id)).set(age)


class CannotExport(CatalogoError):
    """The exporter could not listen where the settings say."""


@contextmanager
def exporting(host: str, port: int, folder: str) -> Iterator[None]:
    """Serves the sum of what the workers wrote in `folder`, for as long as the block runs.
    It is a process rather than a thread of serve's own because Granian forks its workers from
    serve's process, and a fork must not copy a thread that may hold a lock; this fork happens
    before serve has any thread."""
    context = multiprocessing.get_context("fork")
    answer, sender = context.Pipe(duplex=False)
    exporter = context.Process(
        target=_export, args=(host, port, folder, sender), name="catalogo-metrics", daemon=True
    )
    exporter.start()
    sender.close()
    try:
        refused = answer.recv() if answer.poll(30) else "it did not start within 30 s"
    except EOFError:
        refused = "it stopped while starting"
    try:
        if refused is not None:
            raise CannotExport(
                f"não consigo servir as métricas em {host}:{port} (CATALOGO_METRICS_HOST, "
                f"CATALOGO_METRICS_PORT): {refused}"
            )
        yield
    finally:
        exporter.kill()  # it takes no stop signal (below), and has nothing to finish
        exporter.join()


def _export(host: str, port: int, folder: str, ready: Connection) -> None:
    # A stop (systemd's SIGTERM, Ctrl-C) reaches the whole process group: serve stops this
    # process itself, once its workers are done, so that their last numbers are still read.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=folder)  # type: ignore[no-untyped-call]
    try:
        start_http_server(port, host, registry)
    except OSError as error:
        ready.send(str(error))
        return
    ready.send(None)
    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()  # returns when serve's process is gone, however it went
