"""The catalog out to a file: a list's whole result as CSV for people (Excel pt-BR), CSV for
programs (RFC 4180), or an xlsx workbook. Pure formatting, a chunk of products at a time:
storage streams them (`Storage.export`), resources/exports.py sends the bytes.

Brazilian Excel reads a CSV without a BOM as Latin-1, `;` as the separator and `22.5` as a
date, so the people's dialect is UTF-8 with a BOM, `;`, CRLF and decimal commas without
thousands (`1234,56`): what Excel and LibreOffice in pt-BR read back as numbers. A text cell
that starts like a formula (`=`, `+`, `-`, `@`, tab, CR, LF) gets a leading `'` in CSV (OWASP's
CSV injection advice; the import strips it again); in xlsx every text is a string cell, never a
formula. Moments are the server's local time for people (as the pages show them) and RFC 3339
UTC for programs (as JSON gives them).
"""

import csv
import datetime
import io
import os
import tempfile
import time
from collections.abc import Iterable
from typing import Any, Literal

from catalogo.produtos import Produto, as_datetime

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


class TooManyRows(Exception):
    """More products than an xlsx sheet holds."""


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
                raise TooManyRows()
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
