"""The products' use cases, as the pages, the JSON API and the CLI all call them, on SQLite
and on PostgreSQL."""

from decimal import Decimal

import pytest

from catalogo.domain.historico import CLI
from catalogo.domain.produtos import Produto
from catalogo.domain.senhas import Passwords
from catalogo.services.produtos import MergeConflict, save_merged
from catalogo.storage import Storage
from tests.helpers import with_storage


def test_a_stale_edit_is_saved_merged_with_what_others_saved_meanwhile(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        first = await storage.create(Produto(nome="Caneca", preco=Decimal("10")), CLI)
        assert first.id is not None and first.versao is not None
        theirs = first.model_copy(update={"preco": Decimal("12")})
        moved = (await storage.update(first.id, theirs, None, CLI)).produto
        mine = first.model_copy(update={"nome": "Caneca grande"})
        merged = await save_merged(storage, mine, first.versao, moved, CLI)
        assert (merged.produto.nome, merged.produto.preco) == ("Caneca grande", Decimal("12"))
        assert merged.theirs == ("preco",) and merged.changed
        clash = first.model_copy(update={"preco": Decimal("15")})
        with pytest.raises(MergeConflict) as conflict:
            await save_merged(storage, clash, first.versao, merged.produto, CLI)
        assert conflict.value.merged.conflicts == ("preco",)
        assert (await storage.get(first.id)) == merged.produto

    with_storage(database, test)
