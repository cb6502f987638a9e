"""Imports over HTTP, on SQLite and PostgreSQL: the page and its form, the dry run kept in the
database, its report a page at a time, the confirmation (all or nothing, once) and the undo,
who may do them, and every kind of bad file answered with a clear 4xx that writes nothing."""

import csv
import html
import io
import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from catalogo.domain import planilhas
from catalogo.domain.planilhas import COLUMNS
from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests import workbooks
from tests.databases import Database
from tests.helpers import (
    JSON,
    ONLY_SQLITE,
    add_token,
    add_user,
    bearer,
    count_products,
    eventually,
    sign_in,
)
from tests.processes import Watched, address, fetch, serving, workers_of
from tests.workbooks import number, sheet, text, workbook

IMPORTS = "/produtos/importacoes"
PROBLEM = "application/problem+json"


def seed(client: TestClient, *nomes: str) -> list[int]:
    ids = []
    for n, nome in enumerate(nomes):
        made = client.post("/produtos", json={"nome": nome, "preco": f"{10 + n}.00"}, headers=JSON)
        assert made.status_code == 201, made.text
        ids.append(made.json()["id"])
    return ids


def sent(client: TestClient, data: bytes, name: str = "planilha.csv", **fields: str) -> Any:
    """The file sent as the page's form sends it, answered in JSON."""
    return client.post(IMPORTS, files={"arquivo": (name, data)}, data=fields, headers=JSON)


def csv_of(*lines: str, encoding: str = "utf-8-sig") -> bytes:
    return ("\r\n".join(lines) + "\r\n").encode(encoding)


def events_of(db: Database, lote: str) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = db.execute(
        "SELECT produto_id, tipo, origem FROM eventos WHERE lote = ? ORDER BY id", (lote,)
    ).fetchall()
    return found


def prices(db: Database) -> dict[int, Any]:
    column = "preco_centavos" if db.backend == "sqlite" else "preco"
    rows = db.execute(f"SELECT id, {column} FROM produtos WHERE removido_em IS NULL").fetchall()
    return dict(rows)


class TestTheRoundTrip:
    @pytest.mark.parametrize("formato", ["csv", "rfc4180", "xlsx"])
    def test_an_export_imported_back_changes_nothing_and_three_prices_are_three_changes(
        self, client: TestClient, db: Database, formato: str
    ) -> None:
        ids = seed(client, "Caneca", "Copo", "Prato", "Pires", "Jarra")
        before = prices(db)
        if formato == "rfc4180":
            exported = client.get("/produtos", headers={"Accept": "text/csv"}).content
        else:
            exported = client.get(f"/produtos?formato={formato}").content
        same = sent(client, exported, f"catalogo.{'xlsx' if formato == 'xlsx' else 'csv'}")
        assert same.status_code == 201, same.text
        assert same.json()["resumo"] == {
            "novos": 0,
            "alterados": 0,
            "restaurados": 0,
            "inalterados": 5,
            "erros": 0,
            "colunas_ignoradas": [],
        }
        edited = _three_prices_changed(exported, formato)
        staged = sent(client, edited, "editada")
        assert staged.status_code == 201, staged.text
        report = staged.json()
        assert report["resumo"]["alterados"] == 3 and report["resumo"]["inalterados"] == 2
        assert {a["alteracoes"][0]["depois"] for a in report["relatorio"]["alterados"]} == {
            "R$ 99,90"
        }
        confirmed = client.post(report["links"]["confirmacao"], headers=JSON)
        assert confirmed.status_code == 200 and confirmed.json()["estado"] == "aplicada"
        assert sorted(events_of(db, report["id"])) == sorted(
            (id, "alterado", "importacao") for id in ids[-3:]
        )  # the export lists the newest first: its first three rows are the last three made
        undone = client.post(confirmed.json()["links"]["reversao"], headers=JSON)
        assert undone.status_code == 200 and undone.json()["estado"] == "desfeita"
        assert prices(db) == before


