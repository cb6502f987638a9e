"""Reading an xlsx within bounds: every bomb an attacker would send is refused with what it is,
holding no more than a few MiB while it is read (measured by tracemalloc, which sees expat's
and zlib's buffers too); every cell of a sheet is read, whatever its `<dimension>` says.
tests/http/resources/test_importacoes.py sends the same files to a served worker, and
tests/cli/test_main.py to `catalogo importar`."""

import io
import tracemalloc
import zipfile

import openpyxl
import pytest
import xlsxwriter

from catalogo.domain import xlsx
from catalogo.domain.errors import ImportRefused
from catalogo.domain.planilhas import COLUMNS_MAXIMUM, table
from catalogo.http.problems import status_of
from tests import workbooks
from tests.workbooks import bomb, number, row, shared_strings, sheet, text, workbook

WIDTH = COLUMNS_MAXIMUM + 1
CELLS = 2_550_050


def read(data: bytes, cells: int = CELLS) -> list[list[str]]:
    return list(xlsx.rows(data, WIDTH, cells))


def refusal(data: bytes, cells: int = CELLS) -> tuple[ImportRefused, int]:
    """Why `data` is refused, and the most memory reading it held (bytes)."""
    tracemalloc.start()
    try:
        with pytest.raises(ImportRefused) as refused:
            read(data, cells)
        return refused.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


MIB = 2**20


@pytest.mark.parametrize("name", workbooks.BOMBS)
def test_each_bomb_is_refused_with_what_it_is_holding_a_few_mebibytes(name: str) -> None:
    data = bomb(name)
    assert len(data) < 8 * MIB  # an upload well within the import's 20 MiB
    refused, held = refusal(data)
    _, status, says = workbooks.BOMBS[name]
    assert (status_of(refused), says in str(refused)) == (status, True), str(refused)
    assert held < 4 * MIB


def test_a_part_that_unpacks_a_hundred_times_its_size_is_refused_by_its_ratio() -> None:
    data = workbook(sheet([row(1, text("A1", "nome")), *workbooks.repeated(b" ", 4 * MIB)]))
    refused, held = refusal(data)
    assert status_of(refused) == 413
    assert "vezes ao ser aberta (o limite é 100)" in str(refused)
    assert held < 2 * MIB


def test_more_cells_than_an_import_reads_are_refused_when_the_first_too_many_comes() -> None:
    rows = (row(n, *(number(None, c) for c in range(10))) for n in range(1, 1001))
    refused, held = refusal(workbook(sheet(rows)), cells=5_000)
    assert status_of(refused) == 413
    assert "mais de 5.000 células" in str(refused)
    assert held < 2 * MIB


def test_markup_of_no_cells_counts_against_the_same_bound() -> None:
    refused, _ = refusal(workbook(sheet([b"<x/>" * 30_000])), cells=5_000)
    assert status_of(refused) == 413
    assert "mais de 20.000 elementos de XML" in str(refused)


def test_shared_strings_past_their_memory_are_refused_as_they_are_read() -> None:
    items = (
        b"<si><t>" + chunk[start : start + 30_000] + b"</t></si>"
        for chunk in workbooks.random_text(80 * MIB)
        for start in range(0, len(chunk), 30_000)
    )
    data = workbook(sheet([row(1, b'<c r="A1" t="s"><v>0</v></c>')]), shared_strings(items))
    refused, held = refusal(data)
    assert status_of(refused) == 413
    assert "Os textos da planilha passam de 64 MiB" in str(refused)
    assert held < 70 * MIB


def test_a_dtd_is_refused_so_no_entity_is_ever_expanded() -> None:
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><worksheet><sheetData><row r="1">'
        b'<c r="A1" t="inlineStr"><is><t>&b;</t></is></c></row></sheetData></worksheet>'
    )
    refused, _ = refusal(workbook(lambda: [laughs]))
    assert status_of(refused) == 422
    assert "declara um DTD" in str(refused)


@pytest.mark.parametrize(
    "data",
    [
        b"PK\x03\x04 not a zip at all",
        workbook(sheet([b"<row r='1'><c r='A1' t='s'><v>7</v></c></row>"])),
        workbook(sheet([b"<row r='x'></row>"])),
        workbook(sheet([b"<row r='1'><c r='A1'><v>1,5</v></c></row>"])),
        workbook(sheet([b"<row r='1'><c r='A1'><v>1</c></row>"])),
    ],
    ids=["not a zip", "a string that is not there", "a row of no number", "no number", "no XML"],
)
def test_a_broken_workbook_is_refused_with_what_to_do(data: bytes) -> None:
    with pytest.raises(ImportRefused, match="salve de novo como «Pasta de Trabalho do Excel"):
        read(data)


def test_a_sheet_written_without_a_dimension_gives_every_column_and_row() -> None:
    rows = [
        row(1, text("A1", "id"), text("B1", "nome"), text("C1", "preco"), text("D1", "codigo")),
        row(2, number("A2", 7), text("B2", "Caneca"), number("C2", 39.9), text("D2", "CAN-1")),
        row(3, number("A3", 8), text("B3", "Prato"), number("C3", 12), text("D3", "PRA-1")),
    ]
    for dimension in (None, "A1:A1", "A1:B2"):
        assert read(workbook(sheet(rows, dimension))) == [
            ["id", "nome", "preco", "codigo"],
            ["7", "Caneca", "39.9", "CAN-1"],
            ["8", "Prato", "12", "PRA-1"],
        ]


