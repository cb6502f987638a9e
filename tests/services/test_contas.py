"""Accounts' use cases, as the pages, the JSON API and the CLI all call them, on SQLite and on
PostgreSQL: what each checks before it writes, and that a refusal writes nothing."""

import pytest

from catalogo.domain.contas import ContaInvalida, UnknownUser, UserExists
from catalogo.domain.senhas import Passwords
from catalogo.services.contas import change_password, check_password, create_user, issue_token
from catalogo.storage import Storage
from tests.databases import Database
from tests.helpers import SENHA, with_storage

ADDRESS = "192.0.2.7"


def test_a_user_created_with_a_name_written_otherwise_signs_in_by_that_name(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        made = await create_user(storage, passwords, "  Maria ", "editor", SENHA)
        assert (made.nome, made.papel) == ("maria", "editor")
        signed = await check_password(storage, passwords, "maria", SENHA, ADDRESS, 1.0)
        assert signed is not None and signed.id == made.id
        wrong = await check_password(storage, passwords, "maria", "x" * 12, ADDRESS, 2.0)
        assert wrong is None
        with pytest.raises(UserExists):
            await create_user(storage, passwords, "MARIA", "leitor", SENHA)

    with_storage(database, test)


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
            await create_user(storage, passwords, nome, papel, senha)

    with_storage(database, test)
    assert db.execute("SELECT count(*) FROM usuarios").fetchone()[0] == 0


def test_a_new_password_typed_differently_twice_changes_nothing(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        await create_user(storage, passwords, "maria", "admin", SENHA)
        nova = "outra senha longa o bastante"
        with pytest.raises(ContaInvalida, match="não são iguais"):
            await change_password(storage, passwords, "maria", nova, nova + "!")
        assert await check_password(storage, passwords, "maria", SENHA, ADDRESS, 1.0)
        await change_password(storage, passwords, "maria", nova, nova)
        assert await check_password(storage, passwords, "maria", nova, ADDRESS, 2.0)

    with_storage(database, test)


def test_a_token_is_at_most_its_users_role_and_names_an_existing_user(database: str) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        await create_user(storage, passwords, "ana", "leitor", SENHA)
        await create_user(storage, passwords, "maria", "admin", SENHA)
        token, secret = await issue_token(storage, "Maria", " robô  da loja ", None, "7")
        assert (token.usuario, token.nome, token.papel) == ("maria", "robô da loja", "editor")
        assert secret.startswith("cat_") and token.expira_em is not None
        with pytest.raises(ContaInvalida, match="no máximo"):
            await issue_token(storage, "ana", "script", "editor", None)
        with pytest.raises(UnknownUser):
            await issue_token(storage, "ninguem", "script", None, None)
        assert [t.id for t in await storage.tokens()] == [token.id]

    with_storage(database, test)
