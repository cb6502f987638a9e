"""catalogo against the same spec written in Flask, FastAPI and json-server, on the same core.

    bench/rivals                        # N = 10,000, 3 rounds of 5 s (about 10 minutes)
    bench/rivals --rounds 5 --seconds 8 --output bench/results/rivals.md

Each rival is what a developer would write from the spec with that tool's tutorial
(bench/rival_apps/: Flask on gunicorn with one sync worker, FastAPI on uvicorn with uvloop and
httptools, both over the standard library's sqlite3 in WAL mode with `synchronous=FULL`, as
durable as catalogo; json-server 0.17 over a db.json, JSON only: it has no pages or forms).
They are installed in a venv and a node_modules of their own in a temporary directory, at the
versions bench/rival_apps/requirements.txt pins, and seeded with the same N products as catalogo
(`catalogo.produtos.samples`).

catalogo runs as a fresh install does: anonymous, the access log on, one Granian worker.
Every server is pinned to core 0 and wrk to core 1 with 64 connections, the cases of bench.py
with the same wrk scripts; each round runs a case on every server in turn, the order turning
by round, and the table gives medians and catalogo's lead over the fastest rival. The aims are
issue 29's: 8x on the edit page, 10x on the JSON product and on creates, 3x on the new form.
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import bench
from bench import CASES, Case
from rival_apps import store

from catalogo.domain.produtos import samples

RIVAL_APPS = bench.HERE / "rival_apps"
JSON_SERVER = "json-server@0.17.4"
AIMS = {"edit.lua": 8.0, "product_json.lua": 10.0, "create.lua": 10.0, "create_json.lua": 10.0}
NEW_FORM = "/produtos/novo"


@dataclass
class Server:
    name: str
    command: list[str]
    env: dict[str, str]
    json_only: bool = False  # json-server: no pages, no forms
    base: str = ""
    rps: dict[str, list[float]] = field(default_factory=dict)
    failures: int = 0

    def serves(self, case: Case) -> bool:
        return not self.json_only or case.script in ("product_json.lua", "create_json.lua")


def aim(case: Case) -> float | None:
    return 3.0 if case.path == NEW_FORM else AIMS.get(case.script)


def install(workdir: Path) -> tuple[Path, Path]:
    """The rivals' venv and json-server's entry point."""
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "-r", str(RIVAL_APPS / "requirements.txt")], check=True)
    node = workdir / "node"
    quiet = ("--silent", "--no-audit", "--no-fund")
    subprocess.run(["npm", "install", *quiet, "--prefix", str(node), JSON_SERVER], check=True)
    return venv, node / "node_modules" / "json-server" / "lib" / "cli" / "bin.js"


def seed_rivals(n: int, workdir: Path) -> tuple[Path, Path]:
    """The rivals' SQLite file and json-server's db.json, with catalogo's sample products."""
    rows = [
        {"id": i, "nome": p.nome, "descricao": p.descricao, "preco": str(p.preco)}
        for i, p in enumerate(samples(n), start=1)
    ]
    database = workdir / "rivals.db"
    connection = store.connect(str(database))
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO produtos (id, nome, descricao, preco) VALUES (:id, :nome, :descricao, :preco)",
        rows,
    )
    connection.execute("COMMIT")
    connection.close()
    db_json = workdir / "db.json"
    db_json.write_text(json.dumps({"produtos": rows}, ensure_ascii=False))
    return database, db_json


def servers(n: int, workdir: Path) -> list[Server]:
    venv, json_server = install(workdir)
    database, db_json = seed_rivals(n, workdir)
    catalogo_env = bench.seeded(f"sqlite:///{workdir / 'catalogo.db'}", n)
    rival_env = {**os.environ, "RIVAL_DATABASE": str(database)}
    bin_ = venv / "bin"
    return [
        Server("catalogo", [bench.CATALOGO, "serve", "--port", "{port}"], catalogo_env),
        Server(
            "Flask + gunicorn",
            [
                *(str(bin_ / "gunicorn"), "--workers", "1", "--bind", "127.0.0.1:{port}"),
                *("--chdir", str(RIVAL_APPS), "flask_app:app"),
            ],
            rival_env,
        ),
        Server(
            "FastAPI + uvicorn",
            [
                *(str(bin_ / "uvicorn"), "fastapi_app:app", "--port", "{port}", "--no-access-log"),
                *("--log-level", "warning", "--app-dir", str(RIVAL_APPS)),
            ],
            rival_env,
        ),
        Server(
            "json-server",
            ["node", str(json_server), "--port", "{port}", "--quiet", str(db_json)],
            os.environ.copy(),
            json_only=True,
        ),
    ]


