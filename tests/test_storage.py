"""Every store keeps the interface's promises alike: races end with one winner, and a claim on
an idempotency key is honoured once. Each test runs on SQLite and on PostgreSQL."""

import asyncio
from collections.abc import Awaitable, Callable
from decimal import Decimal

import pytest

from catalogo.historia import CLI
from catalogo.produtos import Produto
from catalogo.settings import Settings
from catalogo.storage import (
    Cursor,
    KeyClaim,
    KeyTaken,
    Storage,
    VersionConflict,
    open_storage,
)
from tests.databases import Database


def produto(nome: str) -> Produto:
    return Produto(nome=nome, preco=Decimal("1.50"))


def run(database: str, test: Callable[[Storage], Awaitable[None]]) -> None:
    """Runs `test` against a store opened on `database`, then closes it."""

    async def opened() -> None:
        storage = await open_storage(Settings(database_url=database))
        try:
            await test(storage)
        finally:
            await storage.close()

    asyncio.run(opened())


def test_of_twenty_writers_naming_one_version_exactly_one_wins(database: str) -> None:
    async def test(storage: Storage) -> None:
        criado = await storage.create(produto("original"), CLI)
        assert criado.id is not None and criado.versao is not None
        writes = [
            storage.update(criado.id, produto(f"w{n}"), {criado.versao}, CLI) for n in range(20)
        ]
        results = await asyncio.gather(*writes, return_exceptions=True)
        winners = [r for r in results if isinstance(r, Produto)]
        assert len(winners) == 1 and winners[0].versao == 2
        assert all(isinstance(r, VersionConflict) for r in results if r not in winners)

    run(database, test)


def test_releasing_a_claim_leaves_alone_a_claim_taken_over_since(
    database: str, db: Database
) -> None:
    async def test(storage: Storage) -> None:
        first = await storage.claim_key("k", "f")
        db.execute("UPDATE idempotency_keys SET created_at = created_at - 61")  # left behind
        assert (await storage.claim_key("k", "f")).state == "claimed"
        assert first.claimed_at is not None
        await storage.release_key("k", first.claimed_at)
        assert await storage.claim_key("k", "f") == KeyClaim("in_progress")

    run(database, test)


def test_of_ten_requests_claiming_one_key_at_once_exactly_one_claims_it(database: str) -> None:
    async def test(storage: Storage) -> None:
        claims = await asyncio.gather(*(storage.claim_key("k", "f") for _ in range(10)))
        assert sorted(c.state for c in claims) == ["claimed"] + ["in_progress"] * 9

    run(database, test)


def test_a_claim_taken_over_meanwhile_stores_nothing(database: str, db: Database) -> None:
    async def test(storage: Storage) -> None:
        claim = await storage.claim_key("k", "f")
        assert claim.state == "claimed" and claim.claimed_at is not None
        db.execute("UPDATE idempotency_keys SET created_at = created_at + 1")  # someone else's now
        with pytest.raises(KeyTaken):
            await storage.create_once(produto("x"), "k", claim.claimed_at, CLI)

    run(database, test)
    assert db.execute("SELECT count(*) FROM produtos").fetchone() == (0,)


def test_a_key_remembers_the_product_its_first_request_created(database: str) -> None:
    async def test(storage: Storage) -> None:
        claim = await storage.claim_key("k", "f")
        assert claim.claimed_at is not None
        created = await storage.create_once(produto("x"), "k", claim.claimed_at, CLI)
        assert await storage.claim_key("k", "f") == KeyClaim("created", created=created.id)
        assert await storage.claim_key("k", "other") == KeyClaim("other_request")

    run(database, test)


def test_pages_walk_the_whole_catalog_newest_first(database: str) -> None:
    async def test(storage: Storage) -> None:
        await storage.create_many((produto(f"p{n}") for n in range(10)), CLI)
        seen: list[int] = []
        cursor: Cursor | None = Cursor(4)
        while cursor is not None:
            page = await storage.page(cursor)
            seen += [p.id for p in page.produtos if p.id]
            cursor = page.next
        assert seen == list(range(10, 0, -1))

    run(database, test)
