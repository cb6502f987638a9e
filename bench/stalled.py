"""Stalled uploads: can a fresh client still use the service while N connections each send the
headers and 10 bytes of a 100-byte body, then wait?

Starts `catalogo serve` on a seeded SQLite file, and with `--haproxy` the deployment recipe's
HAProxy (deploy/haproxy.cfg as it ships, every backend line pointing at that one instance) in
front of it. Opens N stalled uploads against the front, then once a second for `--seconds`
times a fresh connection's GET /healthz and GET of an edit page, and finally reports how the
server ended the stalled uploads. Costs the attacker's side nothing but sockets, as it would.

    .venv/bin/python bench/stalled.py --connections 2000 --seconds 15 [--haproxy]
"""

import argparse
import asyncio
import collections
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from bench import CATALOGO, ROOT, free_port, seeded, start, stop, wait_until_up

STALLED = (
    b"POST /produtos HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nproduto.no"
)


async def stalled(port: int, opened: list[int]) -> str:
    """One stalled upload; returns how it ended: the server's status line, or an error."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(STALLED)
        await writer.drain()
        opened.append(1)
        answer = await reader.read()
        writer.close()
        return answer.split(b"\r\n", 1)[0].decode() or "closed without an answer"
    except OSError as error:
        return type(error).__name__


async def probe(port: int, path: str) -> tuple[str, float]:
    """A fresh client's GET: its status (or what went wrong) and how long it took."""
    start = time.monotonic()
    try:
        async with asyncio.timeout(5):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            writer.write(request.encode())
            status = (await reader.readline()).split()[1].decode()
            writer.close()
    except (OSError, TimeoutError, IndexError) as error:
        status = type(error).__name__
    return status, time.monotonic() - start


async def attack(port: int, connections: int, seconds: int) -> None:
    opened: list[int] = []
    tasks = [asyncio.create_task(stalled(port, opened)) for _ in range(connections)]
    start = time.monotonic()
    while len(opened) < connections and time.monotonic() - start < 20:
        await asyncio.sleep(0.05)
    print(f"{len(opened)} stalled uploads open after {time.monotonic() - start:.2f} s")
    worst: dict[str, float] = collections.defaultdict(float)
    outcomes: collections.Counter[str] = collections.Counter()
    for _ in range(seconds):
        for path in ("/healthz", "/produtos/1"):
            status, took = await probe(port, path)
            outcomes[f"{path} {status}"] += 1
            worst[path] = max(worst[path], took)
        await asyncio.sleep(1)
    for path, took in worst.items():
        print(f"slowest fresh GET {path}: {took * 1000:.0f} ms")
    print("fresh GETs:", dict(outcomes))
    ended = [task.result() for task in tasks if task.done()]
    print(f"stalled uploads ended by the server: {len(ended)},", collections.Counter(ended))
    for task in tasks:
        task.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=15, help="how long to probe")
    parser.add_argument("--haproxy", action="store_true", help="through deploy/haproxy.cfg")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.connections + 512)), hard))
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "serve.log"
        env = seeded(f"sqlite:///{folder}/stalled.db", 3)
        app_port = free_port()
        command = [CATALOGO, "serve", "--port", str(app_port)]
        processes = [start(command, env, log, pinned=False)]
        port = app_port
        if args.haproxy:
            port = free_port()
            haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
            lb_env = {
                **env,
                "CATALOGO_LB_BIND": f"127.0.0.1:{port}",
                "CATALOGO_LB_STATUS": f"127.0.0.1:{free_port()}",
                "CATALOGO_LB_USER": os.environ.get("USER", "root"),
                "CATALOGO_LB_GROUP": os.environ.get("USER", "root"),
                **{f"CATALOGO_APP{n}": f"127.0.0.1:{app_port}" for n in (1, 2, 3)},
            }
            command = [haproxy, "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg")]
            processes.append(start(command, lb_env, Path(folder) / "haproxy.log", pinned=False))
        try:
            wait_until_up(f"http://127.0.0.1:{port}/healthz", processes[-1])
            print("through HAProxy (deploy/haproxy.cfg)" if args.haproxy else "catalogo serve")
            asyncio.run(attack(port, args.connections, args.seconds))
        finally:
            for process in processes:
                stop(process)
        errors = [
            line
            for line in log.read_text().splitlines()
            if "[ERROR]" in line or '"level":"error"' in line or "Traceback" in line
        ]
        print(f"ERROR lines in catalogo's log: {len(errors)}")


if __name__ == "__main__":
    main()
