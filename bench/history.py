"""What a product's history costs to read as it grows: the history page of a product with
10,000 events against that of a product with 10, on one server in one run.

    .venv/bin/python bench/history.py [--events 10000] [--rounds 5] [--seconds 5]

A seeded SQLite catalog of 1,000 products; product 1 is then changed `--events` - 1 times and
product 2 nine times, through storage (each change appends its event, as a request's does).
One `catalogo serve` (one worker, pinned like bench/run's, CATALOGO_PAGE_SIZE=10 so that every
page shows ten events, as the 10-event product's only page does) answers: the first history
page of each, the page of product 1 halfway down its history, HTML and JSON. In every round
each case runs once, the order alternating; the table gives each case's req/s as a fraction
of the 10-event product's first page in the same representation.
"""

import argparse
import asyncio
import statistics
import tempfile
from decimal import Decimal
from pathlib import Path

from bench import CATALOGO, Case, Figures, free_port, record, seeded, start, stop, wait_until_up
from bench import wrk as run_wrk

from catalogo.domain.historico import CLI
from catalogo.domain.produtos import Produto
from catalogo.runtime.settings import Settings
from catalogo.storage import open_storage


async def _change(database_url: str, id: int, times: int) -> None:
    storage = await open_storage(Settings(database_url=database_url))
    try:
        for n in range(times):
            await storage.update(
                id, Produto(nome=f"Versão {n}", preco=Decimal(n % 500 + 1)), None, CLI
            )
    finally:
        await storage.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    halfway = args.events // 2
    cases = {
        "HTML, 10 events": Case("", "get.lua", "/produtos/2/historico"),
        f"HTML, {args.events:,} events": Case("", "get.lua", "/produtos/1/historico"),
        f"HTML, {args.events:,} events, page at version {halfway:,}": Case(
            "", "get.lua", f"/produtos/1/historico?depois={halfway}"
        ),
        "JSON, 10 events": Case("", "get_json.lua", "/produtos/2/historico"),
        f"JSON, {args.events:,} events": Case("", "get_json.lua", "/produtos/1/historico"),
        f"JSON, {args.events:,} events, page at version {halfway:,}": Case(
            "", "get_json.lua", f"/produtos/1/historico?depois={halfway}"
        ),
    }
    with tempfile.TemporaryDirectory(prefix="catalogo-bench-history-") as folder:
        workdir = Path(folder)
        url = f"sqlite:///{workdir / 'catalogo.db'}"
        env = {**seeded(url, 1000), "CATALOGO_PAGE_SIZE": "10"}
        asyncio.run(_change(url, 1, args.events - 1))
        asyncio.run(_change(url, 2, 9))
        port = free_port()
        server = start([CATALOGO, "serve", "--port", str(port)], env, workdir / "serve.log")
        base = f"http://127.0.0.1:{port}"
        figures = {name: Figures() for name in cases}
        try:
            wait_until_up(f"{base}/produtos/1/historico", server)
            for case in cases.values():  # warm-up
                run_wrk(base, case, min(args.seconds, 2), 1000)
            for round_ in range(args.rounds):
                for name, case in list(cases.items())[:: -1 if round_ % 2 else 1]:
                    record(figures[name], run_wrk(base, case, args.seconds, 1000))
        finally:
            stop(server)
    rps = {name: statistics.median(f.rps) for name, f in figures.items()}
    print(f"{args.rounds} rounds of {args.seconds} s, one worker, SQLite, 10 events a page\n")
    print("| case | req/s | p50 ms | failures | / 10 events |")
    print("|---|---:|---:|---:|---:|")
    for name, f in figures.items():
        twin = name.split(",")[0] + ", 10 events"
        print(
            f"| {name} | {rps[name]:,.0f} | {statistics.median(f.p50_ms):.2f} | {f.failures} "
            f"| {rps[name] / rps[twin]:.2f} |"
        )


if __name__ == "__main__":
    main()
