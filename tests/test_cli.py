"""The real `catalogo serve` process, driven over a socket: restarts, kill -9, two workers."""

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

CATALOGO = str(Path(sys.executable).with_name("catalogo"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(database: Path, *args: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Starts `catalogo serve` in its own process group and waits until it answers."""
    port = free_port()
    env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{database}"}
    log = database.with_name(f"serve-{port}.log")
    with log.open("wb") as output:
        process = subprocess.Popen(
            [CATALOGO, "serve", "--port", str(port), *args],
            env=env,
            start_new_session=True,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx2.get(f"{base}/produtos").status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"catalogo serve did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield base, process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def kill_9(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def criar(client: httpx2.Client, nome: str) -> httpx2.Response:
    return client.post("/produtos", data={"produto.nome": nome, "produto.preco": "9,90"})


def nomes(database: Path) -> list[str]:
    with sqlite3.connect(database) as connection:
        return [r[0] for r in connection.execute("SELECT nome FROM produtos ORDER BY id")]


def test_the_whole_flow_works_over_a_socket(tmp_path: Path) -> None:
    with serving(tmp_path / "c.db") as (base, _), httpx2.Client(base_url=base) as client:
        assert criar(client, "Caneta").status_code == 303
        lista = client.get("/produtos")
        assert "Produto «Caneta» adicionado." in lista.text
        assert client.get("/produtos/1").status_code == 200
        update = {"_method": "PUT", "produto.nome": "Lápis", "produto.preco": "1"}
        assert client.post("/produtos/1", data=update).status_code == 303
        assert client.post("/produtos/1", data={"_method": "DELETE"}).status_code == 303
        assert client.post("/produtos/1").status_code == 405
        head = client.head("/produtos")
        assert head.status_code == 200 and head.content == b""
    assert nomes(tmp_path / "c.db") == []


def test_acknowledged_writes_survive_a_restart_and_a_kill_9(tmp_path: Path) -> None:
    database = tmp_path / "c.db"
    with serving(database) as (base, _), httpx2.Client(base_url=base) as client:
        assert criar(client, "antes do reinício").status_code == 303
    with serving(database) as (base, process), httpx2.Client(base_url=base) as client:
        assert "antes do reinício" in client.get("/produtos").text
        for n in range(20):
            assert criar(client, f"p{n}").status_code == 303
        kill_9(process)
    assert nomes(database) == ["antes do reinício"] + [f"p{n}" for n in range(20)]
    with serving(database) as (base, _), httpx2.Client(base_url=base) as client:
        assert "p19" in client.get("/produtos").text


@pytest.mark.parametrize("workers", ["1", "2"])
def test_forty_simultaneous_creates_make_exactly_forty_products(
    tmp_path: Path, workers: str
) -> None:
    database = tmp_path / "c.db"
    statuses: list[int] = []
    start = threading.Barrier(40)

    def create(base: str, n: int) -> None:
        with httpx2.Client(base_url=base, timeout=30) as client:
            start.wait()
            statuses.append(criar(client, f"p{n}").status_code)

    with serving(database, "--workers", workers) as (base, _):
        threads = [threading.Thread(target=create, args=(base, n)) for n in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert statuses == [303] * 40
    assert sorted(nomes(database)) == sorted(f"p{n}" for n in range(40))


def test_migrate_creates_the_schema_and_exits(tmp_path: Path) -> None:
    env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{tmp_path / 'c.db'}"}
    subprocess.run([CATALOGO, "migrate"], env=env, check=True, timeout=60)
    assert nomes(tmp_path / "c.db") == []


def test_a_bad_setting_stops_the_command_with_a_message_naming_it(tmp_path: Path) -> None:
    env = {**os.environ, "CATALOGO_PAGE_SIZE": "lots"}
    result = subprocess.run(
        [CATALOGO, "migrate"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr.strip() == "catalogo: CATALOGO_PAGE_SIZE must be a whole number"


def test_seed_adds_that_many_valid_products(tmp_path: Path) -> None:
    env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{tmp_path / 'c.db'}"}
    result = subprocess.run(
        [CATALOGO, "seed", "25"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "catalogo: added 25 products"
    with sqlite3.connect(tmp_path / "c.db") as connection:
        rows = connection.execute("SELECT nome, preco_centavos FROM produtos").fetchall()
    assert len(rows) == 25
    assert all(nome and 0 < centavos <= 99_999_999_999 for nome, centavos in rows)
