"""What the feed's order costs PostgreSQL writes: concurrent updates whose events are inserted
under the shipped shared advisory lock (alone, and beside a feed reader that polls without a
pause, each of its reads taking the lock exclusively for an instant), under an exclusive one
(the first design: each insert to its commit, one writer at a time), and under none.

    .venv/bin/python bench/eventlock.py [--writers 16] [--rounds 5] [--seconds 5]

A fresh database of 1,000 products; in every round, for each variant, the store is opened and
`--writers` tasks update random products for `--seconds` (the variants' order rotating by
round). The variants replace storage/postgres's WRITING_EVENT in this process only; without a lock
the feed can skip events (tests/test_deploy.py shows it). Storage is driven in-process, so the
figure is the database's cost, not HTTP's.
"""

import argparse
import asyncio
import random
import statistics
import time
import uuid
from decimal import Decimal

import asyncpg

from catalogo.domain.historico import CLI
from catalogo.domain.produtos import Produto, samples
from catalogo.runtime.settings import Settings
from catalogo.storage import migrations, open_storage
from catalogo.storage.postgres import historico, store, transaction

SERVER = "postgresql://postgres@127.0.0.1:5432"
SHIPPED = historico.WRITING_EVENT
READING = "shared lock (shipped), a feed reader polling nonstop"
VARIANTS = {
    "shared lock (shipped)": SHIPPED,
    READING: SHIPPED,
    "exclusive lock (the first design)": SHIPPED.replace("_lock_shared(", "_lock("),
    "no lock (the feed could skip events)": "SELECT 1",
}


async def _round(url: str, writers: int, seconds: float, statement: str, reader: bool) -> float:
    for module in (store, transaction):  # this process only
        setattr(module, "WRITING_EVENT", statement)  # noqa: B010
    storage = await open_storage(Settings(database_url=url, database_pool_size=writers + 1))
    done = 0
    deadline = time.monotonic() + seconds

    async def write() -> None:
        nonlocal done
        while time.monotonic() < deadline:
            id = random.randint(1, 1000)
            await storage.update(id, Produto(nome=f"n{id}", preco=Decimal(id)), None, CLI)
            done += 1

    async def read() -> None:
        after = 0
        while time.monotonic() < deadline:
            found = await storage.events(after, 100)
            after = found[-1].id if found else after

    try:
        await asyncio.gather(*(write() for _ in range(writers)), *([read()] if reader else []))
    finally:
        await storage.close()
        for module in (store, transaction):
            setattr(module, "WRITING_EVENT", SHIPPED)  # noqa: B010
    return done / seconds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    name = f"bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"{SERVER}/postgres")
    await admin.execute(f"CREATE DATABASE {name}")
    url = f"{SERVER}/{name}"
    rates: dict[str, list[float]] = {label: [] for label in VARIANTS}
    try:
        await asyncio.to_thread(migrations.upgrade, Settings(database_url=url))
        storage = await open_storage(Settings(database_url=url))
        await storage.create_many(samples(1000), CLI)
        await storage.close()
        await _round(url, args.writers, 1, SHIPPED, False)  # warm-up
        labels = list(VARIANTS)
        for round_ in range(args.rounds):
            turn = round_ % len(labels)
            for label in labels[turn:] + labels[:turn]:
                rates[label].append(
                    await _round(url, args.writers, args.seconds, VARIANTS[label], label == READING)
                )
    finally:
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        await admin.close()
    none = statistics.median(rates["no lock (the feed could skip events)"])
    print(f"{args.writers} writers, {args.rounds} rounds of {args.seconds:g} s, PostgreSQL\n")
    print("| events inserted under | updates/s (median) | / no lock | each round |")
    print("|---|---:|---:|---|")
    for label, found in rates.items():
        rounds = ", ".join(f"{r:,.0f}" for r in found)
        median = statistics.median(found)
        print(f"| {label} | {median:,.0f} | {median / none:.2f} | {rounds} |")


if __name__ == "__main__":
    asyncio.run(main())
