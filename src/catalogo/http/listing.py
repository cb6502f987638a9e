"""The list query: what a request asks of the product list, and the way back to it.

One parser for every list (`/produtos?q=caneca&ordem=preco&preco_max=50`, HTML and JSON
alike) and for `lista`, the parameter the edit, new-product and removal pages carry so that a
save, a removal or a cancel returns to the list page the person came from
(`/produtos/7?lista=q%3Dcaneca`). Rebuilt from parsed values, never echoed: a return address
can only ever be a list page on this site. Unknown parameters are ignored; a malformed known
one is a ListingError that names what is accepted.

The trash and a history page by number (`Paging`): a product's id, an event's version.
"""

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cached_property
from typing import Literal

from starlette.datastructures import ImmutableMultiDict

from catalogo.domain import text
from catalogo.domain.busca import (
    END,
    IDS_MAXIMUM,
    ORDENS,
    QUERY_MAXIMUM,
    BadToken,
    Ordem,
    Position,
    Query,
    codigo_key,
    position_of,
    terms,
    token,
)
from catalogo.domain.precos import PrecoInvalido, parse_preco, preco_for_input
from catalogo.domain.produtos import CODIGO_MAXIMO, parse_id
from catalogo.http import errors
from catalogo.storage.paging import Cursor

LIST_PATH = "/produtos"
RETURN_PARAMETER = "lista"
LAST_PAGE = "fim"  # antes=fim: the list's last page, in any order
_PRICE_NAMES = {"preco_min": "O preço mínimo", "preco_max": "O preço máximo"}


