"""Every store keeps the interface's promises alike: races end with one winner, and a claim on
an idempotency key is honoured once. Each test runs on SQLite and on PostgreSQL."""

import asyncio
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any, TypeVar

import pytest

from catalogo.domain import contas
from catalogo.domain.busca import Position, Query, codigo_key, terms
from catalogo.domain.contas import Throttled
from catalogo.domain.errors import ChangedSince, CodigoTaken, KeyTaken, NotFound
from catalogo.domain.historico import CLI
from catalogo.domain.produtos import Produto
from catalogo.runtime.settings import Settings
from catalogo.storage import KeyClaim, Saved, Storage, VersionConflict, Write, open_storage
from catalogo.storage.paging import Cursor, Page
from tests.databases import Database

T = TypeVar("T")


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
        winners = [r.produto for r in results if isinstance(r, Saved) and r.changed]
        assert len(winners) == 1 and winners[0].versao == 2
        assert sum(isinstance(r, VersionConflict) for r in results) == 19

    run(database, test)


def test_an_update_to_the_fields_it_has_makes_no_version_and_no_event(
    database: str, db: Database
) -> None:
    async def test(storage: Storage) -> None:
        criado = await storage.create(produto("original"), CLI)
        assert criado.id is not None
        saved = await storage.update(criado.id, produto("original"), {1}, CLI)
        assert saved == Saved(criado, changed=False)
        with pytest.raises(VersionConflict):
            await storage.update(criado.id, produto("original"), {2}, CLI)

    run(database, test)
    assert db.execute("SELECT count(*) FROM eventos").fetchone()[0] == 1


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


def run_on_several(
    database: str, stores: int, test: Callable[[list[Storage]], Awaitable[None]]
) -> None:
    """Runs `test` against `stores` stores opened on `database`, as as many workers or
    instances would: each its own connections (and on SQLite its own writer)."""

    async def opened() -> None:
        opened = [await open_storage(Settings(database_url=database)) for _ in range(stores)]
        try:
            await test(opened)
        finally:
            for storage in opened:
                await storage.close()

    asyncio.run(opened())


@pytest.mark.parametrize(
    ("tries", "who", "limit"),
    [
        (30, lambda n: ("maria", "192.0.2.1"), contas.MAX_FAILURES_PAIR),
        (40, lambda n: (f"u{n}", "192.0.2.1"), contas.MAX_FAILURES_ADDRESS),
        (60, lambda n: ("maria", f"192.0.2.{n}"), contas.MAX_FAILURES_NAME),
    ],
    ids=["one name from one address", "any names from one address", "one name from anywhere"],
)
def test_sign_ins_tried_at_once_on_three_stores_reserve_exactly_the_limit(
    database: str, db: Database, tries: int, who: Callable[[int], tuple[str, str]], limit: int
) -> None:
    now = time.time()

    async def test(stores: list[Storage]) -> None:
        async def reserve(n: int) -> int | None:
            try:
                return await stores[n % len(stores)].reserve_sign_in(*who(n), now)
            except Throttled:
                return None

        reserved = await asyncio.gather(*(reserve(n) for n in range(tries)))
        assert sum(attempt is not None for attempt in reserved) == limit

    run_on_several(database, 3, test)
    assert db.execute("SELECT count(*) FROM login_attempts WHERE NOT ok").fetchone() == (limit,)


def test_a_try_never_settled_counts_as_a_failure_until_it_leaves_the_window(database: str) -> None:
    """As when the process died while it checked the password: no one is locked out for good."""
    now = time.time()

    async def test(storage: Storage) -> None:
        for _ in range(contas.MAX_FAILURES_PAIR):
            await storage.reserve_sign_in("maria", "192.0.2.1", now)
        with pytest.raises(Throttled) as refused:
            await storage.reserve_sign_in("maria", "192.0.2.1", now + 1)
        assert refused.value.seconds == contas.FAILURE_WINDOW_S
        later = now + contas.FAILURE_WINDOW_S + 1
        assert await storage.reserve_sign_in("maria", "192.0.2.1", later)

    run(database, test)


