"""/produtos as a file, over HTTP from the real app on both databases: the list's own query
and rules, the two CSV dialects, the xlsx, and what a spreadsheet program makes of them."""

import csv
import dataclasses
import datetime
import io
import time
from pathlib import Path

import openpyxl
import pytest
from starlette.testclient import TestClient

from catalogo.domain import planilhas
from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import JSON, add_token, add_user, bearer, create_via_json
from tests.workbooks import converted

CSV_ACCEPT = {"Accept": "text/csv"}
XLSX_ACCEPT = {"Accept": planilhas.XLSX}


def rows(content: bytes, delimiter: str = ";") -> list[list[str]]:
    text = content.decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


@pytest.fixture
def catalog(client: TestClient) -> list[dict[str, object]]:
    """Five products (page_size is 3 in the tests: the list has two pages)."""
    made = [
        ("CAN-AZ-300", "Caneca azul", "39.90"),
        (None, "Caneca verde", "1234.50"),
        ("=cmd|'/c calc'!A1", "Caderno", "12.00"),
        ("CAD-02", "Pão de mel", "7.25"),
        (None, "Caneca preta", "45.00"),
    ]
    return [
        create_via_json(
            client, {"codigo": c, "nome": n, "descricao": "Linha 1\nLinha 2", "preco": p}
        )
        for c, n, p in made
    ]


class TestTheCsvForPeople:
    def test_is_the_whole_list_in_excel_ptbr_as_an_attachment_named_after_the_day(
        self, client: TestClient, catalog: list[dict[str, object]]
    ) -> None:
        response = client.get("/produtos?formato=csv")
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/csv; charset=utf-8"
        day = time.strftime("%Y-%m-%d")
        disposition = f'attachment; filename="produtos-{day}.csv"'
        assert response.headers["content-disposition"] == disposition
        assert response.headers["cache-control"] == "no-store"
        assert response.content.startswith(b"\xef\xbb\xbfid;codigo;nome;")
        table = rows(response.content)
        assert table[0] == list(planilhas.COLUMNS)
        assert [int(row[0]) for row in table[1:]] == [p["id"] for p in catalog[::-1]]
        assert table[4][1:5] == ["", "Caneca verde", "Linha 1\nLinha 2", "1234,50"]
        assert table[3][1] == "'=cmd|'/c calc'!A1"  # neutralised

    def test_follows_the_lists_search_order_and_filters(
        self, client: TestClient, catalog: list[dict[str, object]]
    ) -> None:
        for query in (
            "q=caneca&ordem=preco",
            "preco_max=40&ordem=-nome",
            "codigo=cad-02&codigo=CAN-AZ-300",
        ):
            listed: list[object] = []
            url: str | None = f"/produtos?{query}"
            while url:
                page = client.get(url, headers=JSON).json()
                listed += [p["id"] for p in page["produtos"]]
                url = page["links"].get("next")
            exported = [
                int(row[0])
                for row in rows(client.get(f"/produtos?{query}&formato=csv").content)[1:]
            ]
            assert exported == listed and exported

    def test_a_malformed_list_parameter_is_the_lists_400_before_any_file(
        self, client: TestClient, catalog: list[dict[str, object]]
    ) -> None:
        page = client.get("/produtos?formato=csv&preco_min=abc")
        assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
        assert "content-disposition" not in page.headers
        assert client.get("/produtos?formato=csv&ordem=x", headers=JSON).status_code == 400
        unknown = client.get("/produtos?formato=pdf", headers=JSON)
        assert (
            unknown.status_code == 400
            and "formato deve ser csv ou xlsx" in unknown.json()["detail"]
        )

    def test_head_answers_the_files_headers_without_reading_the_catalog(
        self, client: TestClient, catalog: list[dict[str, object]]
    ) -> None:
        response = client.head("/produtos?formato=csv")
        assert response.status_code == 200 and response.content == b""
        assert response.headers["content-disposition"].startswith("attachment;")


