"""Spreadsheets, both ways: the catalog out to a file and a file into the catalog. Pure
formatting and reading, a chunk of rows at a time; storage streams products out
(`Storage.export`) and the import's use case (services/importacoes.py) looks up what the rows
name.

**Out.** The catalog out to a file: a list's whole result as CSV for people (Excel pt-BR), CSV for
programs (RFC 4180), or an xlsx workbook. Pure formatting, a chunk of products at a time:
storage streams them (`Storage.export`), http/resources/exportacoes.py sends the bytes.

Brazilian Excel reads a CSV without a BOM as Latin-1, `;` as the separator and `22.5` as a
date, so the people's dialect is UTF-8 with a BOM, `;`, CRLF and decimal commas without
thousands (`1234,56`): what Excel and LibreOffice in pt-BR read back as numbers. A text cell
that starts like a formula (`=`, `+`, `-`, `@`, tab, CR, LF) gets a leading `'` in CSV (OWASP's
CSV injection advice; the import strips it again); in xlsx every text is a string cell, never a
formula. Moments are the server's local time for people (as the pages show them) and RFC 3339
UTC for programs (as JSON gives them).

**In.** A spreadsheet into the catalog, the pure half: the file read (a CSV in either export dialect
or any `;`, `,` or tab CSV; an xlsx), its headers matched, and each row read into what it asks
for. No I/O: services/importacoes.py looks up the products the rows name and says what would
change (docs/importing.md).

- **Encoding is never guessed.** UTF-8 (with or without a BOM) unless `windows-1252` is asked
  for; a file that is not valid UTF-8 is refused with what to do, never read as mojibake.
- **Headers** are matched blind to case and accents (`Preço` is `preco`); unknown columns are
  named and ignored; a column twice is refused.
- **Cells**: an empty cell leaves the stored value as it is (an update never wipes a field by
  accident); `CLEAR` empties `descricao` or `codigo` on purpose. A leading `'` before `=`, `+`,
  `-` or `@` is the export's neutralisation and is removed; a cell that starts with `=`
  without it is a formula a CSV kept unevaluated, refused (an xlsx gives its saved value).
  `id` and `versao` are numbers as the list's cursors are; the other fields go through the
  form's own rules later, so a row gets the form's own messages.
"""

import csv
import datetime
import io
import os
import tempfile
import time
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from catalogo.domain import text, xlsx
from catalogo.domain.busca import codigo_key, fold
from catalogo.domain.errors import ImportRefused, TooManyRows
from catalogo.domain.produtos import Produto, parse_id
from catalogo.domain.text import as_datetime

Format = Literal["csv", "rfc4180", "xlsx"]
COLUMNS = ("id", "codigo", "nome", "descricao", "preco", "versao", "atualizado_em")
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV = "text/csv"
MEDIA_TYPES: dict[Format, str] = {
    "csv": "text/csv; charset=utf-8",
    "rfc4180": "text/csv; charset=utf-8; header=present",
    "xlsx": XLSX,
}
SHEET_ROWS = 1_048_576  # an xlsx sheet's rows, the header's included
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
_WIDTHS = (8, 18, 40, 60, 14, 8, 20)  # the columns', in characters


