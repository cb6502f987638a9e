"""Heavy reads: does one worker still answer `/healthz` and a product page while N clients send
it the most costly list requests there are (searches that read the whole catalog, exact
counts)?

Starts `catalogo serve` (one worker) on a seeded SQLite file, lets N clients send the heavy
requests below over and over for `--seconds`, and meanwhile every 50 ms times a fresh
connection's GET /healthz and GET of a product page. Reports both probes' latencies and what the
heavy requests got. `--src` runs another revision's code (the `src` folder of a worktree) for a
before/after in the same conditions.

    .venv/bin/python bench/heavyreads.py --database /tmp/s1000000.db --products 1000000 \\
        --clients 20 --seconds 20 [--src /tmp/base/src]

The file is made with `catalogo seed N` if it does not exist.
"""

import argparse
import asyncio
import collections
import itertools
import os
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from bench import CATALOGO, free_port, start, stop, wait_until_up

WORDS = (
    "pr ro od du ut to de ex xe em mp pl lo nº ge er ra ad do po or ca at ta al og go se ee ed kw"
)
EXACT = "Prefer: count=exact\r\n"


Heavy = tuple[str, str, str]  # what it is, its path, its extra headers


def heavy() -> "itertools.cycle[Heavy]":
    """The costly requests: each reads the whole catalog."""
    return itertools.cycle(
        [
            ("31 two-letter words, by price", f"/produtos?ordem=-preco&q={quote(WORDS)}", ""),
            ("exact count, whole catalog", "/produtos", EXACT),
            ("exact count, q=caneca by name", "/produtos?q=caneca&ordem=nome", EXACT),
            ("exact count, q=e by price", "/produtos?q=e&ordem=preco", EXACT),
            # a new range each time, so never a remembered count
            ("exact count, preco_max varied", "/produtos?preco_max={price}", EXACT),
        ]
    )


async def get(port: int, path: str, headers: str = "", json: bool = False) -> tuple[str, float]:
    """A fresh connection's GET, read to its end: its status (or what went wrong) and time."""
    started = time.monotonic()
    accept = "Accept: application/json\r\n" if json else ""
    try:
        async with asyncio.timeout(60):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            request = (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}{headers}"
                "Connection: close\r\n\r\n"
            )
            writer.write(request.encode())
            answer = await reader.read()
            writer.close()
            status = answer.split(b" ", 2)[1].decode()
    except (OSError, TimeoutError, IndexError) as error:
        status = type(error).__name__
    return status, time.monotonic() - started


async def client(
    port: int,
    until: float,
    requests: "itertools.cycle[Heavy]",
    seen: list[tuple[str, str, float]],
) -> None:
    while time.monotonic() < until:
        what, path, headers = next(requests)
        path = path.format(price=f"{random.randint(100, 99_999)},{random.randint(0, 99):02}")
        status, took = await get(port, path, headers, json=True)
        seen.append((what, status, took))


async def probe(
    port: int,
    until: float,
    products: int,
    timings: dict[str, list[float]],
    statuses: collections.Counter[str],
) -> None:
    while time.monotonic() < until:
        page = f"/produtos/{random.randint(1, products)}"
        for name, path in (("/healthz", "/healthz"), ("product page", page)):
            status, took = await get(port, path)
            statuses[f"{name} {status}"] += 1
            timings[name].append(took)
        await asyncio.sleep(0.05)


async def attack(port: int, clients: int, seconds: float, products: int) -> None:
    for path in ("/healthz", "/produtos/1"):  # not timed: the first page loads the templates
        await get(port, path)
    until = time.monotonic() + seconds
    seen: list[tuple[str, str, float]] = []
    timings: dict[str, list[float]] = collections.defaultdict(list)
    statuses: collections.Counter[str] = collections.Counter()
    requests = heavy()
    await asyncio.gather(
        probe(port, until, products, timings, statuses),
        *(client(port, until, requests, seen) for _ in range(clients)),
    )
    print(f"probes while {clients} clients sent heavy requests for {seconds:g} s:")
    for name, spent in timings.items():
        ms = sorted(t * 1000 for t in spent)
        print(
            f"  {name}: {len(ms)} answered, p50 {statistics.median(ms):.1f} ms, "
            f"p99 {ms[int(len(ms) * 0.99) - 1]:.1f} ms, max {ms[-1]:.1f} ms"
        )
    print("  probe statuses:", dict(statuses))
    by_request: dict[str, list[tuple[str, float]]] = collections.defaultdict(list)
    for what, status, took in seen:
        by_request[what].append((status, took))
    print("heavy requests:")
    for what, outcomes in by_request.items():
        times = sorted(t for _, t in outcomes)
        print(
            f"  {what}: {len(outcomes)} answered, "
            f"{dict(collections.Counter(s for s, _ in outcomes))}, "
            f"median {statistics.median(times):.2f} s, max {times[-1]:.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, required=True, help="a SQLite file")
    parser.add_argument("--products", type=int, default=200_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--src", type=Path, help="another revision's src folder")
    args = parser.parse_args()
    env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{args.database.resolve()}"}
    if args.src:
        env["PYTHONPATH"] = str(args.src.resolve())
    if not args.database.exists():
        subprocess.run([CATALOGO, "seed", str(args.products)], env=env, check=True)
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        log = Path(folder) / "serve.log"
        process = start([CATALOGO, "serve", "--port", str(port)], env, log, pinned=False)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/healthz", process)
            asyncio.run(attack(port, args.clients, args.seconds, args.products))
        finally:
            stop(process)


if __name__ == "__main__":
    main()
