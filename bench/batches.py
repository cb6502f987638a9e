"""A batch at scale: does one worker confirm and undo a 10,000-product batch in bounded memory,
and keep answering other requests while it does?

Starts `catalogo serve` (one worker) on a SQLite file seeded with `--products` products (or
`--database-url`), asks `POST /produtos/lote` to reprice every product of the list by 8%
(`busca` the whole list: the confirmation's JSON), confirms it with the selection it gave,
then undoes it. Meanwhile, every 20 ms, it times a fresh connection's GET /healthz and samples
the worker's resident memory; each step's seconds, probe latencies and peak memory are printed.

    .venv/bin/python bench/batches.py --database /tmp/b10000.db --products 10000 \\
        [--acao reajustar|remover] [--database-url postgresql://…]
"""

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
from pathlib import Path

from bench import CATALOGO, free_port, start, stop, wait_until_up
from exports import probes, resident_mb, summary
from heavyreads import get
from imports import request, sampled


async def measure(port: int, main_pid: int, acao: str) -> None:
    for _ in range(3):
        await get(port, "/produtos")
    idle: list[float] = []
    quiet = asyncio.Event()
    asyncio.get_running_loop().call_later(3, quiet.set)
    await probes(port, quiet, idle)
    print(f"batch: {acao} every product")
    print(f"  /healthz before: {summary(idle)}")
    print(f"  worker RSS before {resident_mb(main_pid):.0f} MB")
    asked = {"acao": acao, "percentual": "8", "busca": ""}
    shown: dict[str, str] = {}
    for step in ("confirmation", "confirm", "undo"):
        during: list[float] = []
        peak = [0.0]
        done = asyncio.Event()
        watching = asyncio.gather(probes(port, done, during), sampled(main_pid, done, peak))
        if step == "confirmation":
            body = json.dumps(asked).encode()
            status, answer, seconds = await request(
                port, "POST", "/produtos/lote", body, "application/json"
            )
            shown = answer if status == 200 else {}
            said = f"{answer.get('total')} products" if status == 200 else answer
        elif step == "confirm":
            confirm = {
                **asked,
                "selecao": shown["selecao"],
                "lote": shown["lote"],
                "confirmar": True,
            }
            status, answer, seconds = await request(
                port, "POST", "/produtos/lote", json.dumps(confirm).encode(), "application/json"
            )
            said = answer
        else:
            status, answer, seconds = await request(
                port, "POST", f"/produtos/lote/{shown['lote']}/reversao"
            )
            said = answer
        done.set()
        await watching
        print(f"  {step}: {status} in {seconds:.1f} s ({str(said)[:80]})")
        print(f"    /healthz during: {summary(during)}")
        print(f"    worker RSS peak {peak[0]:.0f} MB")
        if status >= 300:
            return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, help="a SQLite file")
    parser.add_argument("--database-url", help="instead of --database, e.g. PostgreSQL")
    parser.add_argument("--products", type=int, default=10_000)
    parser.add_argument("--acao", choices=("reajustar", "remover"), default="reajustar")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{args.database.resolve()}"
    env = {**os.environ, "CATALOGO_DATABASE_URL": url}
    if args.database and not args.database.exists():
        subprocess.run([CATALOGO, "seed", str(args.products)], env=env, check=True)
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        process = start([CATALOGO, "serve", "--port", str(port)], env, Path(folder) / "log", False)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/healthz", process)
            asyncio.run(measure(port, process.pid, args.acao))
        finally:
            stop(process)


if __name__ == "__main__":
    main()
