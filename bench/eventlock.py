"""What the feed's ordering lock costs PostgreSQL writes: concurrent updates with events
inserted under the advisory lock (the shipped code) against the same updates without it.

    .venv/bin/python bench/eventlock.py [--writers 16] [--rounds 5] [--seconds 5]

Each round opens the store on a fresh database of 1,000 products and runs `--writers` tasks
that update random products for `--seconds`, once with postgres.py's _EVENTS_LOCK and once
with it replaced by `SELECT 1` (the same round trip, no lock), the order alternating by round.
The lock is never off outside this script: without it the feed can skip events (tests/
test_deploy.py shows it). Storage is driven in-process, so the figure is the database's cost,
not HTTP's.
"""

import argparse
import asyncio
import random
import statistics
import time
import uuid
from decimal import Decimal

import asyncpg

from catalogo import migrations
from catalogo.historia import CLI
from catalogo.produtos import Produto, exemplos
from catalogo.settings import Settings
from catalogo.storage import open_storage, postgres

SERVER = "postgresql://postgres@127.0.0.1:5432"
LOCK = postgres._EVENTS_LOCK


async def _round(url: str, writers: int, seconds: float, locked: bool) -> float:
    postgres._EVENTS_LOCK = LOCK if locked else "SELECT 1"
    storage = await open_storage(Settings(database_url=url, database_pool_size=writers))
    done = 0
    deadline = time.monotonic() + seconds

    async def write() -> None:
        nonlocal done
        while time.monotonic() < deadline:
            id = random.randint(1, 1000)
            await storage.update(id, Produto(nome=f"n{id}", preco=Decimal(id)), None, CLI)
            done += 1

    try:
        await asyncio.gather(*(write() for _ in range(writers)))
    finally:
        await storage.close()
        postgres._EVENTS_LOCK = LOCK
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
    try:
        migrations.upgrade(Settings(database_url=url))
        storage = await open_storage(Settings(database_url=url))
        await storage.create_many(exemplos(1000), CLI)
        await storage.close()
        rates: dict[bool, list[float]] = {True: [], False: []}
        await _round(url, args.writers, 1, True)  # warm-up
        for round_ in range(args.rounds):
            for locked in (True, False) if round_ % 2 else (False, True):
                rates[locked].append(await _round(url, args.writers, args.seconds, locked))
    finally:
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        await admin.close()
    with_lock, without = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"{args.writers} writers, {args.rounds} rounds of {args.seconds:g} s, PostgreSQL\n")
    print("| events | updates/s (median) | each round |")
    print("|---|---:|---|")
    for label, locked in (("under the advisory lock (shipped)", True), ("no lock", False)):
        rounds = ", ".join(f"{r:,.0f}" for r in rates[locked])
        print(f"| {label} | {statistics.median(rates[locked]):,.0f} | {rounds} |")
    print(f"\nwith the lock / without: {with_lock / without:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
