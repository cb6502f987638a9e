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

Every run also runs the same cases on the baseline, the fixed revision in bench/BASELINE
(`--no-baseline` leaves it out), and with `--against REV` on git revision REV too (the start of
the issue at hand): each gets a temporary worktree with a venv of its own, each size seeds a
file for it with its own `catalogo seed` (so each code reads a schema it knows), and its server
is pinned to core 0 beside this code's. Every round runs each case on every revision one after
the other, the order turning by round, so that noise hits them alike; the table reports this
code against each, and each against the ceiling. Small costs that each issue measured only
against the commit before it add up unseen; against one fixed revision they cannot.

With `--mode writes` every revision that has accounts runs with a user in its catalog, as a
shop that signs in does (CATALOGO_AUTH is then `writes`): reads stay anonymous, the form's
writes carry a session cookie (from POST /entrar) and the JSON ones a token (`catalogo tokens
criar`), and two more cases read signed in: the edit page with the session, the JSON product
with the token. A revision without accounts (the baseline) runs as it always did, anonymously.

Run through `bench/run`, which installs wrk and the project first.
"""

import argparse
import asyncio
import contextlib
import datetime
import http.client
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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LUA = HERE / "lua"
BASELINE_FILE = HERE / "BASELINE"
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
    # In --mode writes, the credentials it sends: "session" (a Cookie) or "token"; and what
    # its script takes before them (signed.lua: html or json).
    signed: str | None = None
    args: tuple[str, ...] = ()


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
    Case("create `POST /produtos` (303)", "create.lua", "/produtos", signed="session"),
    Case(
        "update `POST /produtos/{id}` `_method=PUT` (303)",
        "update.lua",
        "/",
        takes_highest_id=True,
        signed="session",
    ),
    Case("JSON product `GET /produtos/{id}`", "product_json.lua", "/", takes_highest_id=True),
    Case("JSON list, first page `GET /produtos`", "get_json.lua", "/produtos"),
    Case("JSON create `POST /produtos` (201)", "create_json.lua", "/produtos", signed="token"),
    Case(
        "edit page, 80% of reads on 5% of the products", "edit_mix.lua", "/", takes_highest_id=True
    ),
]
# --mode writes only: the same reads signed in (a revision without accounts reads anonymously).
SIGNED_CASES = [
    Case(
        "edit page, signed in (session)", "signed.lua", "/", True, signed="session", args=("html",)
    ),
    Case("JSON product, with a token", "signed.lua", "/", True, signed="token", args=("json",)),
]
USER, PASSWORD = "bench", "uma senha de benchmark longa"  # a throwaway catalog's user
Credentials = dict[str, tuple[str, str]]  # by Case.signed: the header's name and value


@dataclass
class Figures:
    rps: list[float] = field(default_factory=list)
    p50_ms: list[float] = field(default_factory=list)
    p99_ms: list[float] = field(default_factory=list)
    failures: int = 0


@dataclass
class OtherRun:
    """Every case on another revision, and its worker's peak memory."""

    results: dict[str, Figures]
    rss: float = 0.0


@dataclass
class SizeRun:
    results: dict[str, Figures]  # the ceiling and every case, on this code
    rss: float
    others: dict[str, OtherRun] = field(default_factory=dict)  # by the revision's name


@dataclass(frozen=True)
class Revision:
    """The code of another git revision, installed in a venv of its own."""

    name: str  # as the tables call it: "baseline d4f221f", or REV as given
    commit: str
    catalogo: str  # its venv's `catalogo`
    tree: Path


def git(*args: str) -> str:
    result = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bench: git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout.strip()


def this_code() -> str:
    """Which code this is: the commit, and whether src/ has uncommitted changes."""
    dirty = git("status", "--short", "--", "src")
    head = git("rev-parse", "--short=12", "HEAD")
    return f"{head} with uncommitted changes in src/" if dirty else head


