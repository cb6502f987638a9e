"""The first sheet of an xlsx workbook, read as a stream within fixed bounds, whatever the file.

openpyxl, which read imports before, keeps every shared string, builds each row's XML whole
before reading it, and reads no further than the sheet's `<dimension>` says: a 1 MB upload
that unpacked to a gigabyte of XML held gigabytes of a worker for minutes, and a sheet written
without a `<dimension>` (as many programs other than Excel write them) was read as column A
alone. No mainstream reader streams a sheet with bounds (python-calamine builds the whole
range), so this one reads the few parts an import needs with the standard library's expat:

- the zip's directory holds at most PARTS_MAXIMUM entries (read from its end record before
  zipfile builds one object per entry);
- the parts read may unpack to INFLATED_MAXIMUM bytes in all, checked against each part's
  declared size before it is opened and counted while it is inflated (zipfile stops at the
  declared size, and its CRC refuses a part that lied), and a part over a mebibyte may not
  unpack to more than RATIO_MAXIMUM times its packed size;
- the shared strings, the one part kept whole, may take STRINGS_MAXIMUM bytes of memory; the
  sheet is read a chunk at a time, each row given as it ends;
- a sheet holds at most the cells its caller allows, and the parts ELEMENTS_PER_CELL XML
  elements for each (these four bounds answer 413);
- a cell holds at most CELL_MAXIMUM characters (Excel's own limit), a row COLUMNS_MAXIMUM
  cells (Excel's too), and no token of markup may run TOKEN_MAXIMUM bytes (a gigabyte
  attribute would grow expat's buffer): each checked as the XML streams in (422);
- no DTD is accepted, so no entity is ever declared or expanded.

Every cell is read, wherever it is: `<dimension>` is ignored, rows and cells without a
reference follow the one before. Values are the ones the spreadsheet saved (a formula's
result); numbers are written as the CSV export would (`39.9`, `40`); dates stored as styled
numbers are read as those numbers (no catalog field is a date).
"""

import functools
import posixpath
import re
import sys
from collections.abc import Iterator

from catalogo.domain.errors import ImportRefused, WorkbookTooLarge
from catalogo.domain.xlsx_archive import (
    PARTS_MAXIMUM,
    Book,
    Handler,
    malformed,
    mebibytes,
    thousands,
)

STRINGS_MAXIMUM = 64 * 2**20  # bytes of memory the shared strings may take
COLUMNS_MAXIMUM = 16_384  # column XFD
# XML elements a workbook's parts may hold, for each cell a sheet may: a cell is two or three
# (`c`, `v`; `c`, `is`, `t`), a rich text's run a few more.
ELEMENTS_PER_CELL = 4
ROWS_LIMIT = 1_048_576  # Excel's
_ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")
_DIGITS = "0123456789"


def rows(data: bytes, width: int, cells_maximum: int) -> Iterator[list[str]]:
    """The first worksheet's rows in order, each as text up to its last value and no wider
    than `width` (cells further right are read and dropped); a row the sheet skips is an
    empty row, empty rows at the end are not given. Raises ImportRefused (WorkbookTooLarge: 413),
    as the rows are read, for a file beyond the bounds or not a workbook."""
    book = Book(data, ELEMENTS_PER_CELL * cells_maximum)
    found = _first_sheet(book)
    if found is None:
        return
    sheet, strings_part = found
    strings = (
        _shared_strings(book, strings_part, cells_maximum)
        if strings_part and book.has(strings_part)
        else []
    )
    yield from _Sheet(book, strings, width, cells_maximum).rows(sheet)


def _relations(book: Book, of: str) -> dict[str, tuple[str, str]]:
    """The relationships of the part `of`: by id, the kind (the end of its Type) and the
    part it names; {} when it has none."""
    folder, base = posixpath.split(of)
    name = posixpath.join(folder, "_rels", f"{base}.rels")
    if not book.has(name):
        return {}
    read = _Relations(folder)
    for _ in book.parse(name, read):
        pass
    return read.found


