"""An import at scale: does one worker stage, confirm and undo a 50,000-row spreadsheet in
bounded memory, and keep answering other requests while it does?

Starts `catalogo serve` (one worker) on a SQLite file seeded with `--products` products (or
`--database-url`), exports the list as it stands (`--formato`), changes every price in the
file (or, with `--new`, makes a file of `--products` new products), then sends it to
/produtos/importacoes, confirms it and undoes it. Meanwhile, every 20 ms, it times a fresh
connection's GET /healthz and samples the worker's resident memory. Reports each step's
seconds, the probes' latencies during the three steps against the same probes before them,
and the worker's resident memory before and at its peak in each step.

    .venv/bin/python bench/imports.py --database /tmp/i50000.db --products 50000 \\
        [--formato csv|xlsx] [--new] [--database-url postgresql://…]
"""

import argparse
import asyncio
import csv
import io
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import openpyxl
from bench import CATALOGO, free_port, start, stop, wait_until_up
from exports import idle, probes, resident_mb, summary

_BOUNDARY = "catalogo-bench-import"


async def request(port: int, method: str, path: str, body: bytes = b"", kind: str = "") -> Any:
    """One request with JSON asked for; its status, its JSON and how long it took."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**24)
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n"
    if kind:
        head += f"Content-Type: {kind}\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    writer.write(head.encode() + body)
    answer = await reader.read()
    writer.close()
    status = int(answer.split(b" ", 2)[1])
    payload = answer.split(b"\r\n\r\n", 1)[1]
    return status, json.loads(payload or b"null"), time.monotonic() - started


def form(name: str, data: bytes) -> bytes:
    part = (
        f"--{_BOUNDARY}\r\n"
        f'Content-Disposition: form-data; name="arquivo"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    return part.encode() + data + f"\r\n--{_BOUNDARY}--\r\n".encode()


def edited(exported: bytes, formato: str) -> bytes:
    """Every price of an export changed (to R$ 1,23, or back to R$ 3,21 if it was)."""
    if formato == "xlsx":
        book = openpyxl.load_workbook(io.BytesIO(exported))
        sheet = book.worksheets[0]
        for row in sheet.iter_rows(min_row=2, min_col=5, max_col=5):
            row[0].value = 3.21 if row[0].value == 1.23 else 1.23
        out = io.BytesIO()
        book.save(out)
        return out.getvalue()
    rows = list(csv.reader(io.StringIO(exported.decode("utf-8-sig"), newline=""), delimiter=";"))
    for row in rows[1:]:
        row[4] = "3,21" if row[4] == "1,23" else "1,23"
    text = io.StringIO()
    csv.writer(text, delimiter=";", lineterminator="\r\n").writerows(rows)
    return text.getvalue().encode("utf-8-sig")


def new_products(count: int) -> bytes:
    stamp = int(time.time())
    rows = [["codigo", "nome", "descricao", "preco"]] + [
        [f"B{stamp}-{n}", f"Produto importado {n}", "Uma descrição de exemplo.", "12,50"]
        for n in range(count)
    ]
    text = io.StringIO()
    csv.writer(text, delimiter=";", lineterminator="\r\n").writerows(rows)
    return text.getvalue().encode("utf-8-sig")


async def sampled(main_pid: int, done: asyncio.Event, peak: list[float]) -> None:
    while not done.is_set():
        peak[0] = max(peak[0], resident_mb(main_pid))
        await asyncio.sleep(0.02)


async def step(
    port: int, main_pid: int, name: str, method: str, path: str, body: bytes = b"", kind: str = ""
) -> tuple[int, Any]:
    """One request of a long job, JSON asked for, while /healthz is timed and the worker's
    memory sampled; prints how it went, and gives its status and JSON."""
    during: list[float] = []
    peak = [0.0]
    done = asyncio.Event()
    watching = asyncio.gather(probes(port, done, during), sampled(main_pid, done, peak))
    status, answer, seconds = await request(port, method, path, body, kind)
    done.set()
    await watching
    print(f"  {name}: {status} in {seconds:.1f} s ({str(answer)[:100]})")
    print(f"    /healthz during: {summary(during)}")
    print(f"    worker RSS peak {peak[0]:.0f} MB")
    return status, answer


async def measure(port: int, main_pid: int, data: bytes, name: str) -> None:
    before = await idle(port)
    print(f"import of {name}: {len(data) / 1e6:.1f} MB")
    print(f"  /healthz before: {summary(before)}")
    print(f"  worker RSS before {resident_mb(main_pid):.0f} MB")
    body, kind = form(name, data), f"multipart/form-data; boundary={_BOUNDARY}"
    path = "/produtos/importacoes"
    status, staged = await step(port, main_pid, "stage", "POST", path, body, kind)
    if status != 201:
        return
    status, _ = await step(port, main_pid, "confirm", "POST", f"{path}/{staged['id']}/confirmacao")
    if status == 200:
        await step(port, main_pid, "undo", "POST", f"{path}/{staged['id']}/reversao")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, help="a SQLite file")
    parser.add_argument("--database-url", help="instead of --database, e.g. PostgreSQL")
    parser.add_argument("--products", type=int, default=50_000)
    parser.add_argument("--formato", choices=("csv", "xlsx"), default="csv")
    parser.add_argument("--new", action="store_true", help="import new products instead")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{args.database.resolve()}"
    env = {**os.environ, "CATALOGO_DATABASE_URL": url}
    if args.database and not args.database.exists():
        subprocess.run([CATALOGO, "seed", str(args.products)], env=env, check=True)
    with tempfile.TemporaryDirectory() as folder:
        if args.new:
            data, name = new_products(args.products), "novos.csv"
        else:
            exported = Path(folder) / f"catalogo.{args.formato}"
            subprocess.run(
                [CATALOGO, "exportar", "--formato", args.formato, "--saida", str(exported)],
                env=env,
                check=True,
            )
            data, name = edited(exported.read_bytes(), args.formato), exported.name
        port = free_port()
        process = start([CATALOGO, "serve", "--port", str(port)], env, Path(folder) / "log", False)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/healthz", process)
            asyncio.run(measure(port, process.pid, data, name))
        finally:
            stop(process)


if __name__ == "__main__":
    main()