class TestTheCsvForPrograms:
    def test_is_rfc_4180_with_points_utc_and_no_bom(
        self, client: TestClient, catalog: list[dict[str, object]]
    ) -> None:
        response = client.get("/produtos?ordem=id", headers=CSV_ACCEPT)
        assert response.headers["content-type"] == "text/csv; charset=utf-8; header=present"
        assert response.content.startswith(
            b"id,codigo,nome,descricao,preco,versao,atualizado_em\r\n"
        )
        table = rows(response.content, ",")
        assert table[1] == [
            str(catalog[0]["id"]),
            "CAN-AZ-300",
            "Caneca azul",
            "Linha 1\nLinha 2",
            "39.90",
            "1",
            str(catalog[0]["atualizado_em"]),
        ]


class TestTheWorkbook:
    def test_has_typed_cells_for_every_product_of_the_list(
        self, client: TestClient, catalog: list[dict[str, object]]
    ) -> None:
        for response in (
            client.get("/produtos?formato=xlsx"),
            client.get("/produtos", headers=XLSX_ACCEPT),
        ):
            assert response.headers["content-type"] == planilhas.XLSX
            assert response.headers["content-disposition"].endswith('.xlsx"')
            sheet = openpyxl.load_workbook(io.BytesIO(response.content)).active
            values = [[cell.value for cell in row] for row in sheet.iter_rows(min_row=2)]
            assert [row[0] for row in values] == [p["id"] for p in catalog[::-1]]
            assert values[3][1:5] == [None, "Caneca verde", "Linha 1\nLinha 2", 1234.5]
            assert values[2][1] == "=cmd|'/c calc'!A1" and sheet["B4"].data_type == "s"

    def test_more_products_than_a_sheet_holds_is_a_422_that_suggests_the_csv(
        self, client: TestClient, catalog: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(planilhas, "SHEET_ROWS", 5)  # a header and four products
        refused = client.get("/produtos?formato=xlsx", headers=JSON)
        assert refused.status_code == 422 and "formato=csv" in refused.json()["detail"]
        page = client.get("/produtos?formato=xlsx")
        assert page.status_code == 422 and "exporte em CSV" in page.text


class TestWhoMayExport:
    def test_in_all_mode_an_export_needs_credentials_as_the_list_does(
        self, settings: Settings, database: str, db: Database
    ) -> None:
        usuario = add_user(database, "leitora", "leitor")
        secret = add_token(database, usuario, "leitor")
        app = create_app(dataclasses.replace(settings, auth="all"))
        with TestClient(app, follow_redirects=False) as client:
            assert client.get("/produtos?formato=csv", headers=JSON).status_code == 401
            allowed = client.get("/produtos?formato=csv", headers=bearer(secret))
            assert allowed.status_code == 200 and allowed.content.startswith(b"\xef\xbb\xbfid;")


def test_a_spreadsheet_program_reads_the_ptbr_csv_and_the_xlsx_as_numbers_with_accents(
    client: TestClient, catalog: list[dict[str, object]], tmp_path: Path
) -> None:
    source = tmp_path / "lista.csv"
    source.write_bytes(client.get("/produtos?ordem=id&formato=csv").content)
    sheet = openpyxl.load_workbook(converted(source, "CSV:59,34,76,1,,1046")).active
    first = [cell.value for cell in sheet[2]]
    assert first[:5] == [catalog[0]["id"], "CAN-AZ-300", "Caneca azul", "Linha 1\nLinha 2", 39.9]
    assert isinstance(first[6], datetime.datetime)
    assert sheet["C5"].value == "Pão de mel" and sheet["E3"].value == 1234.5
    assert sheet["B4"].value == "'=cmd|'/c calc'!A1" and sheet["B4"].data_type == "s"
    workbook = tmp_path / "planilha.xlsx"
    workbook.write_bytes(client.get("/produtos?ordem=id&formato=xlsx").content)
    again = openpyxl.load_workbook(converted(workbook, None)).active
    assert [cell.value for cell in again[3]][2:5] == ["Caneca verde", "Linha 1\nLinha 2", 1234.5]


def test_the_list_page_offers_its_own_search_as_csv_and_as_excel(
    client: TestClient, catalog: list[dict[str, object]]
) -> None:
    page = client.get("/produtos?q=caneca&ordem=preco").text
    assert 'href="/produtos?q=caneca&amp;ordem=preco&amp;formato=csv" download>CSV</a>' in page
    assert 'href="/produtos?q=caneca&amp;ordem=preco&amp;formato=xlsx" download>Excel</a>' in page
    assert "Exportar a busca" in page
    assert 'href="/produtos?formato=csv"' in client.get("/produtos").text
