"""Load benchmark: catalogo against the ceiling of its own stack, both on one pinned core;
then PostgreSQL against SQLite, case by case, with one worker and with two.

For each catalog size N it seeds a fresh SQLite file (`catalogo seed N`), starts the real
`catalogo serve` (one worker) and the ceiling (a bare ASGI app with a constant body of the
edit page's size, on the same server) pinned to core 0, and drives them with wrk pinned to
core 1, 64 connections. Rounds alternate the ceiling with every case, so that a noisy
neighbour hurts both alike; the table reports medians and the ratio to the ceiling of the same
run. Never compare absolute figures across runs: these machines are shared.

The PostgreSQL part seeds a SQLite file and a PostgreSQL database alike and runs the edit page
and create on each, alternating them within every round. One worker is pinned to core 0 as
above; two workers are not pinned. PostgreSQL's own processes are never pinned: they share the
machine's two cores with the workers and wrk, as they would on one machine.

Run through `bench/run`, which installs wrk and the project first.
"""

import argparse
import asyncio
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

HERE = Path(__file__).resolve().parent
LUA = HERE / "lua"
CATALOGO = str(Path(sys.executable).with_name("catalogo"))
GRANIAN = str(Path(sys.executable).with_name("granian"))
SERVER_CORE, LOAD_CORE = "0", "1"
CONNECTIONS = 64
DEEP_CURSOR = 101  # ?depois=101 shows ids 100..51: page ~N/50, deep in any catalog we seed


@dataclass(frozen=True)
class Case:
    name: str
    script: str
    path: str
    takes_highest_id: bool = False


CEILING = Case("ceiling (bare ASGI, same size as the edit page)", "get.lua", "/")
POSTGRESQL_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
CASES = [
    Case("edit page `GET /produtos/{id}`", "edit.lua", "/", takes_highest_id=True),
    Case("list, first page `GET /produtos`", "get.lua", "/produtos"),
    Case(
        f"list, deep page `GET /produtos?depois={DEEP_CURSOR}`",
        "get.lua",
        f"/produtos?depois={DEEP_CURSOR}",
    ),
    Case("new form `GET /produtos/novo`", "get.lua", "/produtos/novo"),
    Case("create `POST /produtos` (303)", "create.lua", "/produtos"),
    Case(
        "update `POST /produtos/{id}` `_method=PUT` (303)", "update.lua", "/", takes_highest_id=True
    ),
    Case("JSON product `GET /produtos/{id}`", "product_json.lua", "/", takes_highest_id=True),
    Case("JSON list, first page `GET /produtos`", "get_json.lua", "/produtos"),
    Case("JSON create `POST /produtos` (201)", "create_json.lua", "/produtos"),
]


@dataclass
class Figures:
    rps: list[float] = field(default_factory=list)
    p50_ms: list[float] = field(default_factory=list)
    p99_ms: list[float] = field(default_factory=list)
    failures: int = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"bench: server exited while starting ({url})")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"bench: server did not start ({url})")