def _first_sheet(book: Book) -> tuple[str, str | None] | None:
    """The first worksheet's part and the shared strings' (None: none), as the workbook
    lists them; None when it has no worksheet."""
    documents = [t for k, t in _relations(book, "").values() if k == "officeDocument"]
    workbook = documents[0] if documents else "xl/workbook.xml"
    related = _relations(book, workbook)
    read = _Sheets()
    for _ in book.parse(workbook, read):
        pass
    sheets = [related[r][1] for r in read.order if related.get(r, ("",))[0] == "worksheet"]
    strings = [t for k, t in related.values() if k == "sharedStrings"]
    return (sheets[0], strings[0] if strings else None) if sheets else None


@functools.lru_cache(maxsize=256)
def _local(name: str) -> str:
    """An element's name without its prefix (`x:row` is `row`)."""
    return name[name.find(":") + 1 :]


def _unescaped(text: str) -> str:
    """OOXML's escapes of characters XML cannot carry (`_x000D_`; `_x005F_` for a `_`)."""
    return _ESCAPED.sub(lambda m: chr(int(m[1], 16)), text) if "_x" in text else text


class _Relations(Handler):
    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder
        self.found: dict[str, tuple[str, str]] = {}

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        if _local(name) != "Relationship" or len(self.found) >= PARTS_MAXIMUM:
            return
        target = attributes.get("Target", "")
        if attributes.get("TargetMode") == "External" or not target:
            return
        path = target[1:] if target.startswith("/") else posixpath.join(self.folder, target)
        kind = attributes.get("Type", "").rsplit("/", 1)[-1]
        self.found[attributes.get("Id", "")] = (kind, posixpath.normpath(path))


