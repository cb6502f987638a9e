"""Request bodies, read strictly: a form or a JSON object in UTF-8, or a clear 400 or 415.

Nothing is guessed: a field sent twice with two values, a number written with an exponent (in a
member that is read) and a JSON object that repeats a key are refused, not resolved one way or
the other.
"""

import json
import re
import urllib.parse
from collections.abc import Collection
from decimal import Decimal
from io import BytesIO
from typing import Any, NamedTuple

import python_multipart
from python_multipart.exceptions import FormParserError
from starlette.requests import Request
from starlette.types import Scope

from catalogo.domain.errors import BadRequest, Unsupported, UnsupportedBody, UnsupportedUpload
from catalogo.http.negotiation import FORM_TYPES, JSON, media_type

NOT_UTF8 = "O corpo da requisição não é UTF-8 válido."
REPEATED_FIELD = "O campo «{}» veio mais de uma vez, com valores diferentes."
MALFORMED_FORM = "Formulário malformado: {}."
FILE_REFUSED = "Este formulário não aceita arquivos (campo «{}»)."
ONE_FILE = "Envie um arquivo só no campo «{}»."
MALFORMED_JSON = "JSON malformado: {}."
LONE_SURROGATE = "O JSON traz \\u{:04x} sem par: não é um caractere; envie o texto em UTF-8."
NOT_A_JSON_OBJECT = 'O corpo deve ser um objeto JSON: {{"nome": …}}.'


MAX_FIELDS = 1000
_FORM_KEY = "catalogo.form"
_BODY_KEY = "catalogo.body"


def keep_body(scope: Scope, body: bytes) -> None:
    """The body http/middleware/guard.py read, for `body_of`."""
    scope[_BODY_KEY] = body


async def body_of(request: Request) -> bytes:
    """The request's body, as http/middleware/guard.py read it: Starlette's `Request.body` would
    read it again through the replayed `receive`, an async generator and its closing, on every
    write."""
    body: bytes | None = request.scope.get(_BODY_KEY)
    return await request.body() if body is None else body


async def read_form(request: Request, fields: Collection[str]) -> dict[str, str]:
    """The values the form gives for `fields`, decoded strictly.

    One of `fields` sent twice with two values is ambiguous, so 400; other fields are ignored.
    The body is parsed once per request and kept.
    """
    pairs: list[tuple[str, str]] | None = request.scope.get(_FORM_KEY)
    if pairs is None:
        pairs = await _parse_form(request)
        request.scope[_FORM_KEY] = pairs
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in fields and form.setdefault(name, value) != value:
            raise BadRequest(REPEATED_FIELD.format(name))
    return form


async def form_pairs(request: Request) -> list[tuple[str, str]]:
    """Every field the form sent, in order, repeats included: for a write kept to be sent
    again (http/access.py). Parsed once per request, as read_form does."""
    await read_form(request, ())
    pairs: list[tuple[str, str]] = request.scope[_FORM_KEY]
    return pairs


async def _parse_form(request: Request) -> list[tuple[str, str]]:
    media, options = media_type(request)
    if media not in FORM_TYPES:
        raise UnsupportedBody()
    _check_utf8(options)
    body = await body_of(request)
    try:
        if media == "multipart/form-data":
            return _multipart(request, body)
        return urllib.parse.parse_qsl(
            body.decode(), keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS
        )
    except UnicodeDecodeError:
        raise BadRequest(NOT_UTF8) from None
    except (ValueError, FormParserError) as reason:
        raise BadRequest(MALFORMED_FORM.format(reason)) from None


def _check_utf8(options: dict[bytes, bytes]) -> None:
    if options.get(b"charset", b"utf-8").lower() not in (b"utf-8", b"utf8"):
        raise Unsupported("Envie os dados em UTF-8.")


async def read_json(request: Request, members: Collection[str] = ()) -> dict[str, Any]:
    """The request's JSON object. Numbers with a fraction stay exact (Decimal, never float);
    one written with an exponent is refused in the `members` that are read, and left alone in
    the others, which are ignored."""
    media, options = media_type(request)
    if media != JSON:
        raise UnsupportedBody()
    _check_utf8(options)
    try:
        value = json.loads(
            (await body_of(request)).decode(),
            parse_float=_exact_number,
            parse_int=_whole_number,
            parse_constant=_refuse_constant,
            object_pairs_hook=_no_repeated_keys,
        )
    except UnicodeDecodeError:
        raise BadRequest(NOT_UTF8) from None
    except (ValueError, ArithmeticError, RecursionError) as reason:
        raise BadRequest(MALFORMED_JSON.format(reason)) from None
    if not isinstance(value, dict):
        raise BadRequest(NOT_A_JSON_OBJECT)
    _refuse_lone_surrogates(value)
    for name in members:
        if isinstance(value.get(name), _Exponent):
            written = f"{value[name]} usa expoente; escreva o número por extenso"
            raise BadRequest(MALFORMED_JSON.format(written))
    return value


