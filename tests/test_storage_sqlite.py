"""The SQLite store: group commit keeps every write apart, and no failure stops the writer."""

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from decimal import Decimal

import pytest

from catalogo.produtos import Produto
from catalogo.settings import Settings
from catalogo.storage import Cursor, KeyTaken, StorageUnavailable, StoredResponse
from catalogo.storage.sqlite import SQLiteStorage
from tests.databases import Database

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


def produto(nome: str) -> Produto:
    return Produto(nome=nome, preco=Decimal("1.50"))


def run(settings: Settings, test: Callable[[SQLiteStorage], Awaitable[None]]) -> None:
    """Runs `test` against a store opened on the test's database file, then closes it."""

    async def opened() -> None:
        storage = SQLiteStorage(settings.sqlite_path)
        try:
            await test(storage)
        finally:
            await storage.close()

    asyncio.run(opened())


def test_writes_committed_together_each_get_their_own_id(settings: Settings, db: Database) -> None:
    async def test(storage: SQLiteStorage) -> None:
        criados = await asyncio.gather(*(storage.create(produto(f"p{n}")) for n in range(300)))
        assert sorted(p.id for p in criados if p.id) == list(range(1, 301))

    run(settings, test)
    assert db.execute("SELECT count(*), count(DISTINCT nome) FROM produtos").fetchone() == (
        300,
        300,
    )


def test_one_failing_write_does_not_undo_the_others_in_its_batch(
    settings: Settings, db: Database
) -> None:
    async def test(storage: SQLiteStorage) -> None:
        bad = storage._writer.submit(
            lambda c: c.execute("INSERT INTO produtos (nome, preco_centavos) VALUES ('', 0)")
        )
        results = await asyncio.gather(
            storage.create(produto("antes")),
            bad,
            storage.create(produto("depois")),
            return_exceptions=True,
        )
        assert isinstance(results[1], sqlite3.IntegrityError)

    run(settings, test)
    assert [r[0] for r in db.execute("SELECT nome FROM produtos ORDER BY id")] == [
        "antes",
        "depois",
    ]


def test_a_failing_database_answers_unavailable_and_the_writer_goes_on(
    settings: Settings, db: Database
) -> None:
    def damaged(connection: sqlite3.Connection) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    async def test(storage: SQLiteStorage) -> None:
        with pytest.raises(StorageUnavailable, match="malformed"):
            await asyncio.gather(storage._writer.submit(damaged), storage.create(produto("x")))
        assert (await storage.create(produto("depois"))).nome == "depois"

    run(settings, test)
    assert [r[0] for r in db.execute("SELECT nome FROM produtos")] == ["depois"]


def test_pages_walk_the_whole_catalog_newest_first(settings: Settings) -> None:
    async def test(storage: SQLiteStorage) -> None:
        await storage.create_many(produto(f"p{n}") for n in range(10))
        seen: list[int] = []
        cursor: Cursor | None = Cursor(4)
        while cursor is not None:
            page = await storage.page(cursor)
            seen += [p.id for p in page.produtos if p.id]
            cursor = page.next
        assert seen == list(range(10, 0, -1))

    run(settings, test)


def test_a_claim_taken_over_meanwhile_stores_nothing(settings: Settings, db: Database) -> None:
    def answer(criado: Produto) -> StoredResponse:
        return StoredResponse(201, [], b"")

    async def test(storage: SQLiteStorage) -> None:
        claim = await storage.claim_key("k", "f")
        assert claim.state == "claimed" and claim.claimed_at is not None
        db.execute("UPDATE idempotency_keys SET created_at = created_at + 1")  # someone else's now
        with pytest.raises(KeyTaken):
            await storage.create_once(produto("x"), ("k", claim.claimed_at), answer)

    run(settings, test)
    assert db.execute("SELECT count(*) FROM produtos").fetchone() == (0,)
