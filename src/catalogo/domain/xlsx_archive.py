"""An xlsx's zip archive, read within fixed bounds (domain/xlsx.py says which and why): its
directory's size, each part's declared and inflated size and its ratio, and each part's XML
streamed through expat into a handler, no DTD accepted, no token of markup longer than
TOKEN_MAXIMUM, and every element counted against the workbook's budget."""

import io
import lzma
import struct
import zipfile
import zlib
from collections.abc import Iterator
from xml.parsers import expat

from catalogo.domain.errors import ImportRefused, WorkbookTooLarge

INFLATED_MAXIMUM = 256 * 2**20
RATIO_MAXIMUM = 100
RATIO_FROM = 2**20  # smaller parts (styles, a short sheet of blanks) may pack tighter
PARTS_MAXIMUM = 10_000
CELL_MAXIMUM = 32_767
TOKEN_MAXIMUM = 2**20
CHUNK = 64 * 1024
_END_RECORD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
# What zipfile and the decompressors raise for a broken or unsupported archive (an encrypted
# part is a RuntimeError): all of them mean the same to the person who sent it.
_BROKEN = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,
)


def malformed(detail: str) -> ImportRefused:
    return ImportRefused(
        f"A planilha não pôde ser lida ({detail}): abra-a e salve de novo como «Pasta de "
        "Trabalho do Excel (.xlsx)» ou como CSV."
    )


def thousands(number: int) -> str:
    return f"{number:,}".replace(",", ".")


def mebibytes(count: int) -> str:
    return f"{thousands(count // 2**20)} MiB"


def _entries(data: bytes) -> int:
    """How many entries the zip's end record says its directory holds (ZIP64's if it has
    one): the number zipfile would build an object for, each."""
    end = data.rfind(_END_RECORD, max(0, len(data) - 22 - 0xFFFF))
    if end < 0 or len(data) < end + 22:
        raise malformed("não é um arquivo zip")
    (count,) = struct.unpack_from("<H", data, end + 10)
    locator = end - 20
    if locator >= 0 and data[locator : locator + 4] == _ZIP64_LOCATOR:
        (record,) = struct.unpack_from("<Q", data, locator + 8)
        if record + 40 <= len(data):
            (count64,) = struct.unpack_from("<Q", data, record + 32)
            count = max(count, count64)
    return int(count)


class Book:
    """The zip, and the budget of bytes its parts may still unpack to."""

    def __init__(self, data: bytes, elements: int) -> None:
        self.elements = 0  # of the parts read before
        self.elements_maximum = elements
        if _entries(data) > PARTS_MAXIMUM:
            raise WorkbookTooLarge(
                f"O arquivo tem mais de {thousands(PARTS_MAXIMUM)} partes: uma pasta de trabalho "
                "de produtos tem algumas dezenas. Salve a planilha de novo ou envie um CSV.",
            )
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
        except (*_BROKEN, ValueError, struct.error) as error:
            raise malformed(type(error).__name__) from None
        self.left = INFLATED_MAXIMUM

    def parse(self, name: str, handler: "Handler") -> Iterator[None]:
        """Streams the part `name` through expat into `handler`; yields after each chunk, so
        that a caller gives what was read before the next one is. A missing part is malformed.
        """
        try:
            info = self.zip.getinfo(name)
        except KeyError:
            raise malformed(f"falta a parte {name[:100]}") from None
        self._check(info)
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.buffer_size = CHUNK
        parser.StartElementHandler = handler.start
        parser.EndElementHandler = handler.end
        parser.CharacterDataHandler = handler.add
        parser.StartDoctypeDeclHandler = _no_doctype
        fed = 0
        try:
            with self.zip.open(info) as part:
                while chunk := part.read(CHUNK):
                    self.left -= len(chunk)
                    if self.left < 0:
                        raise self._too_large()
                    parser.Parse(chunk, False)
                    fed += len(chunk)
                    # where expat stopped: the start of a token it holds, still incomplete
                    if fed - parser.CurrentByteIndex > TOKEN_MAXIMUM:
                        raise malformed(f"um trecho de {name[:100]} passa de 1 MiB sem fim")
                    if self.elements + handler.elements > self.elements_maximum:
                        raise WorkbookTooLarge(
                            f"A planilha tem mais de {thousands(self.elements_maximum)} elementos "
                            "de XML: mais do que uma importação lê. Salve-a de novo ou divida-a.",
                        )
                    yield
                parser.Parse(b"", True)
            self.elements += handler.elements
        except expat.ExpatError as error:
            raise malformed(
                f"XML inválido em {name[:100]}: {expat.ErrorString(error.code)}"
            ) from None
        except _BROKEN as error:
            raise malformed(f"{type(error).__name__} em {name[:100]}") from None
        yield

    def _check(self, info: zipfile.ZipInfo) -> None:
        if info.file_size > self.left:
            raise self._too_large()
        if info.file_size > RATIO_FROM and info.file_size > RATIO_MAXIMUM * info.compress_size:
            ratio = info.file_size // max(info.compress_size, 1)
            raise WorkbookTooLarge(
                f"A parte {info.filename[:100]} da planilha se expande {thousands(ratio)} vezes ao "
                f"ser aberta (o limite é {RATIO_MAXIMUM}): não é uma planilha comum. Salve-a de "
                "novo ou envie um CSV.",
            )

    @staticmethod
    def _too_large() -> WorkbookTooLarge:
        return WorkbookTooLarge(
            f"A planilha se expande a mais de {mebibytes(INFLATED_MAXIMUM)} ao ser aberta: "
            "divida-a em partes ou envie um CSV.",
        )

    def has(self, name: str) -> bool:
        try:
            self.zip.getinfo(name)
        except KeyError:
            return False
        return True


def _no_doctype(*_: object) -> None:
    raise malformed("declara um DTD")


class Handler:
    """What expat calls as a part streams in, and the text being read: what a cell's or a
    shared string's text elements (`v`, `t`) hold, bounded by CELL_MAXIMUM as it arrives,
    phonetic guides (`rPh`) left out."""

    def __init__(self) -> None:
        self.parts: list[str] | None = None  # None: no text element was read
        self.active = False  # inside a text element
        self.length = 0
        self.phonetic = 0
        self.elements = 0  # begun: every handler counts them

    def start(self, name: str, attributes: dict[str, str]) -> None:
        """An element begins."""

    def end(self, name: str) -> None:
        """An element ends."""

    def begin(self) -> None:
        if not self.phonetic:
            self.active = True
            if self.parts is None:
                self.parts = []

    def add(self, content: str) -> None:
        if not self.active or self.parts is None:
            return
        self.length += len(content)
        if self.length > CELL_MAXIMUM:
            raise ImportRefused(
                f"Uma célula da planilha passa de {thousands(CELL_MAXIMUM)} caracteres, o máximo "
                "de uma célula do Excel: confira se este é o arquivo certo."
            )
        self.parts.append(content)

    def take(self) -> str | None:
        taken = None if self.parts is None else "".join(self.parts)
        self.parts, self.active, self.length = None, False, 0
        return taken
