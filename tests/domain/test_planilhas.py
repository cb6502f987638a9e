"""Spreadsheets, both ways, pure.

**Out.** The catalog as a file, formatted: the two CSV dialects byte by byte, and the xlsx read back
by openpyxl. resources/test_exports.py sends them over HTTP from both databases.

**In.** Reading a spreadsheet to import, pure: encodings never guessed, headers matched blind to
case and accents, cells read as the export wrote them. tests/services/ runs the dry run
against both databases.
"""

import contextlib
import csv
import datetime
import io
import os
import time
from decimal import Decimal
from typing import Any

import openpyxl
import pytest
import xlsxwriter
from hypothesis import given
from hypothesis import strategies as st

from catalogo.domain.errors import ImportRefused, TooManyRows
from catalogo.domain.planilhas import (
    CLEAR,
    COLUMNS,
    CsvRows,
    Row,
    Workbook,
    filename,
    header,
    neutralised,
    rows,
    table,
)
from catalogo.domain.produtos import Produto

MOMENT = 1_764_000_000.25  # 2025-11-24T16:00:00.25Z


def product(id: int, nome: str = "Caneca azul", **fields: object) -> Produto:
    values: dict[str, Any] = {
        "id": id,
        "codigo": None,
        "nome": nome,
        "descricao": "Linha 1\nLinha 2",
        "preco": Decimal("1234.56"),
        "versao": 2,
        "atualizado_em": MOMENT,
        **fields,
    }
    return Produto.model_construct(**values)


def test_the_csv_for_people_is_what_brazilian_excel_reads() -> None:
    rows = CsvRows("csv")
    data = rows.header() + rows.rows([product(7, codigo="CAN-1"), product(8, "Pão de mel")])
    assert data.startswith(b"\xef\xbb\xbfid;codigo;nome;descricao;preco;versao;atualizado_em\r\n")
    text = data[3:].decode()
    assert "sep=" not in text and text.count("\r\n") == 3  # the header and two rows
    local = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(MOMENT))
    assert list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))[1:] == [
        ["7", "CAN-1", "Caneca azul", "Linha 1\nLinha 2", "1234,56", "2", local],
        ["8", "", "Pão de mel", "Linha 1\nLinha 2", "1234,56", "2", local],
    ]


def test_the_csv_for_programs_is_rfc_4180_with_points_and_utc() -> None:
    rows = CsvRows("rfc4180")
    data = rows.header() + rows.rows([product(7)])
    assert data.startswith(b"id,codigo,nome,")  # no BOM
    assert data.endswith(
        b'7,,Caneca azul,"Linha 1\nLinha 2",1234.56,2,2025-11-24T16:00:00.250000Z\r\n'
    )


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r", "\n"])
def test_a_cell_that_starts_like_a_formula_gets_a_quote(start: str) -> None:
    assert neutralised(f"{start}HYPERLINK(1)") == f"'{start}HYPERLINK(1)"
    data = CsvRows("csv").rows([product(1, f"{start}cmd", codigo=f"{start}1", descricao="")])
    cells = next(csv.reader(io.StringIO(data.decode(), newline=""), delimiter=";"))
    assert cells[1:3] == [f"'{start}1", f"'{start}cmd"]


def test_a_cell_that_starts_otherwise_is_left_alone() -> None:
    assert neutralised("Caneca = 2") == "Caneca = 2" and neutralised("") == ""


def test_the_workbook_has_typed_cells_a_frozen_header_and_sized_columns() -> None:
    book = Workbook()
    book.add([product(7, "=1+1", codigo="CAN-1"), product(8, descricao="")])
    path = book.close()
    try:
        sheet = openpyxl.load_workbook(path).active
        assert [cell.value for cell in sheet[1]] == list(COLUMNS)
        assert sheet.freeze_panes == "A2"
        assert [cell.value for cell in sheet[2]] == [
            7,
            "CAN-1",
            "=1+1",
            "Linha 1\nLinha 2",
            1234.56,
            2,
            datetime.datetime.fromtimestamp(MOMENT).replace(microsecond=0),
        ]
        assert sheet["C2"].data_type == "s"  # a string, never a formula
        assert sheet["E2"].number_format == '"R$" #,##0.00'
        assert sheet["G2"].is_date and sheet.column_dimensions["C"].width > 30
        assert [cell.value for cell in sheet[3]][1:4] == [None, "Caneca azul", None]
    finally:
        os.unlink(path)


