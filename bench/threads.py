"""Where a served request's CPU goes, thread by thread: the event loop, SQLite's writer, Granian's
I/O thread (tokio-rt-worker) and the rest, as the kernel counts them (user and system time).

    .venv/bin/python bench/threads.py update                   # this code, one worker pinned
    .venv/bin/python bench/threads.py "edit page \\`,update" --catalogo /other/.venv/bin/catalogo

A case is named by a part of bench/run's case names. Python 3.11 gives its threads no names the
kernel knows: a worker's event loop is its main thread, marked so; SQLite's writer is the one
whose time grows with writes. The catalog is bench/run's (N = 10,000, a
user in it: writes carry the session or the token as in --mode writes). One worker pinned to
core 0 and wrk on core 1, as in bench/run; each case runs for a warm-up, then SECONDS while the
threads' times are read from /proc before and after. Everything shares one core, so a thread's
time is what it takes from the others: the writer's CPU is requests the loop did not answer.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench import (
    CASES,
    CATALOGO,
    SIGNED_CASES,
    credentials_of,
    free_port,
    seeded,
    start,
    stop,
    wait_until_up,
    with_a_user,
    wrk,
)

N, WARM_UP, SECONDS = 10_000, 2, 8
Times = dict[str, tuple[str, int, int]]  # by thread id: its name, user and system ticks


def times(server: int) -> Times:
    """Every thread of the server's processes (itself and its workers)."""
    found: Times = {}
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*/stat"):
        process = task.parts[2]
        try:
            parent = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()[1]
            stat = task.read_text()
        except (OSError, IndexError):
            continue
        if str(server) not in (process, parent):
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if task.parts[4] == process:  # a process's first thread: in a worker, the event loop
            name += " (main)"
        fields = stat.rsplit(")", 1)[1].split()
        found[task.parts[4]] = (name, int(fields[11]), int(fields[12]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", help="parts of case names, comma-separated")
    parser.add_argument("--catalogo", default=CATALOGO, help="the catalogo to serve")
    args = parser.parse_args()
    parts = args.cases.split(",")
    cases = [c for c in [*CASES, *SIGNED_CASES] if any(p in c.name for p in parts)]
    if not cases:
        sys.exit(f"threads: no case named like {args.cases}")
    tick = os.sysconf("SC_CLK_TCK")
    with tempfile.TemporaryDirectory(prefix="catalogo-threads-") as folder:
        env = seeded(f"sqlite:///{Path(folder) / 'catalogo.db'}", N, args.catalogo)
        token = with_a_user(env, args.catalogo)
        port = free_port()
        server = start([args.catalogo, "serve", "--port", str(port)], env, Path(folder) / "log")
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(f"{base}/produtos/1", server)
            credentials = credentials_of(token, base)
            for case in cases:
                wrk(base, case, WARM_UP, N, credentials=credentials)
                before = times(server.pid)
                figures = wrk(base, case, SECONDS, N, credentials=credentials)
                after = times(server.pid)
                answered = figures["requests"]
                rate = answered / (figures["duration_us"] / 1e6)
                print(f"{case.name}: {rate:,.0f} req/s; µs of CPU a request, by thread:")
                for thread, (name, user, system) in sorted(after.items()):
                    if thread not in before:
                        continue
                    spent = [
                        (now - then) / tick / answered * 1e6
                        for now, then in zip((user, system), before[thread][1:], strict=True)
                    ]
                    if sum(spent) >= 0.5:
                        print(f"  {name:22} user {spent[0]:6.1f}  system {spent[1]:6.1f}")
        finally:
            stop(server)


if __name__ == "__main__":
    main()
