"""A batch's use cases (services/lotes.py), on SQLite and PostgreSQL: the plan writes nothing, a
confirmation applies once and only over the versions it showed, and undo gives it all back."""

from decimal import Decimal

import pytest

from catalogo.domain.busca import Query
from catalogo.domain.errors import ChangedSince
from catalogo.domain.historico import CLI
from catalogo.domain.lotes import BatchUndone, LoteInvalido, Pedido
from catalogo.domain.produtos import Produto
from catalogo.domain.senhas import Passwords
from catalogo.services import lotes
from catalogo.storage import Storage
from catalogo.storage.paging import Cursor
from tests.helpers import with_storage


def test_a_plan_writes_nothing_and_its_confirmation_applies_once(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        made = [
            await storage.create(Produto(nome=f"P{n}", preco=Decimal(10 + n)), CLI)
            for n in range(3)
        ]
        pedido = Pedido("reajustar", percentual=Decimal(10))
        chosen = await lotes.selected(storage, [p.id or 0 for p in made], None, 100)
        planned = lotes.plan(pedido, chosen, "maria")
        assert [i.depois for i in planned.itens] == [
            Decimal("11.00"),
            Decimal("12.10"),
            Decimal("13.20"),
        ]
        assert [
            p.versao for p in await lotes.selected(storage, [p.id or 0 for p in made], None, 9)
        ] == [1, 1, 1]
        seen = [(i.produto.id or 0, i.produto.versao or 0) for i in planned.itens]
        assert await lotes.confirm(storage, pedido, seen, planned.lote, CLI) == (3, True)
        assert await lotes.confirm(storage, pedido, seen, planned.lote, CLI) == (3, False)
        events = await storage.batch_events(planned.lote, 0, 10)
        assert [(e.tipo, e.origem) for e in events] == [("alterado", "lote")] * 3
        assert await lotes.undo(storage, planned.lote, CLI) == 3
        with pytest.raises(BatchUndone):
            await lotes.undo(storage, planned.lote, CLI)

    with_storage(database, test)


def test_a_confirmation_over_a_version_that_moved_on_writes_nothing(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        a = await storage.create(Produto(nome="A", preco=Decimal(10)), CLI)
        b = await storage.create(Produto(nome="B", preco=Decimal(20)), CLI)
        await storage.update(b.id or 0, Produto(nome="B", preco=Decimal(21)), None, CLI)
        with pytest.raises(lotes.BatchMoved) as moved:
            await lotes.confirm(
                storage, Pedido("remover"), [(a.id or 0, 1), (b.id or 0, 1)], "f" * 32, CLI
            )
        assert moved.value.ids == [b.id]
        assert len((await storage.find(Query(), Cursor(9))).items) == 2

    with_storage(database, test)


def test_all_a_search_finds_is_one_snapshot_within_the_cap(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        for n in range(3):
            await storage.create(Produto(nome=f"Caneca {n}", preco=Decimal(5)), CLI)
        await storage.create(Produto(nome="Copo", preco=Decimal(5)), CLI)
        found = await lotes.selected(storage, None, "q=caneca&ordem=nome", 3)
        assert [p.nome for p in found] == ["Caneca 0", "Caneca 1", "Caneca 2"]
        with pytest.raises(LoteInvalido, match="mais de 2"):
            await lotes.selected(storage, None, "q=caneca", 2)

    with_storage(database, test)


def test_undoing_a_removal_batch_after_one_product_came_back_is_refused_whole(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        a = await storage.create(Produto(nome="A", preco=Decimal(10)), CLI)
        b = await storage.create(Produto(nome="B", preco=Decimal(10)), CLI)
        lote = lotes.batch_id("maria chave-1", Pedido("remover"), "[1, 2]")
        assert lote == lotes.batch_id("maria chave-1", Pedido("remover"), "[1, 2]")  # a retry
        await lotes.confirm(storage, Pedido("remover"), [(a.id or 0, 1), (b.id or 0, 1)], lote, CLI)
        await storage.restore(a.id or 0, CLI)
        with pytest.raises(ChangedSince) as moved:
            await lotes.undo(storage, lote, CLI)
        assert moved.value.ids == [a.id]
        assert await storage.get(b.id or 0) is None

    with_storage(database, test)