def page_bytes(url: str, accept: str = "text/html") -> int:
    request = urllib.request.Request(url, headers={"Accept": accept})  # noqa: S310 - loopback
    with urllib.request.urlopen(request) as response:  # noqa: S310 - loopback
        return len(response.read())


@contextlib.contextmanager
def running(all_servers: list[Server], workdir: Path) -> Iterator[None]:
    processes = []
    try:
        for server in all_servers:
            port = bench.free_port()
            command = [part.replace("{port}", str(port)) for part in server.command]
            log = workdir / f"{server.name.split()[0].lower()}.log"
            processes.append(bench.start(command, server.env, log, cwd=workdir))
            server.base = f"http://127.0.0.1:{port}"
            bench.wait_until_up(f"{server.base}/produtos/1", processes[-1])
        yield
    finally:
        for process in processes:
            bench.stop(process)


def run(n: int, rounds: int, seconds: int, workdir: Path) -> tuple[list[Server], list[str]]:
    cases = [c for c in CASES if c.script != "edit_mix.lua"]
    all_servers = servers(n, workdir)
    sizes = []
    with running(all_servers, workdir):
        for server in all_servers:
            if not server.json_only:
                edit, form = (page_bytes(server.base + p) for p in ("/produtos/1", NEW_FORM))
                sizes.append(f"{server.name}: edit page {edit:,} bytes, new form {form:,}")
        for case in cases:
            for server in all_servers:
                if server.serves(case):
                    bench.wrk(server.base, case, min(seconds, 2), n)
        for round_ in range(rounds):
            turn = round_ % len(all_servers)
            for case in cases:
                for server in all_servers[turn:] + all_servers[:turn]:
                    if not server.serves(case):
                        continue
                    figures = bench.wrk(server.base, case, seconds, n)
                    rate = figures["requests"] / (figures["duration_us"] / 1e6)
                    server.rps.setdefault(case.name, []).append(rate)
                    server.failures += figures["errors"] + figures["bad_status"]
    return all_servers, sizes


def table(all_servers: list[Server], sizes: list[str], n: int, rounds: int, seconds: int) -> str:
    ours, rivals = all_servers[0], all_servers[1:]
    names = " | ".join(r.name for r in rivals)
    lines = [
        f"# catalogo against the same spec in other frameworks ({datetime.date.today()})",
        "",
        f"`bench/rivals --rounds {rounds} --seconds {seconds}` at {bench.this_code()}, "
        f"N = {n:,}, on {bench.machine()}. Requests per second, medians of {rounds} rounds; "
        "every server pinned to core 0, wrk to core 1.",
        "",
        f"| case | catalogo | {names} | catalogo / fastest rival | aim |",
        "|---|---:|" + "---:|" * len(rivals) + "---:|---:|",
    ]
    for case_name, figures in ours.rps.items():
        case = next(c for c in CASES if c.name == case_name)
        mine = statistics.median(figures)
        theirs = [statistics.median(r.rps[case_name]) if r.serves(case) else None for r in rivals]
        fastest = max(t for t in theirs if t is not None)
        shown = " | ".join("—" if t is None else f"{t:,.0f}" for t in theirs)
        wanted = aim(case)
        lines.append(
            f"| {case_name} | {mine:,.0f} | {shown} | {mine / fastest:.1f}x | "
            f"{'' if wanted is None else f'{wanted:.0f}x'} |"
        )
    lines += ["", *(f"- {line}" for line in sizes)]
    failed = {s.name: s.failures for s in all_servers if s.failures}
    if failed:
        lines.append(f"- Requests that failed or got an error status: {failed}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--output", type=Path, help="where to save the table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="catalogo-rivals-") as workdir:
        all_servers, sizes = run(args.size, args.rounds, args.seconds, Path(workdir))
    report = table(all_servers, sizes, args.size, args.rounds, args.seconds)
    print(report)
    stamp = f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d-%H%M}"
    output = args.output or bench.HERE / "results" / f"{stamp}-rivals-{platform.node()}.md"
    output.write_text(report)
    print(f"rivals: saved {output}")


if __name__ == "__main__":
    main()