class ListingError(ValueError):
    """A list parameter we cannot read: the message says what to send instead; `field`, the
    search form's field it came from, if any."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Listing:
    """A page of the product list: its query, where the page starts (after or before a
    position), and the query's text as typed (`q`) and prices as written, to show them back."""

    query: Query = field(default_factory=Query)
    after: Position | None = None
    before: Position | None = None
    q: str = ""

    @classmethod
    def parse(cls, parameters: ImmutableMultiDict[str, str]) -> "Listing":
        """Reads the list's parameters (QueryParams is one)."""
        q = parameters.get("q", "")
        if len(q) > QUERY_MAXIMUM:
            raise ListingError(f"A busca (q) pode ter no máximo {QUERY_MAXIMUM} caracteres.", "q")
        try:
            text.read(q, one_line=False)  # what no product can hold, a database may refuse
        except text.RefusedCharacter as refused:
            raise ListingError(
                f"A busca (q) não pode conter o caractere de controle {refused.code}.", "q"
            ) from None
        ordem = parameters.get("ordem") or "-id"
        if ordem not in ORDENS:
            raise ListingError(f"ordem deve ser {', '.join(ORDENS)} (recebido «{ordem:.50}»).")
        preco_min, preco_max = _price(parameters, "preco_min"), _price(parameters, "preco_max")
        if preco_min is not None and preco_max is not None and preco_min > preco_max:
            raise ListingError(
                "O preço mínimo (preco_min) é maior que o máximo (preco_max).", "preco_min"
            )
        query = Query(terms(q), preco_min, preco_max, _ids(parameters), ordem, _codigos(parameters))
        after = _cursor(parameters, "depois", query)
        before = _cursor(parameters, "antes", query)
        if after is not None and before is not None:
            raise ListingError(errors.BOTH_CURSORS)
        return cls(query, after, before, " ".join(q.split()))

    @classmethod
    def returning_to(cls, parameters: Mapping[str, str], name: str = RETURN_PARAMETER) -> "Listing":
        """The list page named by a `lista` parameter (a query string), or the first page."""
        pairs = _pairs(parameters, name, "da lista")
        if not pairs:  # the first page: most requests, and the cheapest answer
            return _FIRST_PAGE
        try:
            return cls.parse(ImmutableMultiDict(pairs))
        except ListingError:
            raise errors.bad_request(
                errors.BAD_RETURN, name, "da lista", parameters.get(name, "")
            ) from None

    def at(self, cursor: Cursor[Position] | None) -> "Listing":
        """Another page of the same list: the first, or the one a cursor names. Its `search`
        is this one's, handed over rather than made again (a list page makes up to 9 of
        these, and each urlencode cost as much as a row)."""
        if cursor is None:
            moved = replace(self, after=None, before=None)
        else:
            moved = replace(self, after=cursor.after, before=cursor.before)
        vars(moved)["search"] = self.search  # cached_property's own place for it
        return moved

    def with_order(self, ordem: Ordem) -> "Listing":
        """The first page of the same list in another order."""
        return replace(self, query=replace(self.query, ordem=ordem), after=None, before=None)

    @cached_property
    def search(self) -> str:
        """The query string of the list without its page: what it shows, from the start.
        (Kept once made: a list page asks each of its links for it, up to 17 times.)"""
        pairs: list[tuple[str, str]] = []
        if self.q:
            pairs.append(("q", self.q))
        for name in ("preco_min", "preco_max"):
            if (value := getattr(self.query, name)) is not None:
                pairs.append((name, preco_for_input(value)))
        pairs += [("id", str(id)) for id in self.query.ids]
        pairs += [("codigo", codigo) for codigo in self.query.codigos]
        if self.query.ordem != "-id":
            pairs.append(("ordem", self.query.ordem))
        return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)

    @property
    def cursor(self) -> dict[str, str]:
        """Where this page starts, as its query parameter and value (none: the first page),
        which a program passes back as `cursor` (a JSON page's `cursores`). Not kept: a
        cached_property takes a lock on Python 3.11, and a redirect to the list reads it once."""
        found: dict[str, str] = {}
        for name, position in (("depois", self.after), ("antes", self.before)):
            if position == END:
                found = {"antes": LAST_PAGE}
            elif position is not None:
                value = str(position.id) if self.query.by_id else token(self.query, position)
                found = {name: value}
        return found

    @cached_property
    def encoded(self) -> str:
        """The query string of this page of the list."""
        page = ""
        for name, value in self.cursor.items():  # one at most
            page = f"{name}={value}"
        return "&".join(part for part in (self.search, page) if part)

    @property
    def url(self) -> str:
        return f"{LIST_PATH}?{self.encoded}" if self.encoded else LIST_PATH

    def carried(self, path: str) -> str:
        """`path` with this list as its way back (`?lista=…`), or `path` alone from page 1."""
        if not self.encoded:
            return path
        return f"{path}?{urllib.parse.urlencode({RETURN_PARAMETER: self.encoded})}"


_FIRST_PAGE = Listing()


@dataclass(frozen=True)
class Paging:
    """A page of the trash (by product id) or of a history (by version)."""

    after: int | None = None
    before: int | None = None

    @classmethod
    def parse(cls, parameters: Mapping[str, str], bad_cursor: str = errors.BAD_CURSOR) -> "Paging":
        try:
            return cls._read(parameters, bad_cursor)
        except ListingError as malformed:
            raise errors.bad_request(str(malformed)) from None

    @classmethod
    def returning_to(cls, parameters: Mapping[str, str], name: str, of: str) -> "Paging":
        """The page named by the parameter `name` that carries the way back to a page `of`
        another list (the removed products' `removidos`)."""
        pairs = _pairs(parameters, name, of)
        try:
            return cls._read(dict(pairs), errors.BAD_CURSOR)
        except ListingError:
            raise errors.bad_request(
                errors.BAD_RETURN, name, of, parameters.get(name, "")
            ) from None

    @classmethod
    def _read(cls, parameters: Mapping[str, str], bad_cursor: str) -> "Paging":
        after = _number(parameters, "depois", bad_cursor)
        before = _number(parameters, "antes", bad_cursor)
        if after is not None and before is not None:
            raise ListingError(errors.BOTH_CURSORS)
        return cls(after, before)

    def at(self, path: str) -> str:
        """This page of the list at `path`."""
        for name, value in self.cursor.items():
            return f"{path}?{name}={value}"
        return path

    @property
    def cursor(self) -> dict[str, int]:
        """Where this page starts, as its query parameter and value (none: the first page)."""
        for name, value in (("depois", self.after), ("antes", self.before)):
            if value is not None:
                return {name: value}
        return {}

    @property
    def first(self) -> bool:
        return self.after is None and self.before is None

    @property
    def encoded(self) -> str:
        return self.at("").lstrip("?")


