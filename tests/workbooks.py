"""Workbooks the tests write byte by byte: the least an xlsx needs, with whatever sheet and
shared strings a test gives, and the bombs an attacker would send (parts that unpack to a
gigabyte, parts that say less than they hold, a directory of many entries); and files a real
spreadsheet program (LibreOffice) saved."""

import base64
import functools
import io
import os
import shutil
import struct
import subprocess
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from tests.databases import unavailable

MAIN = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_TYPES = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="rels" '
    b'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    b'<Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/xl/workbook.xml" ContentType="application/'
    b'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    b'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/'
    b'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    b"%s</Types>"
)
_STRINGS_TYPE = (
    b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
    b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
)
_RELATIONSHIPS = b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_ROOT_RELS = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    b'<Relationship Id="rId1" Type="' + _RELATIONSHIPS + b'/officeDocument" '
    b'Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<workbook xmlns="' + MAIN + b'" xmlns:r="' + _RELATIONSHIPS + b'">'
    b'<sheets><sheet name="Produtos" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    b'<Relationship Id="rId1" Type="' + _RELATIONSHIPS + b'/worksheet" '
    b'Target="worksheets/sheet1.xml"/>%s</Relationships>'
)
_STRINGS_REL = (
    b'<Relationship Id="rId2" Type="' + _RELATIONSHIPS + b'/sharedStrings" '
    b'Target="sharedStrings.xml"/>'
)
MEBIBYTE = 2**20

Parts = Callable[[], Iterable[bytes]]


def sheet(rows: Iterable[bytes], dimension: str | None = None) -> Parts:
    """A worksheet part of these `<row>` elements (or any XML a test puts there)."""

    def parts() -> Iterator[bytes]:
        yield b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="' + MAIN + b'">'
        if dimension is not None:
            yield f'<dimension ref="{dimension}"/>'.encode()
        yield b"<sheetData>"
        yield from rows
        yield b"</sheetData></worksheet>"

    return parts


def shared_strings(items: Iterable[bytes]) -> Parts:
    """A shared strings part of these `<si>` elements."""

    def parts() -> Iterator[bytes]:
        yield b'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="' + MAIN + b'">'
        yield from items
        yield b"</sst>"

    return parts