def test_a_right_password_starts_the_count_again_and_an_unchecked_try_counts_for_nothing(
    database: str,
) -> None:
    now = time.time()

    async def test(storage: Storage) -> None:
        for _ in range(contas.MAX_FAILURES_PAIR - 1):
            await storage.reserve_sign_in("maria", "192.0.2.1", now)
        await storage.sign_in_succeeded(
            await storage.reserve_sign_in("maria", "192.0.2.1", now + 1)
        )
        for _ in range(contas.MAX_FAILURES_PAIR):
            await storage.forget_sign_in(
                await storage.reserve_sign_in("maria", "192.0.2.1", now + 2)
            )
        for _ in range(contas.MAX_FAILURES_PAIR):
            await storage.reserve_sign_in("maria", "192.0.2.1", now + 2)
        with pytest.raises(Throttled):
            await storage.reserve_sign_in("maria", "192.0.2.1", now + 2)

    run(database, test)


def test_pages_walk_the_whole_catalog_newest_first(database: str) -> None:
    async def test(storage: Storage) -> None:
        await storage.create_many((produto(f"p{n}") for n in range(10)), CLI)
        seen: list[int] = []
        cursor: Cursor[Position] | None = Cursor(4)
        while cursor is not None:
            page = await storage.find(Query(), cursor)
            seen += [p.id for p in page.items if p.id]
            cursor = page.next
        assert seen == list(range(10, 0, -1))

    run(database, test)


async def walk(
    read: Callable[[Cursor[Any]], Awaitable[Page[T, Any]]], key: Callable[[T], int]
) -> list[int]:
    """Every item's key, following `next` from the first page, then `prev` back from the last."""
    forward: list[int] = []
    cursor: Cursor[Any] | None = Cursor(3)
    last = None
    while cursor is not None:
        last = await read(cursor)
        forward += [key(item) for item in last.items]
        cursor = last.next
    backward: list[int] = []
    cursor = last.prev if last else None
    while cursor is not None:
        page = await read(cursor)
        backward = [key(item) for item in page.items] + backward
        cursor = page.prev
    assert backward + [key(item) for item in last.items] == forward if last else True
    return forward


def test_a_history_pages_through_a_products_events_newest_first(database: str) -> None:
    async def test(storage: Storage) -> None:
        criado = await storage.create(produto("v1"), CLI)
        assert criado.id is not None
        other = await storage.create(produto("outro"), CLI)
        for n in range(2, 9):
            await storage.update(criado.id, produto(f"v{n}"), None, CLI)
        await storage.remove(criado.id, None, CLI)
        await storage.restore(criado.id, CLI)

        versions = await walk(lambda c: storage.history(criado.id or 0, c), lambda e: e.versao)
        assert versions == list(range(10, 0, -1))
        page = await storage.history(criado.id, Cursor(3))
        assert [e.tipo for e in page.items] == ["restaurado", "removido", "alterado"]
        assert page.items[2].antes == {
            "codigo": None,
            "nome": "v7",
            "descricao": "",
            "preco": "1.50",
        }
        assert [e.versao for e in (await storage.history(other.id or 0, Cursor(3))).items] == [1]
        assert (await storage.history(999, Cursor(3))).items == []

    run(database, test)


def test_versions_since_one_give_the_base_of_a_merge_and_what_came_after(database: str) -> None:
    async def test(storage: Storage) -> None:
        criado = await storage.create(produto("a"), CLI)
        assert criado.id is not None
        for nome in ("b", "c", "d"):
            await storage.update(criado.id, produto(nome), None, CLI)
        since = await storage.versions(criado.id, 2, 2)
        assert [(e.versao, (e.depois or {})["nome"]) for e in since] == [(2, "b"), (3, "c")]
        assert await storage.versions(criado.id, 9, 2) == []

    run(database, test)


def test_the_trash_lists_removed_products_latest_removal_first(database: str) -> None:
    async def test(storage: Storage) -> None:
        await storage.create_many((produto(f"p{n}") for n in range(8)), CLI)
        for id in (3, 1, 7, 2, 8):
            await storage.remove(id, None, CLI)
        await storage.restore(2, CLI)

        assert await walk(storage.trash, lambda r: r.produto.id or 0) == [8, 7, 1, 3]
        removal = await storage.removed(7)
        assert removal is not None and removal.produto.nome == "p6"
        assert await storage.removed(2) is None and await storage.removed(4) is None

    run(database, test)