def neutralised(text: str) -> str:
    """A text cell no spreadsheet reads as a formula."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def filename(kind: Format, now: float) -> str:
    extension = "xlsx" if kind == "xlsx" else "csv"
    return f"produtos-{time.strftime('%Y-%m-%d', time.localtime(now))}.{extension}"


class CsvRows:
    """A CSV file of products, a chunk at a time: `header`, then `rows` for each chunk."""

    def __init__(self, kind: Format) -> None:
        self._people = kind == "csv"
        self._buffer = io.StringIO()
        self._writer = csv.writer(
            self._buffer, delimiter=";" if self._people else ",", lineterminator="\r\n"
        )

    def header(self) -> bytes:
        self._writer.writerow(COLUMNS)
        return ("\ufeff" if self._people else "").encode() + self._taken()

    def rows(self, produtos: Iterable[Produto]) -> bytes:
        people = self._people
        self._writer.writerows(_csv_cells(produto, people) for produto in produtos)
        return self._taken()

    def _taken(self) -> bytes:
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return text.encode()


def _csv_cells(produto: Produto, people: bool) -> tuple[Any, ...]:
    assert produto.atualizado_em is not None  # noqa: S101 - read from the database
    if people:
        preco = str(produto.preco).replace(".", ",")
        moment = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(produto.atualizado_em))
    else:
        preco = str(produto.preco)
        moment = as_datetime(produto.atualizado_em).isoformat().replace("+00:00", "Z")
    return (
        produto.id,
        neutralised(produto.codigo or ""),
        neutralised(produto.nome),
        neutralised(produto.descricao),
        preco,
        produto.versao,
        moment,
    )


class Workbook:
    """An xlsx file of products in a temporary file, written row by row in constant memory
    (XlsxWriter's `constant_memory`): typed cells, the header frozen, the columns sized."""

    def __init__(self, rows: int | None = None) -> None:
        """`rows`: how many the sheet holds, its header's included (SHEET_ROWS)."""
        self._rows = rows or SHEET_ROWS
        handle, self.path = tempfile.mkstemp(prefix="catalogo-", suffix=".xlsx")
        os.close(handle)
        import xlsxwriter  # at the first export, not at start: 12 MB of every worker's memory

        self._book = xlsxwriter.Workbook(
            self.path,
            {
                "constant_memory": True,
                "strings_to_formulas": False,
                "strings_to_urls": False,
                "strings_to_numbers": False,
            },
        )
        self._sheet = self._book.add_worksheet("Produtos")
        self._price = self._book.add_format({"num_format": '"R$" #,##0.00'})
        self._moment = self._book.add_format({"num_format": "dd/mm/yyyy hh:mm:ss"})
        bold = self._book.add_format({"bold": True})
        for column, width in enumerate(_WIDTHS):
            self._sheet.set_column(column, column, width)
        self._sheet.freeze_panes(1, 0)
        for column, name in enumerate(COLUMNS):
            self._sheet.write_string(0, column, name, bold)
        self._row = 1

    def add(self, produtos: Iterable[Produto]) -> None:
        """Raises TooManyRows past the sheet's last row."""
        sheet = self._sheet
        for produto in produtos:
            if self._row >= self._rows:
                raise TooManyRows(SHEET_ROWS)
            assert produto.atualizado_em is not None  # noqa: S101 - read from the database
            row = self._row
            sheet.write_number(row, 0, produto.id or 0)
            if produto.codigo is not None:
                sheet.write_string(row, 1, produto.codigo)
            sheet.write_string(row, 2, produto.nome)
            if produto.descricao:
                sheet.write_string(row, 3, produto.descricao)
            sheet.write_number(row, 4, float(produto.preco), self._price)
            sheet.write_number(row, 5, produto.versao or 0)
            moment = datetime.datetime.fromtimestamp(produto.atualizado_em)
            sheet.write_datetime(row, 6, moment.replace(microsecond=0), self._moment)
            self._row += 1

    def close(self) -> str:
        """The finished file's path; the caller removes it."""
        self._book.close()
        return self.path

    def discard(self) -> None:
        self._book.close()
        os.unlink(self.path)


Codificacao = Literal["utf-8", "windows-1252"]
CODIFICACOES: tuple[Codificacao, ...] = ("utf-8", "windows-1252")
CLEAR = "(vazio)"  # in a cell of descricao or codigo: empty it
ROWS_MAXIMUM = 50_000
COLUMNS_MAXIMUM = 50  # far more than a catalog has: a file of 10,000 columns is not one
FIELDS = ("codigo", "nome", "descricao", "preco")  # what a row may set
_KEYS = {fold(name): name for name in COLUMNS}
_UNQUOTED = ("'=", "'+", "'-", "'@")


@dataclass(frozen=True)
class Header:
    """Where each known column is (by its canonical name), and what was not known."""

    positions: dict[str, int]
    unknown: tuple[str, ...]


@dataclass(frozen=True)
class Row:
    """A line of the file as it asks: the product it names (`id`, `versao`), the fields it
    gives (None: `CLEAR`), and what could not be read."""

    line: int
    id: int | None = None
    versao: int | None = None
    fields: dict[str, str | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def cell_codigo_key(codigo: str) -> str | None:
    """The key a row's code is looked up by, or None for a code the rules refuse (the row's
    validation says why): no database is ever asked for a NUL or a line break."""
    try:
        read = text.read(codigo, one_line=True)
    except text.RefusedCharacter:
        return None
    return codigo_key(read) if read else None


def table(data: bytes, codificacao: Codificacao = "utf-8") -> list[list[str]]:
    """The file's cells, row by row, as text (`lines`, all at once)."""
    return list(lines(data, codificacao))


def lines(data: bytes, codificacao: Codificacao = "utf-8") -> Iterator[list[str]]:
    """The file's cells, row by row, as text, read as they are asked for: an xlsx's first
    sheet, or a CSV. A file of more than ROWS_MAXIMUM rows is refused as soon as its next row
    is read, not once all are."""
    _refuse_other_kinds(data)
    found = _sheet(data) if data[:4] == b"PK\x03\x04" else _csv(_decoded(data, codificacao))
    for count, line in enumerate(found):
        if count > ROWS_MAXIMUM:  # the header and ROWS_MAXIMUM rows are in already
            raise ImportRefused(
                f"O arquivo tem mais de {ROWS_MAXIMUM:,} linhas; uma importação leva até "
                f"{ROWS_MAXIMUM:,}. Divida-o em partes.".replace(",", ".")
            )
        yield line


# Files people send by mistake, by their first bytes: what each is, said to a clerk.
_OTHER_KINDS = (
    (b"\x89PNG", "uma imagem PNG"),
    (b"\xff\xd8\xff", "uma imagem JPEG"),
    (b"GIF8", "uma imagem GIF"),
    (b"%PDF", "um PDF"),
    (b"\x1f\x8b", "um arquivo compactado (gzip)"),
    (b"Rar!", "um arquivo compactado (RAR)"),
    (b"7z\xbc\xaf", "um arquivo compactado (7-Zip)"),
)
_SAVE_AS = (
    "no Excel ou no LibreOffice, «Salvar como» «CSV UTF-8» ou «Pasta de trabalho do Excel (.xlsx)»"
)


def _refuse_other_kinds(data: bytes) -> None:
    """ImportRefused naming what the file is when it is plainly not a sheet we read: following
    the encoding's advice for a photo would only lead to another wrong message."""
    if data.startswith(b"\xd0\xcf\x11\xe0"):
        raise ImportRefused(
            "Este arquivo é do Excel antigo (.xls, ou um .doc do Word), que não é lido aqui: "
            f"{_SAVE_AS}."
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ImportRefused(
            f"Este arquivo está em UTF-16 (o «Texto Unicode» do Excel): {_SAVE_AS}."
        )
    said = next((what for magic, what in _OTHER_KINDS if data.startswith(magic)), None)
    if said is None and (data[4:12] in (b"ftypheic", b"ftypmif1") or data[8:12] == b"WEBP"):
        said = "uma imagem"
    if said is not None:
        raise ImportRefused(
            f"Este arquivo não é uma planilha: é {said}. Envie a planilha de produtos em CSV "
            f"ou xlsx ({_SAVE_AS})."
        )


def _decoded(data: bytes, codificacao: Codificacao) -> str:
    try:
        return data.decode("cp1252" if codificacao == "windows-1252" else "utf-8-sig")
    except UnicodeDecodeError as error:
        if codificacao == "windows-1252":
            raise ImportRefused(
                f"O byte {error.start + 1} do arquivo não existe em Windows-1252: confira a "
                "codificação do arquivo."
            ) from None
        raise ImportRefused(
            f"O arquivo não está em UTF-8 (byte {error.start + 1}): salve como «CSV UTF-8» "
            "ou escolha Windows-1252."
        ) from None


def _csv(text: str) -> Iterator[list[str]]:
    end = text.find("\n")
    first = text if end < 0 else text[:end]  # the header line, not a copy of the whole file
    delimiter = max(";,\t", key=first.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        yield from reader
    except csv.Error as error:
        if "field larger than field limit" in str(error):
            raise ImportRefused(
                f"Uma célula da linha {reader.line_num} passa de "
                f"{csv.field_size_limit():,} caracteres: nenhum campo de produto é tão longo. "
                "Confira se este é o arquivo certo.".replace(",", ".")
            ) from None
        raise ImportRefused(
            f"O CSV está malformado na linha {reader.line_num} ({error}): abra-o numa "
            "planilha e salve de novo como CSV."
        ) from None


def _sheet(data: bytes) -> Iterator[list[str]]:
    """An xlsx's first sheet, every cell of it up to the widest a header may be (header()
    refuses more), read within domain/xlsx.py's bounds of size and shape."""
    cells = (ROWS_MAXIMUM + 1) * COLUMNS_MAXIMUM
    yield from xlsx.rows(data, COLUMNS_MAXIMUM + 1, cells)


def header(cells: list[str]) -> Header:
    """The header row's columns; raises ImportRefused for a column given twice or too many."""
    cells = list(cells)
    while cells and not cells[-1].strip():  # a spreadsheet's empty columns after the titles
        cells.pop()
    if len(cells) > COLUMNS_MAXIMUM:
        raise ImportRefused(
            f"O arquivo tem {len(cells)} colunas; uma planilha de produtos tem no máximo "
            f"{COLUMNS_MAXIMUM}. Confira se a primeira linha é a dos títulos."
        )
    positions: dict[str, int] = {}
    unknown: list[str] = []
    for position, title in enumerate(cells):
        name = _KEYS.get(fold(title.strip()))
        if name is None:
            if title.strip():
                unknown.append(title.strip())
            continue
        if name in positions:
            raise ImportRefused(f"A coluna «{title.strip()}» aparece duas vezes.")
        positions[name] = position
    if not positions:
        raise ImportRefused(
            "Nenhuma coluna conhecida na primeira linha: ela deve trazer os títulos "
            f"({', '.join(COLUMNS)})."
        )
    return Header(positions, tuple(unknown))


def rows(
    header: Header, lines: Iterable[list[str]], first_line: int = 2
) -> Generator[Row, None, None]:
    """Each non-empty line read by the header (`first_line`: the file's line number of the
    first one, for the messages)."""
    for number, cells in enumerate(lines, first_line):
        if not any(cell.strip() for cell in cells):
            continue
        yield _row(header, number, cells)


def _row(header: Header, number: int, cells: list[str]) -> Row:
    def cell(name: str) -> str:
        position = header.positions.get(name)
        return cells[position].strip() if position is not None and position < len(cells) else ""

    errors: dict[str, str] = {}
    numbers: dict[str, int | None] = {}
    for name in ("id", "versao"):
        text = cell(name)
        numbers[name] = parse_id(text) if text else None
        if text and numbers[name] is None:
            what = "produto" if name == "id" else "versão"
            errors[name] = f"«{text:.30}» não é um número de {what}."
    fields: dict[str, str | None] = {}
    for name in FIELDS:
        if name not in header.positions:
            continue
        text = cells[header.positions[name]] if header.positions[name] < len(cells) else ""
        if not text.strip():
            continue  # empty: the stored value stays
        if text.strip() == CLEAR:
            if name in ("nome", "preco"):
                errors[name] = f"{CLEAR} só vale para descrição e código: este é obrigatório."
            fields[name] = None
            continue
        if text.lstrip().startswith("="):
            errors[name] = (
                f"«{text.strip():.40}» é uma fórmula, não um valor: salve a planilha com os "
                "valores calculados (no Excel, o xlsx já os guarda), ou comece a célula com ' "
                "para importar o texto como está."
            )
            continue
        fields[name] = text[1:] if text.startswith(_UNQUOTED) else text
    return Row(number, numbers["id"], numbers["versao"], fields, errors)