def _pairs(parameters: Mapping[str, str], name: str, of: str) -> list[tuple[str, str]]:
    query = parameters.get(name, "")
    if not query:
        return []
    try:
        return urllib.parse.parse_qsl(
            query, keep_blank_values=True, strict_parsing=True, errors="strict"
        )
    except ValueError:  # UnicodeDecodeError is a ValueError
        raise errors.bad_request(errors.BAD_RETURN, name, of, query) from None


def _price(parameters: Mapping[str, str], name: str) -> Decimal | None:
    value = parameters.get(name, "")
    if not value.strip():
        return None
    try:
        return parse_preco(value)
    except PrecoInvalido as invalid:
        raise ListingError(f"{_PRICE_NAMES[name]} ({name}): {invalid}", name) from None


def _ids(parameters: ImmutableMultiDict[str, str]) -> tuple[int, ...]:
    values = parameters.getlist("id")
    if len(values) > IDS_MAXIMUM:
        raise ListingError(f"Peça no máximo {IDS_MAXIMUM} produtos (id) de uma vez.")
    ids = []
    for value in values:
        id = parse_id(value)
        if id is None:
            raise ListingError(f"Cada id deve ser o número de um produto (recebido «{value:.50}»).")
        ids.append(id)
    return tuple(dict.fromkeys(ids))


def _codigos(parameters: ImmutableMultiDict[str, str]) -> tuple[str, ...]:
    """The codes asked for (`codigo=`, exact and blind to case), as codigo_key makes them."""
    values = parameters.getlist("codigo")
    if len(values) > IDS_MAXIMUM:
        raise ListingError(f"Peça no máximo {IDS_MAXIMUM} códigos (codigo) de uma vez.")
    keys = []
    for value in values:
        try:
            codigo = text.read(value, one_line=True)
        except text.RefusedCharacter as refused:
            raise ListingError(
                f"Um código (codigo) não pode conter o caractere {refused.code}."
            ) from None
        if not codigo or len(codigo) > CODIGO_MAXIMO:
            raise ListingError(
                f"Cada código (codigo) tem de 1 a {CODIGO_MAXIMO} caracteres "
                f"(recebido «{value:.70}»)."
            )
        keys.append(codigo_key(codigo))
    return tuple(dict.fromkeys(keys))


def parse_formato(parameters: Mapping[str, str]) -> Literal["csv", "xlsx"] | None:
    """`formato`: the list as a file for people, CSV (Excel pt-BR) or xlsx; none: a page."""
    formato = parameters.get("formato", "")
    if formato in ("csv", "xlsx"):
        return "csv" if formato == "csv" else "xlsx"
    if formato:
        raise ListingError(f"formato deve ser csv ou xlsx (recebido «{formato:.50}»).")
    return None


def _cursor(parameters: Mapping[str, str], name: str, query: Query) -> Position | None:
    value = parameters.get(name)
    if value is None:
        return None
    if name == "antes" and value == LAST_PAGE:
        return END
    if query.by_id:
        id = parse_id(value)
        if id is None:
            raise ListingError(errors.BAD_CURSOR.format(name))
        return Position(id, id)
    try:
        return position_of(query, value)
    except BadToken as bad:
        raise ListingError(errors.FOREIGN_CURSOR.format(name, bad)) from None


def _number(parameters: Mapping[str, str], name: str, bad_cursor: str) -> int | None:
    value = parameters.get(name)
    if value is None:
        return None
    number = parse_id(value)
    if number is None:
        raise ListingError(bad_cursor.format(name))
    return number
