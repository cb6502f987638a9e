"""A worker's memory on a large catalog with every cache full: issue 29's "worker RSS at
N = 1,000,000 < 150 MB".

Starts `catalogo serve` (one worker, pinned to core 0) on a copy of a SQLite file of N
products, with a user in the catalog (`writes` mode, as `bench/run --mode writes`), and drives
it with wrk (core 1) through a plan that fills what a worker keeps: edit pages of products at
random, anonymous and signed in; the first and a deep list page; JSON products; searches for a
random rare word. Then the writes (creates with a session, updates), and the reads again, now
over products of new versions. Prints the worker's peak RSS (VmHWM) after each half.

    .venv/bin/python bench/memory.py --database /tmp/s1000000.db --products 1000000 \\
        [--against REV]

The file is made with `catalogo seed N` if it does not exist; each code gets a copy of it, so
runs start alike. `--against REV` runs the plan on git revision REV too (installed as
bench/run installs it), one after the other, for a before and after on the same file.
"""

import argparse
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench import (
    CASES,
    CATALOGO,
    SIGNED_CASES,
    Case,
    Credentials,
    credentials_of,
    free_port,
    installed,
    resolve,
    start,
    stop,
    wait_until_up,
    with_a_user,
    worker_rss_mb,
    wrk,
)

HERE = Path(__file__).resolve().parent
EDIT, LIST, DEEP, _, CREATE, UPDATE, JSON_PRODUCT = CASES[:7]
SIGNED_EDIT = SIGNED_CASES[0]
SEARCH = Case("search for a random rare word", "search_varied.lua", "/produtos")
# What each half sends, and for how many seconds.
READS: Sequence[tuple[Case, int]] = (
    (EDIT, 20),
    (LIST, 5),
    (DEEP, 5),
    (JSON_PRODUCT, 5),
    (SIGNED_EDIT, 10),
    (SEARCH, 10),
)
WRITES: Sequence[tuple[Case, int]] = ((CREATE, 5), (UPDATE, 5))


def measure(catalogo: str, source: Path, n: int, workdir: Path) -> tuple[float, float]:
    """The worker's peak RSS in MB after the reads, and after the writes and the reads again."""
    workdir.mkdir()
    database = workdir / "catalogo.db"
    shutil.copyfile(source, database)
    env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{database}"}
    token = with_a_user(env, catalogo)
    port = free_port()
    app = start([catalogo, "serve", "--port", str(port)], env, workdir / "catalogo.log")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(f"{base}/produtos/1", app)
        credentials = credentials_of(token, base)
        drive(base, READS, n, credentials)
        after_reads = worker_rss_mb(app.pid)
        drive(base, WRITES, n, credentials)
        drive(base, READS, n, credentials)
        return after_reads, worker_rss_mb(app.pid)
    finally:
        stop(app)


def drive(base: str, plan: Sequence[tuple[Case, int]], n: int, credentials: Credentials) -> None:
    for case, seconds in plan:
        figures = wrk(base, case, seconds, n, credentials=credentials)
        if figures["errors"] or figures["bad_status"]:
            print(f"  {case.name}: {figures['errors']} errors, {figures['bad_status']} not 2xx/3xx")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", type=Path, required=True)
    parser.add_argument("--products", type=int, default=1_000_000)
    parser.add_argument("--against", help="a git revision to measure on the same file")
    args = parser.parse_args()
    if not args.database.exists():
        env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{args.database}"}
        subprocess.run([CATALOGO, "seed", str(args.products)], env=env, check=True)
    codes = [("this code", CATALOGO)]
    with tempfile.TemporaryDirectory() as workdir:
        if args.against:
            with installed(args.against, resolve(args.against)) as other:
                codes.append((args.against, other.catalogo))
                report(codes, args.database, args.products, Path(workdir))
        else:
            report(codes, args.database, args.products, Path(workdir))


def report(codes: list[tuple[str, str]], source: Path, n: int, workdir: Path) -> None:
    print("| code | worker peak RSS after the reads (MB) | after the writes and reads (MB) |")
    print("|---|---:|---:|")
    for number, (name, catalogo) in enumerate(codes):
        reads, writes = measure(catalogo, source, n, workdir / str(number))
        print(f"| {name} | {reads:.1f} | {writes:.1f} |", flush=True)


if __name__ == "__main__":
    main()
