"""Importing a spreadsheet (services/importacoes.py), on SQLite and on PostgreSQL: the dry run's
report, staging it in the database, confirming it all or nothing, and undoing it."""

import csv
import io
import time
from decimal import Decimal

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalogo.domain.busca import Query
from catalogo.domain.errors import (
    ChangedSince,
    CodigoTaken,
    ImportExpired,
    ImportNotApplied,
    ImportRefused,
    ImportUndone,
)
from catalogo.domain.historico import CLI
from catalogo.domain.produtos import Produto
from catalogo.domain.senhas import Passwords
from catalogo.services import importacoes, previa
from catalogo.services.exportacoes import csv_export
from catalogo.storage import Storage
from catalogo.storage.paging import Cursor
from tests.helpers import with_storage


def csv_of(*lines: str) -> bytes:
    return ("\ufeff" + "\r\n".join(lines) + "\r\n").encode()


def test_an_export_imported_back_changes_nothing_and_three_new_prices_are_three_changes(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        for n in range(5):
            await storage.create(Produto(nome=f"Caneca {n}", preco=Decimal(10 + n)), CLI)
        exported = b"".join([piece async for piece in csv_export(storage, Query(), "csv")])
        same = await previa.dry_run(storage, exported)
        assert (same.lines, same.inalterados) == ([], 5)
        table = list(csv.reader(io.StringIO(exported.decode("utf-8-sig")), delimiter=";"))
        for row in table[1:4]:
            row[4] = "99,90"  # the preco column
        edited = io.StringIO()
        csv.writer(edited, delimiter=";", lineterminator="\r\n").writerows(table)
        report = await previa.dry_run(storage, edited.getvalue().encode())
        changed = report.of("alterado")
        assert [len(p["alteracoes"]) for p in changed] == [1, 1, 1]
        assert {p["alteracoes"][0]["depois"] for p in changed} == {"R$ 99,90"}
        assert report.inalterados == 2 and len(report.lines) == 3

    with_storage(database, test)


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
        report = await previa.dry_run(storage, data)
        assert list(map(str, report.erros)) == [
            "linha 2, preço: «1.234» é ambíguo: se são milhares, escreva 1234,00; os centavos "
            "vão depois da vírgula, com no máximo duas casas.",
            f"linha 3, versão: O produto {other.id} mudou desde a versão 9 (está na 1): exporte "
            "de novo e refaça a alteração.",
            "linha 5, nome: Preencha este campo.",
            "linha 7, código: Repetido: a linha 6 já traz este código.",
            "linha 8, código: Repetido: a linha 4 já traz este código.",
        ]
        assert [(p["linha"], p["nome"]) for p in report.of("novo")] == [(6, "=Fórmula")]
        assert [(p["id"], p["alteracoes"]) for p in report.of("alterado")] == [
            (made.id, [{"campo": "nome", "antes": "Caneca", "depois": "Caneca grande"}])
        ]
        assert report.ignoradas == ("cor",)
        assert (await storage.get(made.id or 0)) == made  # a dry run writes nothing
        taken = await previa.dry_run(storage, csv_of("id;codigo", f"{prato.id};can-1"))
        assert list(map(str, taken.erros)) == [
            f"linha 2, código: O código «can-1» já é do produto {made.id}."
        ]

    with_storage(database, test)


def test_an_import_confirmed_writes_what_its_dry_run_said_and_nothing_if_a_product_moved_on(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        caneca = await storage.create(Produto(nome="Caneca", preco=Decimal(10)), CLI)
        data = csv_of("id;nome;preco", f"{caneca.id};Caneca azul;12,00", ";Copo;3,00")
        staged, _ = await importacoes.stage(storage, data, "utf-8", "a.csv", CLI, time.time())
        assert staged.resumo == {
            "novos": 1,
            "alterados": 1,
            "restaurados": 0,
            "inalterados": 0,
            "erros": 0,
            "colunas_ignoradas": [],
        }
        await storage.update(caneca.id or 0, Produto(nome="Caneca", preco=Decimal(11)), None, CLI)
        with pytest.raises(importacoes.ImportMoved) as moved:
            await importacoes.confirm(storage, staged.id, CLI, None, time.time())
        assert (await storage.find(Query(), Cursor(9))).items[0].id == caneca.id  # no Copo
        fresh = await importacoes.report_page(storage, moved.value.importacao, 1)
        assert fresh.alterados[0]["alteracoes"] == [
            {"campo": "nome", "antes": "Caneca", "depois": "Caneca azul"},
            {"campo": "preco", "antes": "R$ 11,00", "depois": "R$ 12,00"},
        ]
        applied, now = await importacoes.confirm(storage, staged.id, CLI, "k1", time.time())
        assert now and applied.estado == "aplicada" and applied.chave == "k1"
        again, now = await importacoes.confirm(storage, staged.id, CLI, None, time.time())
        assert not now and again == applied  # confirming twice applies once
        events = await storage.events(0, 100)
        assert [(e.tipo, e.origem, e.lote) for e in events[-2:]] == [
            ("alterado", "importacao", staged.id),  # in the file's order
            ("criado", "importacao", staged.id),
        ]
        assert len(await storage.batch_events(staged.id, 0, 10)) == 2
        repeated = await previa.dry_run(storage, data)  # a row with no key is new again:
        assert repeated.inalterados == 1 and [p["nome"] for p in repeated.of("novo")] == ["Copo"]

    with_storage(database, test)


def test_an_import_undone_gives_back_what_it_changed_once_and_never_over_a_later_edit(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        caneca = await storage.create(Produto(nome="Caneca", preco=Decimal(10)), CLI)
        data = csv_of("id;preco", f"{caneca.id};12,00")
        staged, _ = await importacoes.stage(storage, data, "utf-8", "a.csv", CLI, time.time())
        with pytest.raises(ImportNotApplied):
            await importacoes.undo(storage, staged.id, CLI, time.time())
        await importacoes.confirm(storage, staged.id, CLI, None, time.time())
        later = csv_of("id;nome", f"{caneca.id};Caneca nova")
        other, _ = await importacoes.stage(storage, later, "utf-8", "b.csv", CLI, time.time())
        await importacoes.confirm(storage, other.id, CLI, None, time.time())
        with pytest.raises(ChangedSince) as moved:
            await importacoes.undo(storage, staged.id, CLI, time.time())
        assert moved.value.ids == [caneca.id]
        await importacoes.undo(storage, other.id, CLI, time.time())
        undone, count = await importacoes.undo(storage, staged.id, CLI, time.time())
        assert count == 1 and undone.estado == "desfeita"
        back = await storage.get(caneca.id or 0)
        assert back is not None and (back.nome, back.preco) == ("Caneca", Decimal(10))
        with pytest.raises(ImportUndone):
            await importacoes.undo(storage, staged.id, CLI, time.time())

    with_storage(database, test)


def test_a_dry_run_past_its_hour_cannot_be_confirmed_and_its_rows_are_forgotten(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        long_ago = time.time() - importacoes.STAGED_FOR_S - 1
        data = csv_of("nome;preco", "Copo;3,00")
        old, _ = await importacoes.stage(storage, data, "utf-8", "a.csv", CLI, long_ago)
        assert importacoes.estado(old, time.time()) == "expirada"
        with pytest.raises(ImportExpired):
            await importacoes.confirm(storage, old.id, CLI, None, time.time())
        await importacoes.stage(storage, data, "utf-8", "b.csv", CLI, time.time())
        assert await storage.import_lines(old.id, "novo", 0, 10) == []
        assert await storage.import_file(old.id) is None
        assert [i.arquivo for i in await storage.importacoes(10)] == ["b.csv", "a.csv"]
        assert (await storage.find(Query(), Cursor(1))).items == []

    with_storage(database, test)


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
            report = await previa.dry_run(storage, buffer.getvalue().encode())
        except ImportRefused:
            return
        assert report.counts["novo"] + report.counts["alterado"] <= len(lines)
        assert (await storage.find(Query(), Cursor(1))).items == []

    with_storage(database, test)


def test_a_code_no_product_may_have_is_refused_by_its_rules_not_sent_to_the_database(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        report = await previa.dry_run(storage, csv_of("codigo;nome;preco", "a\x00b;X;1"))
        assert list(map(str, report.erros)) == [
            "linha 2, código: Contém um caractere invisível não permitido (código U+0000)."
        ]

    with_storage(database, test)


def test_a_code_a_removed_product_keeps_restores_it_and_is_refused_to_another_product(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        kept = await storage.create(Produto(nome="Caneca", preco=Decimal(10), codigo="C-1"), CLI)
        other = await storage.create(Produto(nome="Prato", preco=Decimal(5)), CLI)
        await storage.remove(kept.id or 0, None, CLI)
        report = await previa.dry_run(storage, csv_of("codigo;nome;preco", "c-1;Copo;3,00"))
        (restore,) = report.of("alterado")
        assert restore["id"] == kept.id and restore["restaura"] is True
        assert report.resumo()["restaurados"] == 1 and report.resumo()["alterados"] == 0
        report = await previa.dry_run(storage, csv_of("id;codigo", f"{other.id};c-1"))
        assert [e.mensagem for e in report.erros] == [
            CodigoTaken("c-1", kept.id or 0, removed=True).message  # as the file writes it
        ]

    with_storage(database, test)


def test_one_product_named_by_its_id_on_one_row_and_its_code_on_another_is_an_error(
    database: str,
) -> None:
    async def test(storage: Storage, passwords: Passwords) -> None:
        made = await storage.create(Produto(nome="Caneca", preco=Decimal(10), codigo="X"), CLI)
        data = csv_of("id;codigo;nome", f"{made.id};Y;", ";X;Novo nome")
        report = await previa.dry_run(storage, data)
        assert [str(e) for e in report.erros] == [
            f"linha 3, código: Repetido: a linha 2 já altera o produto {made.id}."
        ]

    with_storage(database, test)


def test_a_stray_cell_far_right_of_a_sheet_does_not_widen_its_header(database: str) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["nome", "preco"])
    sheet.append(["Caneca", 12.5])
    sheet.cell(row=6, column=60, value="uma nota")
    saved = io.BytesIO()
    book.save(saved)

    async def test(storage: Storage, passwords: Passwords) -> None:
        report = await previa.dry_run(storage, saved.getvalue())
        assert report.counts["novo"] == 1 and report.erros == []

    with_storage(database, test)