def test_rows_and_cells_without_a_reference_follow_the_one_before_and_gaps_are_empty() -> None:
    rows = [
        row(None, text(None, "nome"), text(None, "preco")),
        row(None, text("B2", "so o preco")),  # column B, though first in its row
        row(5, text(None, "X"), text(None, "1")),  # rows 3 and 4 skipped
        row(9, b'<c r="A9" s="3"/>'),  # a formatted, empty row at the end
    ]
    assert read(workbook(sheet(rows))) == [
        ["nome", "preco"],
        ["", "so o preco"],
        [],
        [],
        ["X", "1"],
    ]


def test_values_are_what_the_spreadsheet_saved_as_the_csv_would_write_them() -> None:
    cells = [
        b'<c r="A1" t="s"><v>0</v></c>',  # rich text in parts, its phonetic guide left out
        b'<c r="B1" t="s"><v>1</v></c>',  # OOXML's escapes
        b'<c r="C1"><f>1+1</f><v>2</v></c>',  # a formula's saved value
        b'<c r="D1"><v>39.900000000000006</v></c>',
        b'<c r="E1"><v>1E+3</v></c>',
        b'<c r="F1" t="b"><v>1</v></c>',
        b'<c r="G1" t="e"><v>#N/A</v></c>',
        b'<c r="H1" t="str"><f>A1</f><v>texto</v></c>',
        b'<c r="I1" t="inlineStr"><is><r><t>a_x005F_x000D_</t></r><r><t>b</t></r></is></c>',
        b'<x:c r="J1" xmlns:x="urn:x"><x:v>5</x:v></x:c>',  # a prefix on the main namespace
    ]
    strings = shared_strings(
        [
            b"<si><r><t>Ca</t></r><r><rPr><b/></rPr><t xml:space='preserve'>neca </t></r>"
            b"<rPh><t>KANA</t></rPh></si>",
            b"<si><t>linha_x000D_\nnova</t></si>",
        ]
    )
    assert read(workbook(sheet([row(1, *cells)]), strings)) == [
        [
            "Caneca ",
            "linha\r\nnova",
            "2",
            "39.900000000000006",
            "1000",
            "True",
            "#N/A",
            "texto",
            "a_x000D_b",
            "5",
        ]
    ]


def test_cells_right_of_the_widest_header_are_read_and_dropped() -> None:
    far = row(1, text("A1", "nome"), text("XFD1", "longe"))
    assert read(workbook(sheet([far]))) == [["nome"]]


def test_workbooks_written_by_excel_libraries_read_as_before() -> None:
    """XlsxWriter (inline strings in constant memory, shared strings otherwise) and openpyxl
    (its own layout) write what the export and shops' scripts send."""
    written = []
    for options in ({"in_memory": True}, {"constant_memory": True, "in_memory": True}):
        made = io.BytesIO()
        book = xlsxwriter.Workbook(made, options)
        page = book.add_worksheet()
        page.write_row(0, 0, ["Código", "Nome", "Preço", "versao"])
        page.write_row(1, 0, ["CAN-1", "Caneca\nazul", 39.9, 3])
        book.close()
        written.append(made.getvalue())
    by_openpyxl = openpyxl.Workbook()
    by_openpyxl.active.append(["Código", "Nome", "Preço", "versao"])
    by_openpyxl.active.append(["CAN-1", "Caneca\nazul", 39.9, 3])
    saved = io.BytesIO()
    by_openpyxl.save(saved)
    written.append(saved.getvalue())
    for data in written:
        assert table(data) == [
            ["Código", "Nome", "Preço", "versao"],
            ["CAN-1", "Caneca\nazul", "39.9", "3"],
        ]


def test_the_import_says_each_refusal_with_its_status() -> None:
    with pytest.raises(ImportRefused) as refused:
        table(bomb("one cell of 1.1 GB"))
    assert status_of(refused.value) == 413
    with pytest.raises(ImportRefused) as refused:
        table(workbook(sheet([row(1, b"".join(number(None, n) for n in range(17_000)))])))
    assert status_of(refused.value) == 422


def replaced(data: bytes, name: str, content: bytes | None) -> bytes:
    """The workbook `data` with its part `name` holding `content` (None: without it)."""
    made = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(made, "w") as copy:
        for item in source.infolist():
            if item.filename != name:
                copy.writestr(item, source.read(item))
            elif content is not None:
                copy.writestr(item, content)
    return made.getvalue()


def test_a_workbook_whose_first_sheet_is_missing_is_refused_and_one_with_none_is_empty() -> None:
    data = workbook(sheet([row(1, text("A1", "nome"))]))
    with pytest.raises(ImportRefused, match=r"falta a parte xl/worksheets/sheet1\.xml"):
        read(replaced(data, "xl/worksheets/sheet1.xml", None))
    no_sheets = b'<workbook xmlns="%s"><sheets/></workbook>' % workbooks.MAIN
    assert read(replaced(data, "xl/workbook.xml", no_sheets)) == []


def test_markup_in_the_workbooks_own_parts_counts_against_the_bound_too() -> None:
    data = workbook(sheet([row(1, text("A1", "nome"))]))
    stuffed = b'<workbook xmlns="%s">%s<sheets/></workbook>' % (workbooks.MAIN, b"<x/>" * 30_000)
    refused, _ = refusal(replaced(data, "xl/workbook.xml", stuffed), cells=5_000)
    assert status_of(refused) == 413
    assert "mais de 20.000 elementos de XML" in str(refused)
