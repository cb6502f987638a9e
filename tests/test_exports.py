"""The catalog as a file, formatted: the two CSV dialects byte by byte, and the xlsx read back
by openpyxl. resources/test_exports.py sends them over HTTP from both databases."""

import csv
import datetime
import io
import os
import time
from decimal import Decimal
from typing import Any

import openpyxl
import pytest

from catalogo.exports import COLUMNS, CsvRows, TooManyRows, Workbook, filename, neutralised
from catalogo.produtos import Produto

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
