"""What signing in costs a read: the edit page with a session and the JSON product with a token,
each against the same page read anonymously, on one server in one run.

    .venv/bin/python bench/accounts.py [--size 10000] [--rounds 5] [--seconds 5]

One `catalogo serve` (one worker, pinned like bench/run's) on a seeded SQLite catalog with one
`editor` user, so CATALOGO_AUTH is in effect `writes` and anonymous reads are still served.
The session comes from POST /entrar, the token from `catalogo tokens criar`. In every round
each case runs once, the order alternating, and the table gives each signed-in case's req/s
as a fraction of its anonymous twin's. It also times sign-ins themselves: the Argon2id check.
"""

import argparse
import http.client
import statistics
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

from bench import CATALOGO, Case, Figures, free_port, record, seeded, start, stop, wait_until_up
from bench import wrk as run_wrk

PASSWORD = "uma senha de benchmark longa"  # noqa: S105 - the benchmark user's, on a throwaway file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="catalogo-bench-accounts-") as folder:
        workdir = Path(folder)
        env = seeded(f"sqlite:///{workdir / 'catalogo.db'}", args.size)
        subprocess.run(
            [CATALOGO, "usuarios", "criar", "bench", "--papel", "editor", "--senha-stdin"],
            env=env,
            input=PASSWORD,
            text=True,
            check=True,
            capture_output=True,
        )
        token = subprocess.run(
            [CATALOGO, "tokens", "criar", "--usuario", "bench", "--nome", "bench"],
            env=env,
            text=True,
            check=True,
            capture_output=True,
        ).stdout.strip()
        port = free_port()
        server = start([CATALOGO, "serve", "--port", str(port)], env, workdir / "serve.log")
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(f"{base}/produtos/1", server)
            session, sign_in_ms = _sign_in(base)
            cases = {
                "edit page, anonymous": ["html"],
                "edit page, session": ["html", "Cookie", f"sessao={session}"],
                "JSON product, anonymous": ["json"],
                "JSON product, token": ["json", "Authorization", f"Bearer {token}"],
            }
            figures = {name: Figures() for name in cases}
            for extra in cases.values():  # warm-up
                _wrk(base, extra, min(args.seconds, 2), args.size)
            for round_ in range(args.rounds):
                order = list(cases.items())[:: -1 if round_ % 2 else 1]
                for name, extra in order:
                    record(figures[name], _wrk(base, extra, args.seconds, args.size))
        finally:
            stop(server)
    rps = {name: statistics.median(f.rps) for name, f in figures.items()}
    print(f"catalog of {args.size:,}, {args.rounds} rounds of {args.seconds} s, one worker\n")
    print("| case | req/s | p50 ms | failures | signed in / anonymous |")
    print("|---|---:|---:|---:|---:|")
    for name, f in figures.items():
        twin = name.split(",")[0] + ", anonymous"
        ratio = "" if twin == name else f"{rps[name] / rps[twin]:.2f}"
        print(
            f"| {name} | {rps[name]:,.0f} | {statistics.median(f.p50_ms):.2f} | {f.failures} "
            f"| {ratio} |"
        )
    print(f"\nsign-in (POST /entrar, Argon2id check, one at a time): median {sign_in_ms:.0f} ms")


def _wrk(base: str, extra: list[str], seconds: int, highest: int) -> dict[str, int]:
    case = Case("signed", "signed.lua", "/", takes_highest_id=True)
    return run_wrk(base, case, seconds, highest, extra)


def _sign_in(base: str) -> tuple[str, float]:
    """A session's secret, and the median time of ten sign-ins, one after another."""
    host, port = urllib.parse.urlsplit(base).netloc.split(":")
    body = urllib.parse.urlencode({"nome": "bench", "senha": PASSWORD})
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    times, secret = [], ""
    for _ in range(10):
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        started = time.perf_counter()
        connection.request("POST", "/entrar", body, headers)
        response = connection.getresponse()
        response.read()
        times.append((time.perf_counter() - started) * 1000)
        connection.close()
        assert response.status == 303, response.status  # noqa: S101 - a benchmark's own check
        secret = response.headers["set-cookie"].split(";", 1)[0].split("=", 1)[1]
    return secret, statistics.median(times)


if __name__ == "__main__":
    main()
