"""Reading a spreadsheet to import, pure: encodings never guessed, headers matched blind to
case and accents, cells read as the export wrote them. tests/test_services.py runs the dry run
against both databases."""

import contextlib
import io

import pytest
import xlsxwriter
from hypothesis import given
from hypothesis import strategies as st

from catalogo.importing import CLEAR, ImportRefused, Row, header, rows, table


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