def baseline_rev() -> str:
    """The fixed revision every run compares with: bench/BASELINE's first line that is not a
    comment."""
    lines = BASELINE_FILE.read_text().splitlines()
    return next(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def in_this_clone(rev: str) -> bool:
    """Whether the clone holds `rev` (a shallow one does not)."""
    check = ["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}^{{commit}}"]
    return subprocess.run(check, capture_output=True).returncode == 0


def resolve(rev: str) -> str:
    """The full commit of `rev`."""
    if rev.startswith("-"):  # git would read it as an option
        sys.exit(f"bench: --against takes a commit, a branch or a tag, not {rev!r}")
    return git("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}")


@contextlib.contextmanager
def installed(name: str, commit: str) -> Iterator[Revision]:
    """A detached worktree of `commit` with its own venv, removed afterwards."""
    tree = Path(tempfile.mkdtemp(prefix="catalogo-against-"))
    git("worktree", "add", "--detach", str(tree), commit)
    try:
        print(f"bench: installing {name} ({commit[:12]}) in {tree}", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", str(tree / ".venv")], check=True)
        python = tree / ".venv" / "bin" / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-c", "constraints.txt", "-e", "."],
            cwd=tree,
            check=True,
        )
        where = subprocess.run(
            [str(python), "-c", "import catalogo; print(catalogo.__file__)"],
            cwd="/",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not Path(where).resolve().is_relative_to(tree.resolve()):
            sys.exit(f"bench: {name}'s venv imports catalogo from {where}, not from {tree}")
        yield Revision(name, commit, str(python.with_name("catalogo")), tree)
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
            capture_output=True,
        )
        shutil.rmtree(tree, ignore_errors=True)


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
    command: list[str], env: dict[str, str], log: Path, pinned: bool = True, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    with log.open("ab") as output:
        return subprocess.Popen(
            [*(["taskset", "-c", SERVER_CORE] if pinned else []), *command],
            env=env,
            cwd=cwd,
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


def wrk(
    base: str,
    case: Case,
    seconds: int,
    highest_id: int,
    extra: Sequence[str] = (),
    credentials: Credentials | None = None,
) -> dict[str, int]:
    """`extra`: more arguments for the case's script, after the highest id; `credentials`, the
    ones its writes or signed reads send (none: anonymous)."""
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
    sent = (credentials or {}).get(case.signed or "", ())
    command += ["--", str(highest_id), *case.args, *extra, *sent]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    figures: dict[str, int] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def record(into: Figures, figures: dict[str, int]) -> None:
    into.rps.append(figures["requests"] / (figures["duration_us"] / 1e6))
    into.p50_ms.append(figures["p50_us"] / 1000)
    into.p99_ms.append(figures["p99_us"] / 1000)
    into.failures += figures["errors"] + figures["bad_status"]


def seeded(database_url: str, n: int, catalogo: str = CATALOGO) -> dict[str, str]:
    """The environment of a catalog of N products at `database_url`, migrated and seeded by
    the given `catalogo` (this code's by default), so that the schema is the one it knows."""
    env = {**os.environ, "CATALOGO_DATABASE_URL": database_url}
    subprocess.run([catalogo, "migrate"], env=env, check=True, capture_output=True)
    subprocess.run([catalogo, "seed", str(n)], env=env, check=True, capture_output=True)
    return env


def with_a_user(env: dict[str, str], catalogo: str) -> str | None:
    """Adds the benchmark's user (an editor) and a token of theirs to the catalog at `env`, with
    that revision's `catalogo`; returns the token, or None when the revision has no accounts."""
    if subprocess.run([catalogo, "usuarios", "--help"], capture_output=True).returncode != 0:
        return None
    create = [catalogo, "usuarios", "criar", USER, "--papel", "editor", "--senha-stdin"]
    subprocess.run(create, env=env, input=PASSWORD, text=True, check=True, capture_output=True)
    token = [catalogo, "tokens", "criar", "--usuario", USER, "--nome", USER]
    made = subprocess.run(token, env=env, text=True, check=True, capture_output=True)
    return made.stdout.strip()


def sign_in(base: str) -> str:
    """A session's secret, from POST /entrar as a browser signs in."""
    host, port = urllib.parse.urlsplit(base).netloc.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    body = urllib.parse.urlencode({"nome": USER, "senha": PASSWORD})
    connection.request(
        "POST", "/entrar", body, {"Content-Type": "application/x-www-form-urlencoded"}
    )
    response = connection.getresponse()
    response.read()
    connection.close()
    if response.status != 303:
        sys.exit(f"bench: signing in at {base} answered {response.status}")
    return response.headers["set-cookie"].split(";", 1)[0].split("=", 1)[1]


def credentials_of(token: str | None, base: str) -> Credentials:
    if token is None:
        return {}
    return {
        "session": ("Cookie", f"sessao={sign_in(base)}"),
        "token": ("Authorization", f"Bearer {token}"),
    }


def run_size(
    n: int,
    rounds: int,
    seconds: int,
    workdir: Path,
    others: Sequence[Revision] = (),
    signed: bool = False,
    only: Sequence[str] = (),
) -> SizeRun:
    """`signed`: --mode writes (see the module's docstring); `only`: the cases whose names hold
    one of these (all: none given)."""
    cases = [*CASES, *(SIGNED_CASES if signed else ())]
    cases = [c for c in cases if not only or any(part in c.name for part in only)]
    env = seeded(f"sqlite:///{workdir / f'catalogo-{n}.db'}", n)
    token = with_a_user(env, CATALOGO) if signed else None

    port = free_port()
    app = start([CATALOGO, "serve", "--port", str(port)], env, workdir / "catalogo.log")
    base = f"http://127.0.0.1:{port}"
    wait_until_up(f"{base}/produtos/1", app)
    with urllib.request.urlopen(f"{base}/produtos/1") as response:  # noqa: S310 - loopback
        edit_page_bytes = len(response.read())
    credentials = credentials_of(token, base)

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

    servers = [app, ceiling]
    run = SizeRun({case.name: Figures() for case in [CEILING, *cases]}, 0.0)
    # Who serves each case in a round: this code and every other revision, in turn, each with
    # the credentials it sends in --mode writes.
    sides: list[tuple[str, dict[str, Figures], Credentials]] = [(base, run.results, credentials)]
    try:
        for number, other in enumerate(others):
            url = f"sqlite:///{workdir / f'other{number}-{n}.db'}"
            other_port = free_port()
            command = [other.catalogo, "serve", "--port", str(other_port)]
            log = workdir / f"other{number}.log"
            other_env = seeded(url, n, other.catalogo)
            other_token = with_a_user(other_env, other.catalogo) if signed else None
            servers.append(start(command, other_env, log, cwd=other.tree))
            other_base = f"http://127.0.0.1:{other_port}"
            wait_until_up(f"{other_base}/produtos/1", servers[-1])
            run.others[other.name] = OtherRun({case.name: Figures() for case in cases})
            sides.append(
                (
                    other_base,
                    run.others[other.name].results,
                    credentials_of(other_token, other_base),
                )
            )
        warm_up = min(seconds, 2)
        wrk(ceiling_base, CEILING, warm_up, n)
        for case in cases:
            for side_base, _, sent in sides:
                wrk(side_base, case, warm_up, n, credentials=sent)
        for round_ in range(rounds):
            record(run.results[CEILING.name], wrk(ceiling_base, CEILING, seconds, n))
            turn = round_ % len(sides)  # who goes first: each in turn
            for case in cases:
                for side_base, into, sent in sides[turn:] + sides[:turn]:
                    record(into[case.name], wrk(side_base, case, seconds, n, credentials=sent))
        run.rss = worker_rss_mb(app.pid)
        for other, server in zip(others, servers[2:], strict=True):
            run.others[other.name].rss = worker_rss_mb(server.pid)
    finally:
        for server in servers:
            stop(server)
    return run


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
                lines.append(
                    f"| {n:,} | {labelled(case, sqlite, postgresql)} | {workers} "
                    f"| {lite:,.0f} | {pg:,.0f} | {statistics.median(postgresql.p50_ms):.2f} / "
                    f"{statistics.median(postgresql.p99_ms):.2f} | {pg / lite:.2f} |"
                )
    return lines


def labelled(case: Case, *runs: Figures) -> str:
    """The case's name, and how many requests failed on either side, if any did."""
    failed = sum(figures.failures for figures in runs)
    return f"{case.name} ({failed} failed)" if failed else case.name


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


def revisions_table(
    all_results: dict[int, SizeRun], others: Sequence[Revision], code: str
) -> list[str]:
    """Every case on this code and on each other revision, against each other and the ceiling."""
    names = [other.name for other in others]
    which = " and ".join(f"{other.name} ({other.commit[:12]})" for other in others)
    lines = [
        "",
        f"This code ({code}) against {which}: each one worker pinned to core {SERVER_CORE}, "
        "each on its own SQLite file seeded by its own `catalogo seed N`; in every round each "
        "case runs on each, one after the other, the first in turn.",
        "",
        "| N | case | this code req/s | "
        + " | ".join(f"{name} req/s" for name in names)
        + " | "
        + " | ".join(f"this code / {name}" for name in names)
        + " | this code / ceiling | "
        + " | ".join(f"{name} / ceiling" for name in names)
        + " |",
        "|---:|---|" + "---:|" * (2 + 3 * len(names)),
    ]
    for n, run in all_results.items():
        ceiling = statistics.median(run.results[CEILING.name].rps)
        for case in [*CASES, *SIGNED_CASES]:
            if case.name not in run.results:
                continue
            new = run.results[case.name]
            olds = [run.others[name].results[case.name] for name in names]
            new_rps = statistics.median(new.rps)
            old_rps = [statistics.median(old.rps) for old in olds]
            cells = [
                f"{new_rps:,.0f}",
                *(f"{rps:,.0f}" for rps in old_rps),
                *(f"{new_rps / rps:.2f}" for rps in old_rps),
                f"{new_rps / ceiling:.2f}",
                *(f"{rps / ceiling:.2f}" for rps in old_rps),
            ]
            lines.append(f"| {n:,} | {labelled(case, new, *olds)} | {' | '.join(cells)} |")
    lines += [
        "",
        "| N | worker peak RSS (MB), this code | " + " | ".join(names) + " |",
        "|---:|---:|" + "---:|" * len(names),
    ]
    for n, run in all_results.items():
        rss = " | ".join(f"{run.others[name].rss:.0f}" for name in names)
        lines.append(f"| {n:,} | {run.rss:.0f} | {rss} |")
    return lines


def table(
    all_results: dict[int, SizeRun],
    backends: dict[int, Compared],
    rounds: int,
    seconds: int,
    code: str,
    others: Sequence[Revision] = (),
    notes: Sequence[str] = (),
) -> str:
    lines = [
        f"# catalogo benchmark, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"Machine: {machine()}.",
        f"Median of {rounds} alternating rounds of {seconds:g} s per case.",
        *notes,
        "",
        "| N | case | req/s | p50 ms | p99 ms | ratio to ceiling |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for n, run in all_results.items():
        ceiling = statistics.median(run.results[CEILING.name].rps)
        for name, figures in run.results.items():
            rps = statistics.median(figures.rps)
            failed = f" ({figures.failures} failed)" if figures.failures else ""
            lines.append(
                f"| {n:,} | {name}{failed} | {rps:,.0f} | {statistics.median(figures.p50_ms):.2f} "
                f"| {statistics.median(figures.p99_ms):.2f} | {rps / ceiling:.2f} |"
            )
    lines += ["", "| N | worker peak RSS (MB) |", "|---:|---:|"]
    lines += [f"| {n:,} | {run.rss:.0f} |" for n, run in all_results.items()]
    sizes = sorted(all_results)
    if len(sizes) > 1 and all(CASES[2].name in all_results[s].results for s in sizes):
        deep = CASES[2].name
        small, large = (
            statistics.median(all_results[s].results[deep].rps) for s in (sizes[0], sizes[-1])
        )
        lines += [
            "",
            f"Deep list page at N = {sizes[-1]:,} vs N = {sizes[0]:,}: {large / small:.2f} times",
        ]
    if others:
        lines += revisions_table(all_results, others, code)
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
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="leave out the baseline (bench/BASELINE) that every run measures otherwise",
    )
    parser.add_argument(
        "--mode",
        choices=("off", "writes"),
        default="off",
        help="writes: a user in every catalog that can have one, form writes with a session, "
        "JSON writes with a token, and the reads signed in as two more cases",
    )
    parser.add_argument(
        "--only",
        metavar="PARTS",
        help="only the cases whose names hold one of these comma-separated parts "
        "(--only update,create), for a quick A/B of a change",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="also run every case on git revision REV, the issue's start (its own worktree and "
        "venv), alternating with this code and the baseline, and report this code / REV",
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.rounds, args.seconds = "300", 1, 1
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"bench: {tool} is missing (bench/run installs it)")

    sizes = [int(s) for s in args.sizes.split(",")]
    code = this_code()
    wanted: dict[str, str] = {}  # the other revisions, by name: their commits
    notes: list[str] = []
    if args.no_baseline:
        notes.append("The baseline (bench/BASELINE) is left out: --no-baseline.")
    elif args.smoke and not in_this_clone(baseline_rev()):
        notes.append(
            f"The baseline {baseline_rev()} is not in this clone (a shallow one?): the smoke run "
            "goes without it. A real run needs the history (git fetch --unshallow)."
        )
        print(f"bench: {notes[-1]}", file=sys.stderr)
    else:
        rev = baseline_rev()
        wanted[f"baseline {rev}"] = resolve(rev)
    if args.against:
        commit = resolve(args.against)
        if commit in wanted.values():
            notes.append(f"{args.against} is the baseline: one column for both.")
        else:
            wanted[args.against] = commit
    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="catalogo-bench-")))
        others = [stack.enter_context(installed(name, c)) for name, c in wanted.items()]
        signed = args.mode == "writes"
        only = [part for part in (args.only or "").split(",") if part]
        if only:
            notes.append(f"--only {args.only}: the other cases were not run.")
        if signed:
            notes.append(
                "--mode writes: a user in each catalog that can have one (the baseline cannot: "
                "it runs anonymously); form writes with a session, JSON writes with a token."
            )
        results = {
            n: run_size(n, args.rounds, args.seconds, workdir, others, signed, only) for n in sizes
        }
        backends: dict[int, Compared] = {}
        if not args.no_postgresql:
            backends = {
                n: run_backends(n, args.rounds, args.seconds, workdir, args.postgresql)
                for n in sizes
            }
    report = table(results, backends, args.rounds, args.seconds, code, others, notes)
    print(report)
    failures = sum(f.failures for r in results.values() for f in r.results.values())
    failures += sum(
        f.failures for r in results.values() for o in r.others.values() for f in o.results.values()
    )
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