def test_purging_deletes_only_products_removed_before_the_time_given(database: str) -> None:
    async def test(storage: Storage) -> None:
        await storage.create_many((produto(f"p{n}") for n in range(4)), CLI)
        await storage.remove(1, None, CLI)
        await storage.remove(2, None, CLI)
        second = await storage.removed(2)
        assert second is not None
        assert await storage.purge(second.removido_em) == 1  # removed before the second removal
        assert await storage.removed(1) is None and await storage.removed(2) is not None
        assert [e.tipo for e in (await storage.history(1, Cursor(5))).items] == [
            "removido",
            "criado",
        ]  # events stay
        assert await storage.purge(second.removido_em + 1) == 1
        assert await storage.purge(second.removido_em + 1) == 0
        await storage.create(produto("novo"), CLI)
        assert [p.id for p in (await storage.find(Query(), Cursor(9))).items] == [5, 4, 3]

    run(database, test)


def test_the_feed_gives_every_event_once_in_id_order(database: str) -> None:
    async def test(storage: Storage) -> None:
        criado = await storage.create(produto("a"), CLI)
        assert criado.id is not None
        await storage.update(criado.id, produto("b"), None, CLI)
        await storage.remove(criado.id, None, CLI)
        first = await storage.events(0, 2)
        rest = await storage.events(first[-1].id, 2)
        assert [e.tipo for e in first + rest] == ["criado", "alterado", "removido"]
        assert [e.id for e in first + rest] == sorted({e.id for e in first + rest})
        assert await storage.events(rest[-1].id, 2) == []

    run(database, test)


def coded(nome: str, codigo: str | None) -> Produto:
    return Produto(nome=nome, preco=Decimal("1.50"), codigo=codigo)


def test_a_code_is_one_products_blind_to_case_and_a_removed_product_keeps_it(
    database: str,
) -> None:
    async def test(storage: Storage) -> None:
        caneca = await storage.create(coded("Caneca", "CAN-AZ-300"), CLI)
        assert caneca.id is not None and caneca.codigo == "CAN-AZ-300"
        with pytest.raises(CodigoTaken) as live:
            await storage.create(coded("Outra", "can-az-300"), CLI)
        assert (live.value.holder, live.value.removed) == (caneca.id, False)
        await storage.remove(caneca.id, None, CLI)
        with pytest.raises(CodigoTaken) as kept:
            await storage.create(coded("Outra", "Can-Az-300"), CLI)
        assert (kept.value.holder, kept.value.removed) == (caneca.id, True)
        back = await storage.restore(caneca.id, CLI)
        assert back.codigo == "CAN-AZ-300"
        other = await storage.create(coded("Caderno", "CAD-01"), CLI)
        assert other.id is not None
        with pytest.raises(CodigoTaken):
            await storage.update(other.id, coded("Caderno", "can-az-300"), None, CLI)
        assert (await storage.get(other.id)) == other

    run(database, test)


def test_an_update_that_does_not_name_the_code_keeps_it_and_an_empty_one_clears_it(
    database: str,
) -> None:
    async def test(storage: Storage) -> None:
        made = await storage.create(coded("Caneca", "CAN-1"), CLI)
        assert made.id is not None
        renamed, _ = await storage.update(made.id, produto("Caneca azul"), None, CLI)
        assert (renamed.nome, renamed.codigo) == ("Caneca azul", "CAN-1")
        recased, changed = await storage.update(made.id, coded("Caneca azul", "can-1"), None, CLI)
        assert changed and recased.codigo == "can-1"
        cleared, _ = await storage.update(made.id, coded("Caneca azul", None), None, CLI)
        assert cleared.codigo is None
        assert (await storage.create(coded("Nova", "CAN-1"), CLI)).codigo == "CAN-1"
        events = (await storage.history(made.id, Cursor(10))).items
        assert [e.depois and e.depois["codigo"] for e in events] == [
            None,
            "can-1",
            "CAN-1",
            "CAN-1",
        ]

    run(database, test)


