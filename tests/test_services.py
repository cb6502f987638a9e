"""Each use case, as the pages, the JSON API and the CLI all call it, on SQLite and on
PostgreSQL: what it checks before it writes, and that a refusal writes nothing."""

import asyncio
import csv
import io
from collections.abc import Awaitable, Callable
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalogo import importing, services
from catalogo.accounts import ContaInvalida, Passwords
from catalogo.history import CLI
from catalogo.produtos import Produto
from catalogo.search import Query
from catalogo.settings import Settings
from catalogo.storage import Storage, UnknownUser, UserExists, VersionConflict, open_storage
from catalogo.storage.paging import Cursor
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


def csv_of(*lines: str) -> bytes:
    return ("\ufeff" + "\r\n".join(lines) + "\r\n").encode()


def test_an_export_imported_back_changes_nothing_and_three_new_prices_are_three_changes(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        for n in range(5):
            await storage.create(Produto(nome=f"Caneca {n}", preco=Decimal(10 + n)), CLI)
        exported = b"".join([piece async for piece in services.csv_export(storage, Query(), "csv")])
        same = await services.import_report(storage, exported)
        assert (same.novos, same.alterados, same.inalterados, same.erros) == ([], [], 5, [])
        table = list(csv.reader(io.StringIO(exported.decode("utf-8-sig")), delimiter=";"))
        for row in table[1:4]:
            row[4] = "99,90"  # the preco column
        edited = io.StringIO()
        csv.writer(edited, delimiter=";", lineterminator="\r\n").writerows(table)
        report = await services.import_report(storage, edited.getvalue().encode())
        assert [len(p.changes) for p in report.alterados] == [1, 1, 1]
        assert {p.changes[0][2] for p in report.alterados} == {"R$ 99,90"}
        assert report.inalterados == 2 and not report.erros and not report.novos

    run(database, test)


def test_a_bad_file_gets_one_precise_message_per_problem_and_keys_are_read_in_order(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        made = await storage.create(Produto(nome="Caneca", preco=Decimal(10), codigo="CAN-1"), CLI)
        other = await storage.create(Produto(nome="Copo", preco=Decimal(5)), CLI)
        prato = await storage.create(Produto(nome="Prato", preco=Decimal(7)), CLI)
        data = csv_of(
            "id;versao;codigo;nome;preco;cor",
            f"{made.id};{made.versao};;;1.234;azul",  # an ambiguous price
            f"{other.id};9;;;6,00;",  # a stale version
            ";;can-1;Caneca grande;;",  # an upsert by code: a new name
            ";;NOVO-1;;3,00;",  # a new product without its name
            ";;NOVO-2;'=Fórmula;3,00;",  # a new product, the export's quote taken off
            ";;novo-2;Outra;4,00;",  # the same code again
            f"{prato.id};;Can-1;;;",  # a code another product holds
        )
        report = await services.import_report(storage, data)
        assert report.erros == [
            "linha 2, preço: «1.234» é ambíguo: se são milhares, escreva 1234,00; os centavos "
            "vão depois da vírgula, com no máximo duas casas.",
            f"linha 3, versão: O produto {other.id} mudou desde a versão 9 (está na 1): exporte "
            "de novo e refaça a alteração.",
            "linha 5, nome: Preencha este campo.",
            "linha 7, código: Repetido: a linha 6 já traz este código.",
            "linha 8, código: Repetido: a linha 4 já traz este código.",
        ]
        assert [(p.line, p.nome) for p in report.novos] == [(6, "=Fórmula")]
        assert [(p.produto_id, p.changes) for p in report.alterados] == [
            (made.id, [("nome", "Caneca", "Caneca grande")])
        ]
        assert report.ignoradas == ("cor",)
        assert (await storage.get(made.id or 0)) == made  # a dry run writes nothing
        taken = await services.import_report(storage, csv_of("id;codigo", f"{prato.id};can-1"))
        assert taken.erros == [f"linha 2, código: O código «can-1» já é do produto {made.id}."]

    run(database, test)


def test_an_import_applied_writes_what_its_dry_run_said_and_nothing_if_a_product_moved_on(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        caneca = await storage.create(Produto(nome="Caneca", preco=Decimal(10)), CLI)
        data = csv_of("id;nome;preco", f"{caneca.id};Caneca azul;12,00", ";Copo;3,00")
        report = await services.import_report(storage, data)
        await storage.update(caneca.id or 0, Produto(nome="Caneca", preco=Decimal(11)), None, CLI)
        with pytest.raises(VersionConflict):
            await services.apply_import(storage, report, CLI)
        assert (await storage.find(Query(), Cursor(9))).items[0].id == caneca.id  # no Copo
        lote = await services.apply_import(
            storage, await services.import_report(storage, data), CLI
        )
        events = await storage.events(0, 100)
        assert [(e.tipo, e.origem, e.lote) for e in events[-2:]] == [
            ("criado", "importacao", lote),
            ("alterado", "importacao", lote),
        ]
        again = await services.import_report(storage, data)  # a row with no key is new again:
        assert again.inalterados == 1 and [p.nome for p in again.novos] == ["Copo"]  # shown first

    run(database, test)


CELL = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", "1", "0", "-1", "1.234", "12,50", "(vazio)", "'=1", "\x00", "9" * 30]),
)


# One database for every example: a dry run writes nothing, which the test checks.
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.sampled_from(["codigo", "id", "versao", "nome", "preco", "cor"]), max_size=6),
    st.lists(st.lists(CELL, max_size=7), max_size=8),
)
def test_no_file_makes_the_dry_run_fail_otherwise_than_by_refusing_it(
    database: str, titles: list[str], lines: list[list[str]]
) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=";").writerows([titles, *lines])

    async def test(storage: Storage, passwords: Passwords) -> None:
        try:
            report = await services.import_report(storage, buffer.getvalue().encode())
        except importing.ImportRefused:
            return
        assert len(report.novos) + len(report.alterados) <= len(lines)
        assert (await storage.find(Query(), Cursor(1))).items == []

    run(database, test)


def test_a_code_no_product_may_have_is_refused_by_its_rules_not_sent_to_the_database(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        report = await services.import_report(storage, csv_of("codigo;nome;preco", "a\x00b;X;1"))
        assert report.erros == [
            "linha 2, código: Contém um caractere invisível não permitido (código U+0000)."
        ]

    run(database, test)