def _three_prices_changed(exported: bytes, formato: str) -> bytes:
    if formato == "xlsx":
        book = openpyxl.load_workbook(io.BytesIO(exported))
        sheet = book.worksheets[0]
        for line in range(2, 5):
            sheet.cell(row=line, column=COLUMNS.index("preco") + 1, value=99.9)
        saved = io.BytesIO()
        book.save(saved)
        return saved.getvalue()
    delimiter = ";" if formato == "csv" else ","
    rows = list(csv.reader(io.StringIO(exported.decode("utf-8-sig")), delimiter=delimiter))
    for row in rows[1:4]:
        row[COLUMNS.index("preco")] = "99,90" if formato == "csv" else "99.90"
    text = io.StringIO()
    csv.writer(text, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return text.getvalue().encode("utf-8-sig")


class TestABadFile:
    def test_gets_one_precise_message_per_problem_and_nothing_is_written(
        self, client: TestClient, db: Database
    ) -> None:
        caneca, copo = seed(client, "Caneca", "Copo")
        client.post(
            "/produtos", json={"nome": "Jarra", "preco": "5", "codigo": "J-1"}, headers=JSON
        )
        data = csv_of(
            "id;versao;codigo;nome;preco",
            ";;;Pão;3,00",  # fine in Windows-1252
            ";;;=SOMA(A1:A2);3,00",  # a formula
            ";;NOVO-1;Prato;4,00",
            ";;novo-1;Pires;4,00",  # the same code again
            f"{copo};9;;;6,00",  # a stale version
            f"{caneca};;;;1.234",  # an ambiguous price
            ";;;;5,00",  # a new product without its name
            encoding="cp1252",
        )
        as_utf8 = sent(client, data)
        assert as_utf8.status_code == 422 and as_utf8.headers["content-type"] == PROBLEM
        assert "salve como «CSV UTF-8» ou escolha Windows-1252" in as_utf8.json()["detail"]
        staged = sent(client, data, codificacao="windows-1252")
        assert staged.status_code == 201, staged.text
        report = staged.json()
        assert [e["texto"] for e in report["relatorio"]["erros"]] == [
            "linha 3, nome: «=SOMA(A1:A2)» é uma fórmula, não um valor: salve a planilha com os "
            "valores calculados (no Excel, o xlsx já os guarda), ou comece a célula com ' para "
            "importar o texto como está.",
            "linha 5, código: Repetido: a linha 4 já traz este código.",
            f"linha 6, versão: O produto {copo} mudou desde a versão 9 (está na 1): exporte de "
            "novo e refaça a alteração.",
            "linha 7, preço: «1.234» é ambíguo: se são milhares, escreva 1234,00; os centavos "
            "vão depois da vírgula, com no máximo duas casas.",
            "linha 8, nome: Preencha este campo.",
        ]
        assert [n["nome"] for n in report["relatorio"]["novos"]] == ["Pão", "Prato"]
        assert "confirmacao" not in report["links"]
        refused = client.post(f"{IMPORTS}/{report['id']}/confirmacao", headers=JSON)
        assert refused.status_code == 422 and "tem erros" in refused.json()["detail"]
        assert count_products(db) == 3
        page = client.get(f"{IMPORTS}/{report['id']}").text
        assert "Nada será gravado enquanto houver erros" in page
        assert "Confirmar importação" not in page

    @pytest.mark.parametrize(
        ("data", "said"),
        [
            (b"", "O arquivo está vazio."),
            (b"cor;tamanho\r\nazul;P\r\n", "Nenhuma coluna conhecida"),
            (b"nome;Nome\r\nA;B\r\n", "A coluna «Nome» aparece duas vezes."),
            (";".join(f"c{n}" for n in range(10_000)).encode(), "10000 colunas"),
            (b"PK\x03\x04not a workbook at all", "A planilha não pôde ser lida"),
            (b"nome;preco\r\n" + b"x" * 200_000 + b";1\r\n", "passa de 131.072 caracteres"),
            (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "não é uma planilha: é uma imagem PNG"),
            (b"\xff\xd8\xff\xe0\x00\x10JFIF", "não é uma planilha: é uma imagem JPEG"),
            (b"%PDF-1.7\n%\xe2\xe3", "não é uma planilha: é um PDF"),
            (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Excel antigo (.xls"),
            ("nome;preco\r\nA;1\r\n".encode("utf-16"), "está em UTF-16"),
        ],
    )
    def test_that_cannot_be_read_as_a_whole_is_refused_with_what_to_do(
        self, client: TestClient, db: Database, data: bytes, said: str
    ) -> None:
        refused = sent(client, data)
        assert refused.status_code == 422, refused.text
        assert said in refused.json()["detail"]
        page = client.post(IMPORTS, files={"arquivo": ("x.csv", data)})
        assert page.status_code == 422 and said in page.text.replace("&#34;", '"')
        assert 'aria-invalid="true"' in page.text
        assert db.execute("SELECT count(*) FROM importacoes").fetchone()[0] == 0

    def test_with_more_rows_than_an_import_takes_is_refused_before_its_end(
        self, client: TestClient, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(planilhas, "ROWS_MAXIMUM", 10)
        data = csv_of("nome;preco", *(f"Produto {n};1,00" for n in range(11)))
        refused = sent(client, data)
        assert refused.status_code == 422
        assert "mais de 10 linhas" in refused.json()["detail"]
        assert (
            sent(client, csv_of("nome;preco", *(f"P{n};1" for n in range(10)))).status_code == 201
        )

    def test_without_a_file_or_with_another_body_says_how_to_send_it(
        self, client: TestClient
    ) -> None:
        none = client.post(IMPORTS, files={"arquivo": ("", b"")}, data={}, headers=JSON)
        assert none.status_code == 422 and "Escolha o arquivo" in none.json()["detail"]
        form = client.post(IMPORTS, data={"codificacao": "utf-8"}, headers=JSON)
        assert form.status_code == 415 and "multipart/form-data" in form.json()["detail"]
        encoding = sent(client, csv_of("nome;preco", "A;1"), codificacao="latin-9")
        assert encoding.status_code == 422 and "utf-8 ou windows-1252" in encoding.json()["detail"]


def test_a_program_may_send_the_file_as_the_body(client: TestClient) -> None:
    body = csv_of("nome;preco", "Pão;3,00", encoding="cp1252")
    staged = client.post(
        f"{IMPORTS}?codificacao=windows-1252",
        content=body,
        headers={"Content-Type": "text/csv", **JSON},
    )
    assert staged.status_code == 201, staged.text
    assert staged.headers["location"] == f"{IMPORTS}/{staged.json()['id']}"
    assert staged.json()["relatorio"]["novos"][0]["nome"] == "Pão"


def test_a_file_over_the_routes_own_limit_is_413_and_other_routes_keep_theirs(
    database: str,
) -> None:
    base = Settings(database_url=database, allowed_hosts=("testserver",), access_log=False)
    small = Settings(**{**base.__dict__, "import_max_bytes": 4096})
    with TestClient(create_app(small)) as client:
        big = b"nome;preco\r\n" + b"Caneca;1,00\r\n" * 400
        refused = sent(client, big)
        assert refused.status_code == 413 and "limite de uma importação" in refused.json()["detail"]
        fits = sent(client, b"nome;preco\r\n" + b"Caneca;1,00\r\n" * 200)
        assert fits.status_code == 201
        large_form = client.post("/produtos", data={"produto.nome": "x" * 2_000_000}, headers=JSON)
        assert large_form.status_code == 413


class TestConfirming:
    def test_twice_applies_once_and_a_retry_with_its_key_is_marked_replayed(
        self, client: TestClient, db: Database
    ) -> None:
        report = sent(client, csv_of("nome;preco", "Caneca;1,00", "Copo;2,00")).json()
        key = {"Idempotency-Key": "importa-1", **JSON}
        first = client.post(report["links"]["confirmacao"], headers=key)
        again = client.post(report["links"]["confirmacao"], headers=key)
        plain = client.post(report["links"]["confirmacao"], headers=JSON)
        assert (first.status_code, again.status_code, plain.status_code) == (200, 200, 200)
        assert "idempotent-replayed" not in first.headers
        assert again.headers["idempotent-replayed"] == "true"
        assert "idempotent-replayed" not in plain.headers
        assert count_products(db) == 2 and len(events_of(db, report["id"])) == 2

    def test_after_a_product_moved_on_is_409_with_a_fresh_report_and_writes_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        (caneca,) = seed(client, "Caneca")
        report = sent(client, csv_of("id;preco", f"{caneca};20,00")).json()
        client.put(f"/produtos/{caneca}", json={"nome": "Caneca", "preco": "15"}, headers=JSON)
        moved = client.post(report["links"]["confirmacao"], headers=JSON)
        assert moved.status_code == 409 and moved.headers["content-type"] == PROBLEM
        fresh = moved.json()["importacao"]["relatorio"]["alterados"][0]["alteracoes"]
        assert fresh == [{"campo": "preco", "antes": "R$ 15,00", "depois": "R$ 20,00"}]
        assert events_of(db, report["id"]) == []
        page = client.post(report["links"]["confirmacao"])
        assert page.status_code == 303  # the fresh report confirms
        assert len(events_of(db, report["id"])) == 1

    def test_in_a_browser_leads_to_the_list_with_the_undo_and_the_undo_to_the_import(
        self, client: TestClient, db: Database
    ) -> None:
        (caneca,) = seed(client, "Caneca")
        staged = client.post(
            IMPORTS, files={"arquivo": ("a.csv", csv_of("id;nome", f"{caneca};Caneca azul"))}
        )
        assert staged.status_code == 303
        page = client.get(staged.headers["location"]).text
        assert "Prévia, esperando confirmação" in page and "Caneca azul" in page
        action = re.search(r'action="([^"]+/confirmacao)"', page)
        assert action is not None
        confirmed = client.post(action.group(1))
        assert confirmed.status_code == 303 and confirmed.headers["location"] == "/produtos"
        listing = client.get("/produtos").text
        assert "Importação aplicada: 0 produtos novos e 1 alterado." in listing
        undo = re.search(r'action="(/produtos/importacoes/\w+/reversao)"', listing)
        assert undo is not None and "Desfazer importação" in listing
        undone = client.post(undo.group(1))
        assert (
            undone.status_code == 303 and undone.headers["location"] == staged.headers["location"]
        )
        after = client.get(undone.headers["location"]).text
        assert "Importação desfeita: 1 produto voltou ao que era antes dela." in after
        assert "O que a importação gravou" in after and "<ins>Caneca azul</ins>" in after
        assert db.execute("SELECT nome FROM produtos").fetchall() == [("Caneca",)]

    def test_past_its_hour_is_410(self, client: TestClient, db: Database) -> None:
        report = sent(client, csv_of("nome;preco", "Caneca;1,00")).json()
        db.execute("UPDATE importacoes SET expira_em = ?", (time.time() - 1,))
        gone = client.post(report["links"]["confirmacao"], headers=JSON)
        assert gone.status_code == 410 and "expirou" in gone.json()["detail"]
        assert client.get(f"{IMPORTS}/{report['id']}", headers=JSON).json()["estado"] == "expirada"
        assert count_products(db) == 0


def test_an_error_line_quotes_the_cell_as_the_file_has_it(client: TestClient) -> None:
    report = sent(client, csv_of("nome;preco", "Caneca;129,9O")).json()
    (erro,) = report["relatorio"]["erros"]
    assert erro["campo"] == "preco" and erro["valor"] == "129,9O"
    assert erro["mensagem"].endswith("«O» é a letra O, não o zero."), erro
    page = client.get(f"{IMPORTS}/{report['id']}").text
    assert "«O» é a letra O, não o zero." in page
    assert "<code>129,9O</code>" in page and "Prévia com erros, não pode ser confirmada" in page
    assert '<div class="resumo-erros"><p>Nada será gravado enquanto houver erros' in page


class TestImportUndoFixImportAgain:
    """The clerk's loop: import, see a mistake, undo, fix the sheet, import again. The second
    import brings the products the first created back from Removidos, with the fixed values."""

    def test_restores_each_product_the_undo_removed_with_the_rows_values(
        self, client: TestClient, db: Database
    ) -> None:
        first = sent(client, csv_of("codigo;nome;preco", "CX-1;Caixa;10,00", "CX-2;Copo;129,90"))
        client.post(first.json()["links"]["confirmacao"], headers=JSON)
        ids = dict(db.execute("SELECT codigo, id FROM produtos").fetchall())
        assert client.post(f"{IMPORTS}/{first.json()['id']}/reversao", headers=JSON).is_success
        assert count_products(db) == 0

        fixed = csv_of(
            "codigo;nome;preco", "cx-1;Caixa grande;12,00", "CX-2;Copo;12,99", "CX-3;Tampa;3,00"
        )
        staged = sent(client, fixed)
        assert staged.status_code == 201, staged.text
        report = staged.json()
        assert report["resumo"] | {"colunas_ignoradas": []} == {
            "novos": 1,
            "alterados": 0,
            "restaurados": 2,
            "inalterados": 0,
            "erros": 0,
            "colunas_ignoradas": [],
        }
        restored = {line["id"]: line for line in report["relatorio"]["alterados"]}
        assert set(restored) == {ids["CX-1"], ids["CX-2"]}
        assert all(line["restaura"] is True for line in restored.values())
        assert [
            (c["campo"], c["antes"], c["depois"]) for c in restored[ids["CX-2"]]["alteracoes"]
        ] == [("preco", "R$ 129,90", "R$ 12,99")]
        page = client.get(f"{IMPORTS}/{report['id']}").text
        assert f"Restaura o produto nº {ids['CX-1']}</strong>, que está em Removidos" in page
        assert "1</strong> novo" in page and "2</strong> restaurados de Removidos" in page
        assert "Confirmar importação" in page

        confirmed = client.post(report["links"]["confirmacao"])
        assert confirmed.status_code == 303
        notice = client.get(confirmed.headers["location"]).text
        assert "1 produto novo, 0 alterados e 2 restaurados de Removidos." in notice
        live = {
            r[0]: r[1:]
            for r in db.execute(
                "SELECT codigo, id, nome FROM produtos WHERE removido_em IS NULL"
            ).fetchall()
        }
        assert live["CX-1"] == (ids["CX-1"], "Caixa grande")  # its id, its stored spelling
        assert live["CX-2"][0] == ids["CX-2"] and set(live) == {"CX-1", "CX-2", "CX-3"}
        assert sorted(t for _, t, _ in events_of(db, report["id"])) == [
            "criado",
            "restaurado",
            "restaurado",
        ]
        history = client.get(f"/produtos/{ids['CX-1']}/historico").text
        assert "<del>Caixa</del>" in history and "<ins>Caixa grande</ins>" in history

        assert client.post(f"{IMPORTS}/{report['id']}/reversao", headers=JSON).is_success
        assert count_products(db) == 0
        removed = dict(db.execute("SELECT codigo, nome FROM produtos").fetchall())
        assert removed == {"CX-1": "Caixa", "CX-2": "Copo", "CX-3": "Tampa"}
        again = sent(client, fixed).json()
        assert again["resumo"]["restaurados"] == 3 and again["resumo"]["novos"] == 0

    def test_a_product_restored_by_hand_meanwhile_makes_the_confirmation_409_and_a_fresh_report(
        self, client: TestClient, db: Database
    ) -> None:
        first = sent(client, csv_of("codigo;nome;preco", "CX-1;Caixa;10,00")).json()
        client.post(first["links"]["confirmacao"], headers=JSON)
        client.post(f"{IMPORTS}/{first['id']}/reversao", headers=JSON)
        (id,) = db.execute("SELECT id FROM produtos").fetchone()
        report = sent(client, csv_of("codigo;preco", "CX-1;11,00")).json()
        assert report["resumo"]["restaurados"] == 1
        assert client.post(f"/produtos/{id}/restauracao", headers=JSON).is_success
        moved = client.post(report["links"]["confirmacao"], headers=JSON)
        assert moved.status_code == 409, moved.text
        fresh = client.get(f"{IMPORTS}/{report['id']}", headers=JSON).json()
        assert fresh["resumo"]["restaurados"] == 0 and fresh["resumo"]["alterados"] == 1

    def test_a_code_a_removed_product_keeps_is_refused_to_another_product_in_a_clerks_words(
        self, client: TestClient, db: Database
    ) -> None:
        first = sent(client, csv_of("codigo;nome;preco", "CX-1;Caixa;10,00")).json()
        client.post(first["links"]["confirmacao"], headers=JSON)
        client.post(f"{IMPORTS}/{first['id']}/reversao", headers=JSON)
        (holder,) = db.execute("SELECT id FROM produtos").fetchone()
        (caneca,) = seed(client, "Caneca")
        report = sent(client, csv_of("id;codigo", f"{caneca};CX-1")).json()
        (erro,) = report["relatorio"]["erros"]
        assert erro["mensagem"] == (
            f"O código «CX-1» é do produto nº {holder}, que está em Removidos e guarda o "
            "código: restaure-o em Removidos ou use outro código."
        )


class TestUndoing:
    def test_is_refused_whole_when_a_product_changed_since_naming_it(
        self, client: TestClient, db: Database
    ) -> None:
        caneca, copo = seed(client, "Caneca", "Copo")
        report = sent(client, csv_of("id;preco", f"{caneca};20,00", f"{copo};30,00")).json()
        client.post(report["links"]["confirmacao"], headers=JSON)
        client.put(f"/produtos/{copo}", json={"nome": "Copo alto", "preco": "30"}, headers=JSON)
        refused = client.post(f"{IMPORTS}/{report['id']}/reversao", headers=JSON)
        assert refused.status_code == 409 and refused.json()["produtos"] == [copo]
        page = client.post(f"{IMPORTS}/{report['id']}/reversao")
        assert page.status_code == 409 and f"/produtos/{copo}/historico" in page.text
        assert len(events_of(db, f"{report['id']}:desfeita")) == 0

    def test_what_was_never_applied_or_is_undone_already_is_409_and_unknown_ids_404(
        self, client: TestClient
    ) -> None:
        report = sent(client, csv_of("nome;preco", "Caneca;1,00")).json()
        early = client.post(f"{IMPORTS}/{report['id']}/reversao", headers=JSON)
        assert early.status_code == 409 and "não foi aplicada" in early.json()["detail"]
        client.post(report["links"]["confirmacao"], headers=JSON)
        assert client.post(f"{IMPORTS}/{report['id']}/reversao", headers=JSON).status_code == 200
        twice = client.post(f"{IMPORTS}/{report['id']}/reversao", headers=JSON)
        assert (
            twice.status_code == 409
            and twice.json()["detail"] == "Esta importação já foi desfeita."
        )
        for path in ("", "/confirmacao", "/reversao"):
            method = client.get if not path else client.post
            assert method(f"{IMPORTS}/{'0' * 32}{path}", headers=JSON).status_code == 404
        assert client.get(f"{IMPORTS}/nao-e-um-numero", headers=JSON).status_code == 404


def test_a_long_report_is_read_a_page_at_a_time(client: TestClient) -> None:
    data = csv_of("nome;preco", *(f"Produto {n};1,00" for n in range(250)))
    report = sent(client, data).json()
    assert report["relatorio"]["paginas"] == 3 and len(report["relatorio"]["novos"]) == 100
    third = client.get(report["links"]["next"].replace("pagina=2", "pagina=3"), headers=JSON)
    assert third.json()["relatorio"]["novos"][0]["linha"] == 202
    assert 'rel="prev"' in third.headers["link"] and "next" not in third.json()["links"]
    bad = client.get(f"{IMPORTS}/{report['id']}?pagina=0", headers=JSON)
    assert bad.status_code == 400


def test_the_template_has_the_columns_an_import_reads_in_both_formats(client: TestClient) -> None:
    as_csv = client.get(f"{IMPORTS}/modelo")
    assert as_csv.status_code == 200 and "attachment" in as_csv.headers["content-disposition"]
    assert as_csv.content.decode("utf-8-sig").strip() == ";".join(COLUMNS)
    as_xlsx = client.get(f"{IMPORTS}/modelo?formato=xlsx")
    sheet = openpyxl.load_workbook(io.BytesIO(as_xlsx.content)).worksheets[0]
    assert [c.value for c in next(sheet.iter_rows())] == list(COLUMNS)
    assert client.get(f"{IMPORTS}/modelo?formato=pdf").status_code == 400


def test_the_page_lists_recent_imports_with_who_when_and_how_they_ended(
    client: TestClient,
) -> None:
    sent(client, csv_of("nome;preco", "Caneca;1,00"), "primeira.csv")
    page = client.get(IMPORTS)
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    assert "primeira.csv" in page.text and "Prévia, esperando confirmação" in page.text
    assert 'enctype="multipart/form-data"' in page.text and "(vazio)" in page.text
    listed = client.get(IMPORTS, headers=JSON).json()["importacoes"]
    assert [i["arquivo"] for i in listed] == ["primeira.csv"]


class TestWhoMayImport:
    def test_editors_and_above_once_users_exist_and_anyone_before(
        self, client: TestClient, database: str
    ) -> None:
        assert client.get(IMPORTS).status_code == 200  # no users: as anyone may edit
        maria = add_user(database, "maria", "editor")
        add_user(database, "lia", "leitor")
        anonymous = client.get(IMPORTS)
        assert anonymous.status_code == 303 and "/entrar?proximo=" in anonymous.headers["location"]
        posted = client.post(IMPORTS, files={"arquivo": ("a.csv", b"nome;preco\r\nA;1\r\n")})
        assert posted.status_code == 303 and "/entrar?proximo=" in posted.headers["location"]
        assert sent(client, b"nome;preco\r\nA;1\r\n").status_code == 401
        sign_in(client, "lia")
        assert client.get(IMPORTS).status_code == 403
        client.cookies.clear()
        sign_in(client, "maria")
        staged = client.post(IMPORTS, files={"arquivo": ("a.csv", b"nome;preco\r\nA;1\r\n")})
        assert staged.status_code == 303
        assert "Enviada em" in client.get(staged.headers["location"]).text
        client.cookies.clear()
        token = add_token(database, maria, "editor")
        by_token = client.post(
            IMPORTS, files={"arquivo": ("b.csv", b"nome;preco\r\nB;2\r\n")}, headers=bearer(token)
        )
        assert by_token.status_code == 201 and by_token.json()["quem"] == "maria"
        assert by_token.json()["token"] == "testes"  # noqa: S105 - the token's label


CELLS = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["", "1", "-1", "1.234", "12,50", "(vazio)", "'=1", "=1+1", "\x00", "9" * 30]),
    st.just("x" * 140_000),  # past the csv module's field limit
)
TITLES = st.lists(
    st.sampled_from(["id", "versao", "codigo", "nome", "Preço", "descricao", "cor", ""]),
    max_size=7,
)
FILES = st.one_of(
    st.binary(max_size=3000),
    st.binary(max_size=3000).map(lambda tail: b"PK\x03\x04" + tail),
    st.tuples(
        TITLES, st.lists(st.lists(CELLS, max_size=8), max_size=6), st.sampled_from(";,\t")
    ).map(lambda shape: _written(*shape)),
    st.just(";".join(f"c{n}" for n in range(10_000)).encode()),
    st.just(b"nome;preco\r\n" + b";".join([b"A"] * 10_000) + b"\r\n"),
)


def _written(titles: list[str], rows: list[list[str]], delimiter: str) -> bytes:
    text = io.StringIO()
    csv.writer(text, delimiter=delimiter).writerows([titles, *rows])
    return text.getvalue().encode("utf-8", errors="surrogatepass")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=FILES, codificacao=st.sampled_from(["utf-8", "windows-1252"]))
def test_no_file_gives_a_server_error_or_a_partial_write(
    client: TestClient, db: Database, data: bytes, codificacao: str
) -> None:
    before = count_products(db)
    staged = sent(client, data, codificacao=codificacao)
    assert staged.status_code in (201, 413, 422), staged.text
    if staged.status_code != 201:
        assert count_products(db) == before
        return
    report = staged.json()
    confirmed = client.post(f"{IMPORTS}/{report['id']}/confirmacao", headers=JSON)
    assert confirmed.status_code in (200, 409, 422), confirmed.text
    novos = report["resumo"]["novos"] if confirmed.status_code == 200 else 0
    assert count_products(db) == before + novos


def test_an_import_that_changes_nothing_is_not_confirmed_so_there_is_nothing_to_undo(
    client: TestClient,
) -> None:
    seed(client, "Caneca")
    exported = client.get("/produtos?formato=csv").content
    report = sent(client, exported).json()
    assert "confirmacao" not in report["links"]
    refused = client.post(f"{IMPORTS}/{report['id']}/confirmacao", headers=JSON)
    assert refused.status_code == 422 and "não muda nada" in refused.json()["detail"]
    undo = client.post(f"{IMPORTS}/{report['id']}/reversao", headers=JSON)
    assert undo.status_code == 409


class TestWorkbooksBeyondTheBounds:
    """The bombs of tests/workbooks.py, each a 1-7 MB upload that unpacks to up to 1.1 GB:
    answered with their 4xx (a page in the browser, a problem for a program), nothing kept."""

    @pytest.mark.parametrize("name", workbooks.BOMBS)
    def test_each_is_answered_with_what_it_is_and_nothing_is_kept(
        self, client: TestClient, name: str
    ) -> None:
        _, status, says = workbooks.BOMBS[name]
        refused = sent(client, workbooks.bomb(name), "bomba.xlsx")
        assert refused.status_code == status, refused.text
        assert refused.headers["content-type"] == PROBLEM
        assert says in refused.json()["detail"]
        page = client.post(IMPORTS, files={"arquivo": ("bomba.xlsx", workbooks.bomb(name))})
        assert page.status_code == status
        assert html.escape(says, quote=False) in page.text
        assert client.get(IMPORTS, headers=JSON).json()["importacoes"] == []

    @ONLY_SQLITE
    def test_a_served_worker_answers_each_in_bounded_cpu_and_memory(
        self, database: str, tmp_path: Path
    ) -> None:
        """Measured on the worker itself (/proc: its CPU seconds and its peak resident memory
        from just before each upload), all of them twice: before, the dry run held 1-2.5 GB for
        20-300 s, and kept a gigabyte after. The bounds are ten times what each takes here, so
        that a busy machine does not fail them: CPU seconds are the worker's own, not the wall
        clock's."""
        with serving(database, tmp_path) as (base, process):
            (worker,) = workers_of(process)
            after = [Watched(worker).rss_mib]
            for _ in range(2):
                for name, (_, status, says) in workbooks.BOMBS.items():
                    data = workbooks.bomb(name)
                    watched = Watched(worker)
                    answer = fetch(
                        "POST",
                        f"{base}{IMPORTS}",
                        files={"arquivo": ("bomba.xlsx", data)},
                        headers=JSON,
                        timeout=300,
                    )
                    used = watched.since()
                    assert (answer.status_code, says in answer.text) == (status, True), name
                    assert used.cpu_s < 10, (name, used)
                    assert used.peak_mib < 64, (name, used)
                after.append(Watched(worker).rss_mib)
            assert fetch("GET", f"{base}/healthz").status_code == 200
        # Nothing of them kept: the first round leaves what the allocator keeps of its peaks,
        # the second no more (a cycle that held each upload until the collector came round
        # left 90 MB a round).
        assert after[1] < after[0] + 64, after
        assert after[2] < after[1] + 16, after


@pytest.mark.parametrize("dimension", [None, "A1:A1"])
def test_a_sheet_without_a_dimension_or_with_too_small_a_one_imports_every_cell(
    client: TestClient, db: Database, dimension: str | None
) -> None:
    titles = ("codigo", "nome", "descricao", "preco")
    rows = [workbooks.row(1, *(text(f"{c}1", t) for c, t in zip("ABCD", titles, strict=True)))]
    for n in range(2, 5):
        values = (f"C-{n}", f"Produto {n}", f"Descrição {n}")
        cells = [text(f"{c}{n}", v) for c, v in zip("ABC", values, strict=True)]
        rows.append(workbooks.row(n, *cells, number(f"D{n}", f"{n}.5")))
    staged = sent(client, workbook(sheet(rows, dimension)), "sem-dimensao.xlsx")
    assert staged.status_code == 201, staged.text
    novos = staged.json()["relatorio"]["novos"]
    assert [n["produto"] for n in novos] == [
        {
            "codigo": f"C-{n}",
            "nome": f"Produto {n}",
            "descricao": f"Descrição {n}",
            "preco": f"{n}.50",
        }
        for n in range(2, 5)
    ]
    confirmed = client.post(staged.json()["links"]["confirmacao"], headers=JSON)
    assert confirmed.status_code == 200, confirmed.text
    assert db.execute("SELECT codigo, descricao FROM produtos ORDER BY id").fetchall() == [
        (f"C-{n}", f"Descrição {n}") for n in range(2, 5)
    ]


@ONLY_SQLITE
def test_a_client_that_hangs_up_during_the_dry_run_is_logged_499_and_the_work_stops(
    database: str, tmp_path: Path
) -> None:
    """A served worker (Granian) tells the app when a connection closes: the dry run of a
    50,000-row file is cancelled at its next stretch of rows, the access log says 499, and no
    import is kept, not even after twice the time a whole dry run takes."""
    body = ("nome;preco\r\n" + "".join(f"P{n};{n},50\r\n" for n in range(50_000))).encode()
    headers = {"Content-Type": "text/csv", **JSON}
    with serving(database, tmp_path) as (base, _):
        started = time.monotonic()
        whole = fetch("POST", f"{base}{IMPORTS}", content=body, headers=headers, timeout=300)
        takes = time.monotonic() - started
        assert whole.status_code == 201
        head = (
            f"POST {IMPORTS} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/csv\r\n"
            f"Accept: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        with socket.create_connection(address(base)) as hanging_up:
            hanging_up.sendall(head.encode() + body)

        def logged() -> list[dict[str, Any]]:
            lines = (tmp_path / "serve.log").read_text().splitlines()
            found = [json.loads(line) for line in lines if '"catalogo.access"' in line]
            return [line for line in found if line["route"] == IMPORTS]

        eventually(lambda: len(logged()) == 2)
        assert [line["status"] for line in logged()] == [201, 499]
        assert logged()[1]["bytes"] == 0
        deadline = time.monotonic() + 2 * takes
        while time.monotonic() < deadline:  # a dry run not stopped would be kept meanwhile
            kept = fetch("GET", f"{base}{IMPORTS}", headers=JSON).json()["importacoes"]
            assert [i["id"] for i in kept] == [whole.json()["id"]]
            time.sleep(0.2)


def test_a_workbook_libreoffice_saved_from_a_shops_csv_imports_as_the_csv_does(
    client: TestClient, tmp_path: Path
) -> None:
    """LibreOffice, opening a pt-BR CSV as a Brazilian user's would and saving it as xlsx,
    writes shared strings, typed numbers and a multi-line cell: the dry run of that workbook
    is the dry run of the CSV."""
    source = tmp_path / "loja.csv"
    source.write_bytes(
        csv_of(
            "codigo;nome;descricao;preco",
            'CAN-1;Caneca azul;"Duas\nlinhas";1234,56',
            "PRA-2;Prato;;12,5",
            ";Copo sem código;Vidro;3",
        )
    )
    workbook = workbooks.converted(source, "CSV:59,34,76,1,,1046").read_bytes()
    from_csv = sent(client, source.read_bytes()).json()["relatorio"]["novos"]
    from_xlsx = sent(client, workbook, "loja.xlsx").json()["relatorio"]["novos"]
    assert [n["produto"] for n in from_xlsx] == [n["produto"] for n in from_csv]
    assert [n["produto"]["preco"] for n in from_xlsx] == ["1234.56", "12.50", "3.00"]


def test_the_trash_shows_a_products_code_and_that_an_imports_undo_removed_it(
    client: TestClient,
) -> None:
    report = sent(client, csv_of("codigo;nome;preco", "CX-1;Caixa;10,00")).json()
    client.post(report["links"]["confirmacao"], headers=JSON)
    client.post(f"{IMPORTS}/{report['id']}/reversao", headers=JSON)
    trash = client.get("/produtos/removidos").text
    assert '<td class="codigo" title="CX-1">CX-1</td>' in trash
    assert f'ao desfazer <a href="/produtos/importacoes/{report["id"]}">uma importação</a>' in trash