def start(
    command: list[str], env: dict[str, str], log: Path, pinned: bool = True
) -> subprocess.Popen[bytes]:
    with log.open("ab") as output:
        return subprocess.Popen(
            [*(["taskset", "-c", SERVER_CORE] if pinned else []), *command],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def worker_rss_mb(main_pid: int) -> float:
    """Peak resident memory (VmHWM) of the server's worker processes, in MB."""
    peak = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if fields.get("PPid", "").strip() == str(main_pid) and "VmHWM" in fields:
            peak = max(peak, int(fields["VmHWM"].split()[0]))
    return peak / 1024


def wrk(base: str, case: Case, seconds: int, highest_id: int) -> dict[str, int]:
    command = [
        "taskset",
        "-c",
        LOAD_CORE,
        "wrk",
        "-t1",
        f"-c{CONNECTIONS}",
        f"-d{seconds}s",
        "--latency",
        "-s",
        str(LUA / case.script),
        base + case.path,
    ]
    if case.takes_highest_id:
        command += ["--", str(highest_id)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    figures: dict[str, int] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def record(into: Figures, figures: dict[str, int]) -> None:
    into.rps.append(figures["requests"] / (figures["duration_us"] / 1e6))
    into.p50_ms.append(figures["p50_us"] / 1000)
    into.p99_ms.append(figures["p99_us"] / 1000)
    into.failures += figures["errors"] + figures["bad_status"]


def seeded(database_url: str, n: int) -> dict[str, str]:
    """The environment of a catalog of N products at `database_url`, migrated and seeded."""
    env = {**os.environ, "CATALOGO_DATABASE_URL": database_url}
    subprocess.run([CATALOGO, "migrate"], env=env, check=True, capture_output=True)
    subprocess.run([CATALOGO, "seed", str(n)], env=env, check=True, capture_output=True)
    return env


def run_size(n: int, rounds: int, seconds: int, workdir: Path) -> tuple[dict[str, Figures], float]:
    env = seeded(f"sqlite:///{workdir / f'catalogo-{n}.db'}", n)

    port = free_port()
    app = start([CATALOGO, "serve", "--port", str(port)], env, workdir / "catalogo.log")
    base = f"http://127.0.0.1:{port}"
    wait_until_up(f"{base}/produtos/1", app)
    with urllib.request.urlopen(f"{base}/produtos/1") as response:  # noqa: S310 - loopback
        edit_page_bytes = len(response.read())

    ceiling_port = free_port()
    ceiling_env = {**env, "CEILING_BODY_BYTES": str(edit_page_bytes)}
    ceiling = start(
        [
            GRANIAN,
            "--interface",
            "asgi",
            "--workers",
            "1",
            "--port",
            str(ceiling_port),
            "--working-dir",
            str(HERE),
            "--log-level",
            "warning",
            "ceiling:app",
        ],
        ceiling_env,
        workdir / "ceiling.log",
    )
    ceiling_base = f"http://127.0.0.1:{ceiling_port}"
    wait_until_up(ceiling_base + "/", ceiling)

    results = {case.name: Figures() for case in [CEILING, *CASES]}
    try:
        warm_up = min(seconds, 2)
        wrk(ceiling_base, CEILING, warm_up, n)
        for case in CASES:
            wrk(base, case, warm_up, n)
        for _ in range(rounds):
            record(results[CEILING.name], wrk(ceiling_base, CEILING, seconds, n))
            for case in CASES:
                record(results[case.name], wrk(base, case, seconds, n))
        rss = worker_rss_mb(app.pid)
    finally:
        stop(app)
        stop(ceiling)
    return results, rss


BACKEND_CASES = [CASES[0], CASES[4]]  # the edit page and create
BACKENDS = ("sqlite", "postgresql")
WORKERS = (1, 2)
Compared = dict[tuple[str, str, int], Figures]  # (case, backend, workers)


def postgresql_database(admin_url: str, name: str, drop: bool = False) -> str:
    """Creates (or drops) database `name` on the server at `admin_url`; returns its URL."""

    async def run() -> None:
        connection = await asyncpg.connect(admin_url)
        try:
            await connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            if not drop:
                await connection.execute(f"CREATE DATABASE {name}")
        finally:
            await connection.close()

    try:
        asyncio.run(run())
    except (OSError, asyncpg.PostgresError) as erro:
        sys.exit(f"bench: PostgreSQL at {admin_url}: {erro} (or pass --no-postgresql)")
    return urllib.parse.urlsplit(admin_url)._replace(path=f"/{name}").geturl()


def run_backends(n: int, rounds: int, seconds: int, workdir: Path, admin_url: str) -> Compared:
    """The edit page and create on SQLite and on PostgreSQL, with one worker and with two."""
    name = f"catalogo_bench_{os.getpid()}"
    urls = {
        "sqlite": f"sqlite:///{workdir / f'compare-{n}.db'}",
        "postgresql": postgresql_database(admin_url, name),
    }
    processes: list[subprocess.Popen[bytes]] = []
    bases: dict[tuple[str, int], str] = {}
    try:
        for backend in BACKENDS:
            env = seeded(urls[backend], n)
            for workers in WORKERS:
                port = free_port()
                command = [CATALOGO, "serve", "--port", str(port), "--workers", str(workers)]
                log = workdir / f"{backend}-{workers}.log"
                processes.append(start(command, env, log, pinned=workers == 1))
                bases[backend, workers] = f"http://127.0.0.1:{port}"
                wait_until_up(f"{bases[backend, workers]}/produtos/1", processes[-1])
        results: Compared = {}
        for case in BACKEND_CASES:
            for (backend, workers), base in bases.items():
                wrk(base, case, min(seconds, 2), n)
                results[case.name, backend, workers] = Figures()
        for _ in range(rounds):
            for case in BACKEND_CASES:
                for (backend, workers), base in bases.items():
                    record(results[case.name, backend, workers], wrk(base, case, seconds, n))
    finally:
        for process in processes:
            stop(process)
        postgresql_database(admin_url, name, drop=True)
    return results


def backend_table(all_results: dict[int, Compared]) -> list[str]:
    lines = [
        "",
        "PostgreSQL against SQLite: one worker pinned to core 0, two workers unpinned; "
        "PostgreSQL's own processes unpinned.",
        "",
        "| N | case | workers | SQLite req/s | PostgreSQL req/s | PostgreSQL p50 / p99 ms "
        "| PostgreSQL / SQLite |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for n, results in all_results.items():
        for case in BACKEND_CASES:
            for workers in WORKERS:
                sqlite = results[case.name, "sqlite", workers]
                postgresql = results[case.name, "postgresql", workers]
                lite, pg = statistics.median(sqlite.rps), statistics.median(postgresql.rps)
                failed = sqlite.failures + postgresql.failures
                lines.append(
                    f"| {n:,} | {case.name}{f' ({failed} failed)' if failed else ''} | {workers} "
                    f"| {lite:,.0f} | {pg:,.0f} | {statistics.median(postgresql.p50_ms):.2f} / "
                    f"{statistics.median(postgresql.p99_ms):.2f} | {pg / lite:.2f} |"
                )
    return lines


def machine() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    wrk_version = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split()
    return (
        f"{platform.node()}: {os.cpu_count()} cores ({cpu}), {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, "
        f"wrk {wrk_version[1] if len(wrk_version) > 1 else '?'}; server on core {SERVER_CORE}, "
        f"wrk on core {LOAD_CORE}, {CONNECTIONS} connections"
    )


def table(
    all_results: dict[int, tuple[dict[str, Figures], float]],
    backends: dict[int, Compared],
    rounds: int,
    seconds: int,
) -> str:
    lines = [
        f"# catalogo benchmark, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"Machine: {machine()}.",
        f"Median of {rounds} alternating rounds of {seconds:g} s per case.",
        "",
        "| N | case | req/s | p50 ms | p99 ms | ratio to ceiling |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for n, (results, _) in all_results.items():
        ceiling = statistics.median(results[CEILING.name].rps)
        for name, figures in results.items():
            rps = statistics.median(figures.rps)
            failed = f" ({figures.failures} failed)" if figures.failures else ""
            lines.append(
                f"| {n:,} | {name}{failed} | {rps:,.0f} | {statistics.median(figures.p50_ms):.2f} "
                f"| {statistics.median(figures.p99_ms):.2f} | {rps / ceiling:.2f} |"
            )
    lines += ["", "| N | worker peak RSS (MB) |", "|---:|---:|"]
    lines += [f"| {n:,} | {rss:.0f} |" for n, (_, rss) in all_results.items()]
    sizes = sorted(all_results)
    if len(sizes) > 1:
        deep = CASES[2].name
        small, large = (
            statistics.median(all_results[s][0][deep].rps) for s in (sizes[0], sizes[-1])
        )
        lines += [
            "",
            f"Deep list page at N = {sizes[-1]:,} vs N = {sizes[0]:,}: {large / small:.2f} times",
        ]
    if backends:
        lines += backend_table(backends)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,1000000", help="catalog sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a few seconds on a small catalog, to prove the benchmark runs",
    )
    parser.add_argument("--output", type=Path, help="where to save the table")
    parser.add_argument(
        "--postgresql",
        default=POSTGRESQL_URL,
        help="a server where the benchmark may create a database (default %(default)s)",
    )
    parser.add_argument(
        "--no-postgresql", action="store_true", help="leave out the PostgreSQL comparison"
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.rounds, args.seconds = "300", 1, 1
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"bench: {tool} is missing (bench/run installs it)")

    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="catalogo-bench-") as workdir:
        results = {n: run_size(n, args.rounds, args.seconds, Path(workdir)) for n in sizes}
        backends: dict[int, Compared] = {}
        if not args.no_postgresql:
            backends = {
                n: run_backends(n, args.rounds, args.seconds, Path(workdir), args.postgresql)
                for n in sizes
            }
    report = table(results, backends, args.rounds, args.seconds)
    print(report)
    failures = sum(f.failures for r, _ in results.values() for f in r.values())
    failures += sum(f.failures for r in backends.values() for f in r.values())
    if not args.smoke:
        stamp = f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d-%H%M}"
        output = args.output or HERE / "results" / f"{stamp}-{platform.node()}.md"
        output.write_text(report)
        print(f"bench: saved {output}")
    if failures:
        sys.exit(f"bench: {failures} requests failed or got an error status")


if __name__ == "__main__":
    main()
