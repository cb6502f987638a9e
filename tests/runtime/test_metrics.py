"""Prometheus metrics, scraped over HTTP from a real `catalogo serve --workers 2`: what each
worker counted, added up, on a port of their own."""

import socket
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.databases import Database
from tests.helpers import JSON, all_at_once, eventually
from tests.http.middleware.test_outermost import MADE_ID, access_lines, line_of
from tests.processes import (
    CATALOGO,
    catalogo,
    fetch,
    free_port,
    http_client,
    measured,
    start_serving,
    stop,
)

HEALTH = ("GET", "/healthz", "200")
IN_USE = ("catalogo_database_connections_in_use", frozenset[tuple[str, str]]())


def scrape(url: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample the exporter shows, by name and labels."""
    response = fetch("GET", url)
    assert response.status_code == 200
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def requests(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float],
    method: str,
    route: str,
    status: str,
) -> float:
    labels = frozenset({"method": method, "route": route, "status": status}.items())
    return samples.get(("catalogo_http_request_duration_seconds_count", labels), 0)


def test_both_workers_counts_add_up_on_the_metrics_port(
    database: str,
    db: Database,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    metrics_port = free_port()
    monkeypatch.setenv("CATALOGO_METRICS_PORT", str(metrics_port))
    monkeypatch.setenv("CATALOGO_LOCK_TIMEOUT_MS", "1500")
    log = tmp_path / "serve.log"
    base, process = start_serving(database, log, "--workers", "2")
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    try:
        # New connections, twenty at a time, until each worker has answered some: the ids a
        # worker makes start with a prefix of its own.
        health = 0
        while len({line["request_id"].split("-")[0] for line in access_lines(log)}) < 2:
            assert health < 400, "one worker answered every request"

            def probe(n: int, start: Callable[[], None]) -> int:
                start()
                return fetch("GET", f"{base}/healthz").status_code

            assert all_at_once(20, probe) == [200] * 20
            health += 20
        with http_client(base) as client:
            key = {"idempotency-key": "pedido-1", **JSON}
            first = client.post("/produtos", json={"nome": "Caneca", "preco": "1"}, headers=key)
            again = client.post("/produtos", json={"nome": "Caneca", "preco": "1"}, headers=key)
            assert again.headers["idempotent-replayed"] == "true"
            assert client.request("FOO", "/produtos").status_code == 405
            assert client.get("/nada").status_code == 404
            assert client.get("/metrics").status_code == 404  # not through the site's port
            with db.locked(), ThreadPoolExecutor(1) as waiting:
                blocked = waiting.submit(client.post, "/produtos", json={"nome": "X", "preco": "1"})
                if database.startswith("postgresql"):  # its connection is in use meanwhile
                    eventually(lambda: scrape(metrics)[IN_USE] == 1)
                unavailable = blocked.result()
            assert unavailable.status_code == 503
        assert (first.status_code, again.status_code) == (201, 201)
        line_of(log, unavailable.headers["x-request-id"])  # the last line is written
        answered = access_lines(log)  # start_serving's own requests too
        assert all(MADE_ID.fullmatch(line["request_id"]) for line in answered)

        samples = scrape(metrics)
        assert requests(samples, *HEALTH) == health
        assert requests(samples, "POST", "/produtos", "201") == 2
        assert requests(samples, "other", "/produtos", "405") == 1
        assert requests(samples, "GET", "unmatched", "404") == 2  # /nada, /metrics
        assert requests(samples, "POST", "/produtos", "503") == 1
        total = sum(
            value
            for (name, _), value in samples.items()
            if name == "catalogo_http_request_duration_seconds_count"
        )
        assert total == len(answered)
        assert samples["catalogo_idempotent_replays_total", frozenset()] == 1
        assert samples["catalogo_http_unavailable_total", frozenset()] == 1
        if database.startswith("sqlite"):
            # Writes: the key's claim and the product with its key, each committed.
            assert samples["catalogo_sqlite_commit_writes_count", frozenset()] >= 2
        else:
            # Every connection taken was given back (and counted both times).
            assert samples[IN_USE] == 0
            assert samples["catalogo_sqlite_commit_writes_count", frozenset()] == 0
    finally:
        stop(process)
    with pytest.raises(httpx2.TransportError):
        fetch("GET", metrics)  # the exporter stops with serve


def test_a_metrics_port_that_is_taken_stops_serve_with_a_message(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv("CATALOGO_METRICS_PORT", str(taken.getsockname()[1]))
        result = catalogo(database, "serve", "--port", str(free_port()))
    assert result.returncode == 1
    assert result.stderr.startswith("catalogo: não consigo servir as métricas em 127.0.0.1:")
    assert "CATALOGO_METRICS_PORT" in result.stderr and "Traceback" not in result.stderr


def test_the_metrics_port_cannot_be_the_sites(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CATALOGO_METRICS_PORT", "8123")
    result = catalogo(database, "serve", "--port", "8123")
    assert result.returncode == 1
    assert "CATALOGO_METRICS_PORT deve ser outra porta que a do site" in result.stderr


def test_a_bad_metrics_port_stops_serve_naming_the_variable() -> None:
    env = measured({"CATALOGO_METRICS_PORT": "70000", "PATH": "/usr/bin:/bin"})
    result = subprocess.run(
        [CATALOGO, "serve"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr.strip().startswith(
        "catalogo: CATALOGO_METRICS_PORT deve ser o número de uma porta"
    )
