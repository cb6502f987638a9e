"""An export at scale: does one worker stream the whole catalog as a file in constant memory,
and keep answering other requests while it does?

Starts `catalogo serve` (one worker) on a seeded SQLite file (or `--database-url`), downloads
`/produtos?formato=…` to its end, reading as fast as it comes, and meanwhile every 20 ms times
a fresh connection's GET /healthz. Reports the file (bytes, rows, seconds), the probes'
latencies during the export against the same probes before it, and the worker's resident
memory before the export and at its peak (VmHWM).

    .venv/bin/python bench/exports.py --database /tmp/s1000000.db --products 1000000 \\
        [--formato csv|xlsx] [--accept text/csv] [--database-url postgresql://…]

The file is made with `catalogo seed N` if it does not exist.
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench import CATALOGO, free_port, start, stop, wait_until_up, worker_rss_mb
from heavyreads import get


def resident_mb(main_pid: int) -> float:
    """The worker's resident memory now (VmRSS), in MB."""
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(main_pid) and "VmRSS" in fields:
            return int(fields["VmRSS"].split()[0]) / 1024
    return 0.0


async def download(port: int, path: str, accept: str) -> tuple[int, int, float]:
    """The file's bytes and lines, and how long it took, read as fast as it is sent."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**20)
    headers = f"Accept: {accept}\r\n" if accept else ""
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n".encode()
    )
    size = lines = 0
    while block := await reader.read(2**20):
        size += len(block)
        lines += block.count(b"\r\n")
    writer.close()
    return size, lines, time.monotonic() - started


async def probes(port: int, done: asyncio.Event, timings: list[float]) -> None:
    while not done.is_set():
        _, took = await get(port, "/healthz")
        timings.append(took * 1000)
        await asyncio.sleep(0.02)


def summary(timings: list[float]) -> str:
    ms = sorted(timings)
    return (
        f"{len(ms)} probes, p50 {statistics.median(ms):.1f} ms, "
        f"p99 {ms[max(0, int(len(ms) * 0.99) - 1)]:.1f} ms, max {ms[-1]:.1f} ms"
    )


async def idle(port: int) -> list[float]:
    """The probes' latencies for 3 s with nothing else going on, once the worker is warm."""
    for _ in range(3):
        await get(port, "/produtos")  # templates and plans loaded, not timed
    timings: list[float] = []
    quiet = asyncio.Event()
    asyncio.get_running_loop().call_later(3, quiet.set)
    await probes(port, quiet, timings)
    return timings


async def measure(port: int, main_pid: int, path: str, accept: str) -> None:
    idle_timings = await idle(port)
    before = resident_mb(main_pid)
    during: list[float] = []
    done = asyncio.Event()
    probing = asyncio.create_task(probes(port, done, during))
    size, lines, seconds = await download(port, path, accept)
    done.set()
    await probing
    print(f"export {path} ({accept or 'no Accept'}): {size / 1e6:.1f} MB ({lines:,} CRLF)")
    print(f"  in {seconds:.1f} s, {size / 1e6 / seconds:.1f} MB/s")
    print(f"  /healthz before: {summary(idle_timings)}")
    print(f"  /healthz during: {summary(during)}")
    print(f"  worker RSS before {before:.0f} MB, peak (VmHWM) {worker_rss_mb(main_pid):.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, help="a SQLite file")
    parser.add_argument("--database-url", help="instead of --database, e.g. PostgreSQL")
    parser.add_argument("--products", type=int, default=1_000_000)
    parser.add_argument("--formato", choices=("csv", "xlsx"), default="csv")
    parser.add_argument("--accept", default="", help="instead of --formato, e.g. text/csv")
    parser.add_argument("--q", default="", help="a search to export instead of everything")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{args.database.resolve()}"
    env = {**os.environ, "CATALOGO_DATABASE_URL": url}
    if args.database and not args.database.exists():
        subprocess.run([CATALOGO, "seed", str(args.products)], env=env, check=True)
    query = f"q={args.q}&" if args.q else ""
    path = (
        f"/produtos?{query}ordem=-id" if args.accept else f"/produtos?{query}formato={args.formato}"
    )
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        process = start([CATALOGO, "serve", "--port", str(port)], env, Path(folder) / "log", False)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/healthz", process)
            asyncio.run(measure(port, process.pid, path, args.accept))
        finally:
            stop(process)


if __name__ == "__main__":
    main()