def workbook(worksheet: Parts, strings: Parts | None = None, level: int = 1) -> bytes:
    """An xlsx that Excel and openpyxl open: the sheet, and the shared strings if given, each
    streamed into the zip as it is made (a gigabyte part never is in memory)."""
    made = io.BytesIO()
    with zipfile.ZipFile(made, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as book:
        book.writestr("[Content_Types].xml", _TYPES % (_STRINGS_TYPE if strings else b""))
        book.writestr("_rels/.rels", _ROOT_RELS)
        book.writestr("xl/workbook.xml", _WORKBOOK)
        book.writestr(
            "xl/_rels/workbook.xml.rels", _WORKBOOK_RELS % (_STRINGS_REL if strings else b"")
        )
        for name, part in (
            ("xl/worksheets/sheet1.xml", worksheet),
            ("xl/sharedStrings.xml", strings),
        ):
            if part is None:
                continue
            with book.open(name, "w", force_zip64=True) as writing:
                for piece in part():
                    writing.write(piece)
    return made.getvalue()


def row(number: int | None, *cells: bytes) -> bytes:
    opening = b"<row>" if number is None else b'<row r="%d">' % number
    return opening + b"".join(cells) + b"</row>"


def number(reference: str | None, value: object) -> bytes:
    where = b"" if reference is None else f' r="{reference}"'.encode()
    return b"<c%s><v>%s</v></c>" % (where, str(value).encode())


def text(reference: str | None, value: str) -> bytes:
    where = b"" if reference is None else f' r="{reference}"'.encode()
    return b'<c%s t="inlineStr"><is><t>%s</t></is></c>' % (where, value.encode())


def repeated(piece: bytes, total: int) -> Iterator[bytes]:
    """`piece` over and over, `total` bytes in all, a mebibyte at a time."""
    chunk = piece * (MEBIBYTE // len(piece))
    for _ in range(total // len(chunk)):
        yield chunk


def random_text(total: int) -> Iterator[bytes]:
    """`total` bytes of base64 of random bytes: text that packs only to three quarters of its
    size, so that no ratio check catches it before the reading does."""
    for _ in range(total // MEBIBYTE):
        yield base64.b64encode(os.urandom(MEBIBYTE * 3 // 4))


# The bombs. Each is a 1-7 MB upload.
GIGABYTE = 1100 * MEBIBYTE


def spaces() -> bytes:
    """A sheet of 1.1 GB of spaces between its first row and the next."""
    first = row(1, text("A1", "nome"), text("B1", "preco"))
    return workbook(sheet([first, *repeated(b" ", GIGABYTE), row(2, text("A2", "X"))]))


def one_huge_cell() -> bytes:
    """One cell of 1.1 GB."""
    return workbook(
        sheet([b'<row r="1"><c r="A1" t="inlineStr"><is><t>', *repeated(b"a", GIGABYTE)])
    )


def wide_rows(dimension: str | None = None) -> bytes:
    """Rows of 100,000 cells each, 1.1 GB in all, none with a reference."""
    cells = number(None, 1) * 100_000
    count = GIGABYTE // len(cells)
    return workbook(sheet((row(None, cells) for _ in range(count)), dimension))


def huge_shared_strings() -> bytes:
    """A shared strings part of 1.1 GB."""
    return workbook(
        sheet([row(1, b'<c r="A1" t="s"><v>0</v></c>')]),
        shared_strings(repeated(b"<si><t>caneca azul</t></si>", GIGABYTE)),
    )


def lying(data: bytes, name: str, size: int) -> bytes:
    """The workbook `data` with the part `name` saying, in the zip's directory (where readers
    look), that it unpacks to `size` bytes, whatever it holds."""
    changed = bytearray(data)
    start = data.find(b"PK\x01\x02")
    while start >= 0:
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, start + 28)
        if data[start + 46 : start + 46 + name_length] == name.encode():
            assert struct.unpack_from("<I", data, start + 24)[0] != 0xFFFFFFFF  # not ZIP64's
            struct.pack_into("<I", changed, start + 24, size)
            return bytes(changed)
        start = data.find(b"PK\x01\x02", start + 46 + name_length + extra_length + comment_length)
    raise AssertionError(f"{name} is not in the directory")


def many_entries(count: int) -> bytes:
    """A zip whose directory has `count` empty entries besides a workbook."""
    made = io.BytesIO(workbook(sheet([row(1, text("A1", "nome"))])))
    with zipfile.ZipFile(made, "a") as book:
        for n in range(count):
            book.writestr(f"x/{n}", b"")
    return made.getvalue()


def too_long_a_cell() -> bytes:
    """One cell of 8 MiB of text that packs to three quarters of it: no size or ratio check
    refuses it before the reading does."""
    return workbook(
        sheet([b'<row r="1"><c r="A1" t="inlineStr"><is><t>', *random_text(8 * MEBIBYTE)])
    )


def too_wide_a_row(dimension: str | None = None) -> bytes:
    """A row of 20,000 cells without references, under a `<dimension>` or none."""
    return workbook(sheet([row(1, b"".join(number(None, n) for n in range(20_000)))], dimension))


def too_long_a_token() -> bytes:
    """An attribute of 4 MiB that never ends: expat would hold all of it."""
    return workbook(sheet([b'<row r="1"><c r="A1" t="', *random_text(4 * MEBIBYTE)]))


def lying_spaces() -> bytes:
    """The sheet of spaces, saying it unpacks to 4 KiB."""
    return lying(spaces(), "xl/worksheets/sheet1.xml", 4096)


_TOO_LARGE = "se expande a mais de 256 MiB"
_RETYPE = "salve de novo como «Pasta de Trabalho do Excel (.xlsx)»"
# Each bomb, the status it is answered with and what the answer says.
BOMBS: dict[str, tuple[Callable[[], bytes], int, str]] = {
    "a sheet of 1.1 GB of spaces": (spaces, 413, _TOO_LARGE),
    "one cell of 1.1 GB": (one_huge_cell, 413, _TOO_LARGE),
    "wide rows without a dimension": (wide_rows, 413, _TOO_LARGE),
    "wide rows with a dimension of A1:A1": (
        functools.partial(wide_rows, "A1:A1"),
        413,
        _TOO_LARGE,
    ),
    "a shared strings part of 1.1 GB": (huge_shared_strings, 413, _TOO_LARGE),
    "a part that says it holds 4 KiB": (lying_spaces, 422, _RETYPE),
    "a cell of 8 MiB": (too_long_a_cell, 422, "passa de 32.767 caracteres"),
    "a row of 20,000 cells": (too_wide_a_row, 422, "passa de 16.384 colunas"),
    "a row of 20,000 cells with a dimension of A1:A1": (
        functools.partial(too_wide_a_row, "A1:A1"),
        422,
        "passa de 16.384 colunas",
    ),
    "an attribute of 4 MiB": (too_long_a_token, 422, "passa de 1 MiB sem fim"),
    "a directory of 20,000 entries": (
        functools.partial(many_entries, 20_000),
        413,
        "mais de 10.000 partes",
    ),
}


@functools.cache
def bomb(name: str) -> bytes:
    """The bomb `name`, built once per test process (the largest take seconds to pack)."""
    return BOMBS[name][0]()


def soffice() -> str:
    found = shutil.which("soffice")
    if found is None:
        unavailable("LibreOffice is not installed: apt-get install libreoffice-calc-nogui")
    return found


def converted(source: Path, infilter: str | None) -> Path:
    """`source` opened by LibreOffice as a Brazilian user's would, saved as xlsx (with a profile
    of its own: two at once on one profile fail)."""
    profile = f"-env:UserInstallation={(source.parent / 'perfil').as_uri()}"
    out = source.parent / "out"
    command = [soffice(), profile, "--headless", "--convert-to", "xlsx", "--outdir", str(out)]
    if infilter:
        command.insert(3, f"--infilter={infilter}")
    done = subprocess.run([*command, str(source)], capture_output=True, timeout=120, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / (source.stem + ".xlsx")
