"""Each use case, as the pages, the JSON API and the CLI all call it, on SQLite and on
PostgreSQL: what it checks before it writes, and that a refusal writes nothing."""

import asyncio
from collections.abc import Awaitable, Callable
from decimal import Decimal

import pytest

from catalogo import services
from catalogo.accounts import ContaInvalida, Passwords
from catalogo.history import CLI
from catalogo.produtos import Produto
from catalogo.settings import Settings
from catalogo.storage import Storage, UnknownUser, UserExists, open_storage
from tests.databases import Database
from tests.helpers import SENHA

ADDRESS = "192.0.2.7"


def run(database: str, test: Callable[[Storage, Passwords], Awaitable[None]]) -> None:
    async def opened() -> None:
        storage = await open_storage(Settings(database_url=database))
        try:
            await test(storage, Passwords())
        finally:
            await storage.close()

    asyncio.run(opened())


def test_a_user_created_with_a_name_written_otherwise_signs_in_by_that_name(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        made = await services.create_user(storage, passwords, "  Maria ", "editor", SENHA)
        assert (made.nome, made.papel) == ("maria", "editor")
        signed = await services.check_password(storage, passwords, "maria", SENHA, ADDRESS, 1.0)
        assert signed is not None and signed.id == made.id
        wrong = await services.check_password(storage, passwords, "maria", "x" * 12, ADDRESS, 2.0)
        assert wrong is None
        with pytest.raises(UserExists):
            await services.create_user(storage, passwords, "MARIA", "leitor", SENHA)

    run(database, test)


@pytest.mark.parametrize(
    ("nome", "papel", "senha", "said"),
    [
        ("", "editor", SENHA, "Informe o nome"),
        ("jo ana", "editor", SENHA, "O nome do usuário"),
        ("joana", "dono", SENHA, "O papel deve ser"),
        ("joana", "editor", "curta", "pelo menos 12"),
    ],
)
def test_a_user_refused_is_never_stored(
    database: str, db: Database, nome: str, papel: str, senha: str, said: str
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        with pytest.raises(ContaInvalida, match=said):
            await services.create_user(storage, passwords, nome, papel, senha)

    run(database, test)
    assert db.execute("SELECT count(*) FROM usuarios").fetchone()[0] == 0


def test_a_new_password_typed_differently_twice_changes_nothing(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        await services.create_user(storage, passwords, "maria", "admin", SENHA)
        nova = "outra senha longa o bastante"
        with pytest.raises(ContaInvalida, match="não são iguais"):
            await services.change_password(storage, passwords, "maria", nova, nova + "!")
        assert await services.check_password(storage, passwords, "maria", SENHA, ADDRESS, 1.0)
        await services.change_password(storage, passwords, "maria", nova, nova)
        assert await services.check_password(storage, passwords, "maria", nova, ADDRESS, 2.0)

    run(database, test)


def test_a_token_is_at_most_its_users_role_and_names_an_existing_user(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        await services.create_user(storage, passwords, "ana", "leitor", SENHA)
        await services.create_user(storage, passwords, "maria", "admin", SENHA)
        token, secret = await services.issue_token(storage, "Maria", " robô  da loja ", None, "7")
        assert (token.usuario, token.nome, token.papel) == ("maria", "robô da loja", "editor")
        assert secret.startswith("cat_") and token.expira_em is not None
        with pytest.raises(ContaInvalida, match="no máximo"):
            await services.issue_token(storage, "ana", "script", "editor", None)
        with pytest.raises(UnknownUser):
            await services.issue_token(storage, "ninguem", "script", None, None)
        assert [t.id for t in await storage.tokens()] == [token.id]

    run(database, test)


def test_a_stale_edit_is_saved_merged_with_what_others_saved_meanwhile(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        first = await storage.create(Produto(nome="Caneca", preco=Decimal("10")), CLI)
        assert first.id is not None and first.versao is not None
        theirs = first.model_copy(update={"preco": Decimal("12")})
        moved = (await storage.update(first.id, theirs, None, CLI)).produto
        mine = first.model_copy(update={"nome": "Caneca grande"})
        merged = await services.save_merged(storage, mine, first.versao, moved, CLI)
        assert (merged.produto.nome, merged.produto.preco) == ("Caneca grande", Decimal("12"))
        assert merged.theirs == ("preco",) and merged.changed
        clash = first.model_copy(update={"preco": Decimal("15")})
        with pytest.raises(services.MergeConflict) as conflict:
            await services.save_merged(storage, clash, first.versao, merged.produto, CLI)
        assert conflict.value.merged.conflicts == ("preco",)
        assert (await storage.get(first.id)) == merged.produto

    run(database, test)