def test_a_workbook_past_its_last_row_is_refused() -> None:
    book = Workbook(rows=3)
    book.add([product(1), product(2)])
    with pytest.raises(TooManyRows):
        book.add([product(3)])
    book.discard()
    assert not os.path.exists(book.path)


def test_the_file_is_named_after_the_day() -> None:
    day = time.strftime("%Y-%m-%d", time.localtime(MOMENT))
    assert filename("csv", MOMENT) == filename("rfc4180", MOMENT) == f"produtos-{day}.csv"
    assert filename("xlsx", MOMENT) == f"produtos-{day}.xlsx"


def test_a_utf8_csv_with_a_bom_and_semicolons_reads_as_the_export_wrote_it() -> None:
    data = "\ufeffid;nome;preco\r\n7;Pão;1234,56\r\n".encode()
    assert table(data) == [["id", "nome", "preco"], ["7", "Pão", "1234,56"]]


@pytest.mark.parametrize("separator", [",", "\t", ";"])
def test_any_of_the_three_separators_is_found_from_the_header(separator: str) -> None:
    data = f'nome{separator}preco\r\n"A{separator} B"{separator}1\r\n'.encode()
    assert table(data)[1] == [f"A{separator} B", "1"]


def test_invalid_utf8_is_refused_with_what_to_do_and_windows_1252_reads_it() -> None:
    data = "nome;preco\r\nPão;1,50\r\n".encode("cp1252")
    with pytest.raises(ImportRefused, match="salve como «CSV UTF-8» ou escolha Windows-1252"):
        table(data)
    assert table(data, "windows-1252")[1] == ["Pão", "1,50"]


def test_an_xlsx_is_read_from_its_first_sheet_with_numbers_as_typed() -> None:
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True})
    sheet = book.add_worksheet()
    sheet.write_row(0, 0, ["Código", "Nome", "Preço", "versao"])
    sheet.write_row(1, 0, ["CAN-1", "Caneca", 39.9, 3])
    book.close()
    assert table(buffer.getvalue())[1] == ["CAN-1", "Caneca", "39.9", "3"]


def test_a_file_that_is_no_spreadsheet_is_refused_not_a_server_error() -> None:
    with pytest.raises(ImportRefused):
        table(b"PK\x03\x04 not a zip at all")


def test_headers_match_blind_to_case_and_accents_and_unknown_ones_are_named() -> None:
    found = header(["ID", "Código", "Preço", "Descrição", "NOME", "Cor", ""])
    assert found.positions == {"id": 0, "codigo": 1, "preco": 2, "descricao": 3, "nome": 4}
    assert found.unknown == ("Cor",)


@pytest.mark.parametrize(
    ("titles", "message"),
    [
        (["nome", "Nome"], "aparece duas vezes"),
        (["cor", "tamanho"], "Nenhuma coluna conhecida"),
        ([f"c{n}" for n in range(10_000)], "10000 colunas"),
    ],
)
def test_a_header_that_cannot_be_read_is_refused(titles: list[str], message: str) -> None:
    with pytest.raises(ImportRefused, match=message):
        header(titles)


def test_cells_keep_what_is_empty_clear_on_purpose_and_lose_the_exports_quote() -> None:
    head = header(["id", "versao", "codigo", "nome", "descricao", "preco"])
    read = list(rows(head, [["7", "3", "'=X", "", CLEAR, "'-1"], ["", "", "", "", "", ""]]))
    assert read == [Row(2, 7, 3, {"codigo": "=X", "descricao": None, "preco": "-1"})]


def test_an_id_or_version_that_is_no_number_and_a_cleared_name_are_errors() -> None:
    head = header(["id", "versao", "nome"])
    (row,) = rows(head, [["abc", "1.5", CLEAR]])
    assert set(row.errors) == {"id", "versao", "nome"}


@given(st.binary(max_size=2000))
def test_no_bytes_make_anything_but_a_table_or_a_refusal(data: bytes) -> None:
    try:
        cells = table(data)
    except ImportRefused:
        return
    if cells:
        with contextlib.suppress(ImportRefused):
            list(rows(header(cells[0]), cells[1:]))