def _refuse_lone_surrogates(value: Any) -> None:
    """`"\\ud800"` is valid JSON syntax but no character: no page or database could hold it.
    Walked without recursion, so no nesting json.loads accepted can overflow the stack here."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                raise BadRequest(LONE_SURROGATE.format(ord(found.group())))


_MAX_DIGITS = 100
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Exponent(str):
    """A JSON number written with an exponent, as it was written: refused where it is read, as
    in typed prices (read_json)."""


def _exact_number(text: str) -> Decimal | _Exponent:
    """A JSON number with a fraction, exactly."""
    if "e" in text or "E" in text:
        return _Exponent(text)
    return Decimal(text)


def _whole_number(text: str) -> int:
    """Python refuses over 4,300 digits with a message about its own limit; ours speaks of the
    JSON (no id, version or price needs more than 19 digits)."""
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise ValueError(f"um número com {len(text.lstrip('-'))} algarismos é longo demais")
    return int(text)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} não é JSON")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("uma chave aparece mais de uma vez")
    return value


class Upload(NamedTuple):
    """A file sent: its name as the browser gave it ("" when it was the body itself), its
    bytes (None: the form chose no file), and the form's other fields."""

    nome: str
    data: bytes | None
    fields: dict[str, str]


# A file sent as the body itself: a CSV, an xlsx, or bytes of no stated kind.
FILE_TYPES = frozenset(
    {
        "text/csv",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/octet-stream",
    }
)
_FILE_NAME_LIMIT = 255


async def read_upload(request: Request, field: str, fields: Collection[str]) -> Upload:
    """The file a form sends in `field` (multipart/form-data), with its other `fields`; or the
    body, when a program sends the file as it is (FILE_TYPES). Raises a 400 for a form that
    carries more than one file in `field`, and 415 for any other body."""
    media, _ = media_type(request)
    body = await body_of(request)
    if media in FILE_TYPES:
        return Upload("", body, {})
    if media != "multipart/form-data":
        raise UnsupportedUpload(field)
    pairs: list[tuple[str, str]] = []
    files: list[Any] = []

    def on_field(found: Any) -> None:
        pairs.append((found.field_name.decode(), (found.value or b"").decode()))

    def on_file(found: Any) -> None:
        files.append(found)

    headers = {"Content-Type": request.headers["content-type"].encode("latin-1")}
    try:
        python_multipart.parse_form(headers, BytesIO(body), on_field, on_file)
        if len(pairs) > MAX_FIELDS:
            raise ValueError(f"mais de {MAX_FIELDS} campos")
    except UnicodeDecodeError:
        raise BadRequest(NOT_UTF8) from None
    except (ValueError, FormParserError) as reason:
        raise BadRequest(MALFORMED_FORM.format(reason)) from None
    chosen = [f for f in files if f.field_name == field.encode() and f.file_name]
    nome, data = "", None
    try:
        if len(chosen) > 1:
            raise BadRequest(ONE_FILE.format(field))
        for sent in chosen:
            sent.file_object.seek(0)
            data = sent.file_object.read()
            nome = sent.file_name.decode(errors="replace")[-_FILE_NAME_LIMIT:]
    finally:
        for found in files:
            found.close()
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in fields and form.setdefault(name, value) != value:
            raise BadRequest(REPEATED_FIELD.format(name))
    return Upload(nome, data, form)


def _multipart(request: Request, body: bytes) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    files: list[str] = []

    def on_field(field: Any) -> None:
        pairs.append((field.field_name.decode(), (field.value or b"").decode()))

    def on_file(file: Any) -> None:
        files.append((file.field_name or b"").decode(errors="replace"))

    headers = {"Content-Type": request.headers["content-type"].encode("latin-1")}
    python_multipart.parse_form(headers, BytesIO(body), on_field, on_file)
    if len(pairs) > MAX_FIELDS:
        raise ValueError(f"mais de {MAX_FIELDS} campos")
    if files:
        raise BadRequest(FILE_REFUSED.format(files[0]))
    return pairs