def test_of_ten_products_created_at_once_with_one_code_exactly_one_gets_it(
    database: str,
) -> None:
    async def test(storage: Storage) -> None:
        writes = [
            storage.create(coded(f"P{n}", "SKU-x" if n % 2 else "SKU-X"), CLI) for n in range(10)
        ]
        results = await asyncio.gather(*writes, return_exceptions=True)
        assert sum(isinstance(r, Produto) for r in results) == 1
        assert sum(isinstance(r, CodigoTaken) for r in results) == 9

    run(database, test)


def test_a_list_finds_products_by_their_codes_and_its_words_find_a_code(database: str) -> None:
    async def test(storage: Storage) -> None:
        a = await storage.create(coded("Caneca", "CAN-AZ-300"), CLI)
        b = await storage.create(coded("Caderno", "CAD-01"), CLI)
        await storage.create(coded("Lápis", None), CLI)
        both = Query(codigos=(codigo_key("can-az-300"), codigo_key("cad-01")))
        assert [p.id for p in (await storage.find(both, Cursor(10))).items] == [b.id, a.id]
        by_word = Query(terms("az-300"))
        assert [p.id for p in (await storage.find(by_word, Cursor(10), count=10)).items] == [a.id]
        assert (await storage.find(Query(codigos=("can-az",)), Cursor(10))).items == []

    run(database, test)


def test_an_export_reads_the_whole_result_in_chunks_as_of_one_moment(database: str) -> None:
    async def test(storage: Storage) -> None:
        ids = [(await storage.create(produto(f"Caneca {n}"), CLI)).id for n in range(5)]
        await storage.create(produto("Lápis"), CLI)
        chunks = storage.export(Query(terms("caneca")), chunk=2)
        first = await anext(chunks)
        await storage.create(produto("Caneca nova"), CLI)
        assert ids[0] is not None
        await storage.remove(ids[0], None, CLI)
        read = [[p.id for p in chunk] for chunk in [first, *[c async for c in chunks]]]
        assert read == [[ids[4], ids[3]], [ids[2], ids[1]], [ids[0]]]

    run(database, test)


def test_an_export_walks_any_order_as_the_list_pages_it(database: str) -> None:
    async def test(storage: Storage) -> None:
        for n, nome in enumerate(["b", "a", "c", "a", "b"]):
            await storage.create(Produto(nome=nome, preco=Decimal(n + 1)), CLI)
        for ordem in ("nome", "-preco", "atualizado_em"):
            query = Query(ordem=ordem)
            listed = (await storage.find(query, Cursor(10))).items
            exported = [p async for chunk in storage.export(query, chunk=2) for p in chunk]
            assert exported == listed

    run(database, test)


def test_writes_applied_together_are_all_or_nothing_each_with_its_event(database: str) -> None:
    async def test(storage: Storage) -> None:
        caneca = await storage.create(produto("Caneca"), CLI)
        copo = await storage.create(produto("Copo"), CLI)
        assert caneca.id is not None and copo.id is not None
        batch = CLI._replace(origem="importacao", lote="lote-1")
        stale = [
            Write(None, None, produto("Prato")),
            Write(caneca.id, caneca.versao, produto("Caneca azul")),
            Write(copo.id, 7, produto("Copo azul")),  # copo is at version 1
        ]
        with pytest.raises(VersionConflict):
            await storage.write_many(stale, batch)
        assert [p.nome for p in (await storage.find(Query(), Cursor(9))).items] == [
            "Copo",
            "Caneca",
        ]
        done = await storage.write_many(
            [*stale[:2], Write(copo.id, 1, produto("Copo azul"))], batch
        )
        assert [(p.nome, p.versao) for p in done] == [
            ("Prato", 1),
            ("Caneca azul", 2),
            ("Copo azul", 2),
        ]
        events = await storage.events(0, 100)
        last = [(e.produto_id, e.tipo, e.origem, e.lote) for e in events[-3:]]
        assert last == [
            (done[0].id, "criado", "importacao", "lote-1"),
            (caneca.id, "alterado", "importacao", "lote-1"),
            (copo.id, "alterado", "importacao", "lote-1"),
        ]

    run(database, test)