class _Sheets(Handler):
    """The workbook's sheets, by their relationship ids, in its order."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        if _local(name) == "sheet" and len(self.order) < PARTS_MAXIMUM:
            self.order.extend(v for k, v in attributes.items() if k.endswith(":id"))


class _Strings(Handler):
    """The shared strings, as many as a sheet may cite."""

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most
        self.strings: list[str] = []
        self.size = 0

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        local = _local(name)
        if local == "t":
            self.begin()
        elif local == "rPh":
            self.phonetic += 1

    def end(self, name: str) -> None:
        local = _local(name)
        if local == "t":
            self.active = False
        elif local == "rPh":
            self.phonetic -= 1
        elif local == "si":
            text = _unescaped(self.take() or "")
            self.strings.append(text)
            self.size += sys.getsizeof(text) + 8
            if len(self.strings) > self.most or self.size > STRINGS_MAXIMUM:
                raise WorkbookTooLarge(
                    f"Os textos da planilha passam de {mebibytes(STRINGS_MAXIMUM)} na memória: "
                    "mais do que uma importação lê. Divida-a em partes ou envie um CSV.",
                )


def _shared_strings(book: Book, part: str, most: int) -> list[str]:
    read = _Strings(most)
    for _ in book.parse(part, read):
        pass
    return read.strings


class _Sheet(Handler):
    """A worksheet's cells, read into rows."""

    def __init__(self, book: Book, strings: list[str], width: int, most: int) -> None:
        super().__init__()
        self.book, self.strings, self.width, self.most = book, strings, width, most
        self.done: list[tuple[int, list[str]]] = []  # rows read from the last chunk
        self.row = 0
        self.cells: list[str] = []
        self.column = 0
        self.in_row = 0
        self.count = 0
        self.kind = "n"
        self.kept = False  # the cell is within `width`
        self.inline = False

    def rows(self, part: str) -> Iterator[list[str]]:
        given = 0  # the last row number given
        for _ in self.book.parse(part, self):
            for number, cells in self.done:
                if not cells:
                    continue  # an empty row counts only once a row with values follows
                while given < number - 1:
                    given += 1
                    yield []
                given = number
                yield cells
            self.done.clear()

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        if ":" in name:
            name = _local(name)
        if name == "c":
            reference = attributes.get("r")
            column = _column(reference.rstrip(_DIGITS)) if reference else 0
            self.column = column or self.column + 1
            self.in_row += 1
            self.count += 1
            if self.column > COLUMNS_MAXIMUM or self.in_row > COLUMNS_MAXIMUM:
                raise ImportRefused(
                    f"A linha {self.row} da planilha passa de {thousands(COLUMNS_MAXIMUM)} "
                    "colunas, o máximo do Excel: o arquivo está corrompido."
                )
            if self.count > self.most:
                raise WorkbookTooLarge(
                    f"A planilha tem mais de {thousands(self.most)} células: mais do que uma "
                    "importação lê. Apague as linhas e colunas vazias formatadas, ou divida-a.",
                )
            self.kept = self.column <= self.width
            self.kind = attributes.get("t", "n")
            self.inline = False
        elif not self.kept:
            if name == "row":
                self._row(attributes.get("r"))
        elif name == "v" or (name == "t" and self.inline):
            self.begin()
        elif name == "is":
            self.inline = True
        elif name == "rPh":
            self.phonetic += 1

    def _row(self, reference: str | None) -> None:
        number = _number(reference, "linha") if reference else self.row + 1
        if number > ROWS_LIMIT:
            raise malformed(f"a linha {thousands(number)} passa do máximo do Excel")
        self.row = max(number, self.row + 1)
        self.cells, self.column, self.in_row = [], 0, 0

    def end(self, name: str) -> None:
        if ":" in name:
            name = _local(name)
        if name == "c":
            if self.kept:
                self.kept = False
                text = self.take()
                value = self._value(text) if text else ""
                if value:
                    missing = self.column - len(self.cells)
                    if missing > 0:
                        self.cells += [""] * missing
                    self.cells[self.column - 1] = value
        elif name == "v" or name == "t":
            self.active = False
        elif name == "row":
            self.done.append((self.row, self.cells))
        elif name == "rPh" and self.kept:
            self.phonetic -= 1

    def _value(self, text: str) -> str:
        kind = self.kind
        if kind == "n":
            return _numeral(text, self.row)
        if kind == "s":
            index = _number(text, "texto compartilhado", zero=True)
            if index >= len(self.strings):
                raise malformed(f"a célula da linha {self.row} cita um texto que não existe")
            return self.strings[index]
        if kind == "inlineStr":
            return _unescaped(text)
        if kind == "b":
            return "True" if text.strip() == "1" else "False"
        return text  # str (a formula's text), e (an error, #N/A), d (an ISO date)


@functools.lru_cache(maxsize=1024)
def _column(letters: str) -> int:
    """A column's number from its letters (`AB` is 28); 0 for what is not a column's name
    (a cell without one follows the one before)."""
    if not 1 <= len(letters) <= 3 or not letters.isascii() or not letters.isalpha():
        return 0
    number = 0
    for letter in letters.upper():
        number = number * 26 + ord(letter) - 64
    return number


def _number(text: str, what: str, zero: bool = False) -> int:
    stripped = text.strip()
    if not stripped.isascii() or not stripped.isdigit() or len(stripped) > 9:
        raise malformed(f"«{text[:20]}» não é um número de {what}")
    number = int(stripped)
    if number == 0 and not zero:
        raise malformed(f"«{text[:20]}» não é um número de {what}")
    return number


def _numeral(text: str, row: int) -> str:
    """A number cell as the CSV would have it: integers without a float's tail, 39.9 and
    never 39.900001."""
    try:
        if "." not in text and "e" not in text and "E" not in text:
            return str(int(text))
        number = float(text)
    except ValueError:
        raise malformed(f"a linha {row} tem o número inválido «{text[:20]}»") from None
    return str(int(number)) if number.is_integer() else repr(number)