def test_a_batch_is_undone_whole_or_not_at_all_if_one_of_its_products_is_not_as_it_left_it(
    database: str,
) -> None:
    async def test(storage: Storage) -> None:
        caneca = await storage.create(Produto(nome="Caneca", preco=Decimal(10), codigo="C-1"), CLI)
        assert caneca.id is not None
        batch = CLI._replace(origem="importacao", lote="lote-2")
        novo, mudado = await storage.write_many(
            [Write(None, None, produto("Prato")), Write(caneca.id, 1, produto("Caneca azul"))],
            batch,
        )
        assert novo.id is not None and mudado.codigo == "C-1"  # not named: kept
        await storage.update(novo.id, produto("Prato fundo"), None, CLI)
        with pytest.raises(ChangedSince) as moved:
            await storage.undo_batch("lote-2", CLI._replace(lote="lote-2:desfeita"))
        assert moved.value.ids == [novo.id]
        assert (await storage.get(caneca.id)) == mudado  # nothing undone
        await storage.remove(novo.id, None, CLI)
        with pytest.raises(ChangedSince):  # removed since: not as the batch left it
            await storage.undo_batch("lote-2", CLI)
        await storage.restore(novo.id, CLI)
        await storage.update(novo.id, produto("Prato"), None, CLI)
        assert await storage.undo_batch("lote-2", CLI) == 2  # edited back: as the batch left it
        with pytest.raises(NotFound):
            await storage.undo_batch("lote-que-nao-existe", CLI)

    run(database, test)


def test_undoing_a_batch_removes_what_it_created_and_gives_back_what_it_changed(
    database: str,
) -> None:
    async def test(storage: Storage) -> None:
        caneca = await storage.create(Produto(nome="Caneca", preco=Decimal(10), codigo="C-1"), CLI)
        assert caneca.id is not None
        batch = CLI._replace(origem="importacao", lote="lote-3")
        changed = Produto(nome="Caneca azul", preco=Decimal(12), codigo=None)
        novo, _ = await storage.write_many(
            [Write(None, None, produto("Prato")), Write(caneca.id, 1, changed)], batch
        )
        assert await storage.undo_batch("lote-3", CLI._replace(lote="lote-3:desfeita")) == 2
        assert [(e.produto_id, e.versao) for e in (await storage.events(0, 100))[-2:]] == [
            (novo.id, 2),
            (caneca.id, 3),
        ]
        back = await storage.get(caneca.id)
        assert back is not None
        assert (back.nome, back.preco, back.codigo) == ("Caneca", Decimal("10.00"), "C-1")
        assert await storage.get(novo.id or 0) is None and await storage.removed(novo.id or 0)
        events = (await storage.events(0, 100))[-2:]
        assert [(e.tipo, e.lote) for e in events] == [
            ("removido", "lote-3:desfeita"),
            ("alterado", "lote-3:desfeita"),
        ]

    run(database, test)


def test_a_batch_larger_than_a_stretch_is_undone_whole_and_refused_whole(database: str) -> None:
    async def test(storage: Storage) -> None:
        batch = CLI._replace(origem="importacao", lote="lote-4")
        made = await storage.write_many(
            [Write(None, None, produto(f"Prato {n}")) for n in range(2500)], batch
        )
        last = made[-1].id or 0
        await storage.update(last, produto("Prato mudado"), None, CLI)
        with pytest.raises(ChangedSince) as moved:  # found in the third stretch: nothing undone
            await storage.undo_batch("lote-4", CLI._replace(lote="lote-4:desfeita"))
        assert moved.value.ids == [last]
        assert (await storage.find(Query(), Cursor(1), count=10_000)).total == 2500
        await storage.update(last, produto("Prato 2499"), None, CLI)
        assert await storage.undo_batch("lote-4", CLI._replace(lote="lote-4:desfeita")) == 2500
        assert (await storage.find(Query(), Cursor(1), count=10_000)).total == 0

    run(database, test)
