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
from functools import cached_property
from typing import Literal

from starlette.datastructures import ImmutableMultiDict

from catalogo.domain.busca import (
    BAD_CURSOR,
    BOTH_CURSORS,
    END,
    LAST_PAGE,
    Ordem,
    Position,
    Query,
    parse_list,
    token,
)
from catalogo.domain.errors import BadRequest, ListingError
from catalogo.domain.precos import preco_for_input
from catalogo.domain.produtos import parse_id
from catalogo.storage.paging import Cursor

BAD_RETURN = "«{}» deve ser a consulta de uma página {}, como depois=120 (recebido «{:.50}»)."


LIST_PATH = "/produtos"
RETURN_PARAMETER = "lista"


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
        return cls(*parse_list(parameters, parameters.getlist("id"), parameters.getlist("codigo")))

    @classmethod
    def returning_to(cls, parameters: Mapping[str, str], name: str = RETURN_PARAMETER) -> "Listing":
        """The list page named by a `lista` parameter (a query string), or the first page."""
        pairs = _pairs(parameters, name, "da lista")
        if not pairs:  # the first page: most requests, and the cheapest answer
            return _FIRST_PAGE
        try:
            return cls.parse(ImmutableMultiDict(pairs))
        except ListingError:
            raise BadRequest(
                BAD_RETURN.format(name, "da lista", parameters.get(name, ""))
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
    def parse(cls, parameters: Mapping[str, str], bad_cursor: str = BAD_CURSOR) -> "Paging":
        try:
            return cls._read(parameters, bad_cursor)
        except ListingError as malformed:
            raise BadRequest(str(malformed)) from None

    @classmethod
    def returning_to(cls, parameters: Mapping[str, str], name: str, of: str) -> "Paging":
        """The page named by the parameter `name` that carries the way back to a page `of`
        another list (the removed products' `removidos`)."""
        pairs = _pairs(parameters, name, of)
        try:
            return cls._read(dict(pairs), BAD_CURSOR)
        except ListingError:
            raise BadRequest(BAD_RETURN.format(name, of, parameters.get(name, ""))) from None

    @classmethod
    def _read(cls, parameters: Mapping[str, str], bad_cursor: str) -> "Paging":
        after = _number(parameters, "depois", bad_cursor)
        before = _number(parameters, "antes", bad_cursor)
        if after is not None and before is not None:
            raise ListingError(BOTH_CURSORS)
        return cls(after, before)

    def at(self, path: str) -> str:
        """This page of the list at `path`."""
        for name, value in self.cursor.items():
            return f"{path}{'&' if '?' in path else '?'}{name}={value}"
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


def trash_search(parameters: Mapping[str, str]) -> str:
    """The trash's search, `q`, as its page and a restore form's way back read it."""
    return parameters.get("q", "").strip()[:200]


def searched(path: str, q: str) -> str:
    """The page at `path` with the search `q`, if any."""
    return f"{path}?{urllib.parse.urlencode({'q': q})}" if q else path


def trash_way_back(paging: Paging, q: str) -> str:
    """What a restore form carries back to the page of the removed products it is on: that
    page's cursor and its search."""
    return urllib.parse.urlencode({**paging.cursor, **({"q": q} if q else {})})


def returning_to_trash(parameters: Mapping[str, str], name: str, path: str) -> str:
    """The page of the removed products a restore form came from (`trash_way_back`), rebuilt
    from what its cursor and search parse to, never echoed."""
    paging = Paging.returning_to(parameters, name, "dos removidos")
    return paging.at(searched(path, trash_search(dict(_pairs(parameters, name, "dos removidos")))))


def _pairs(parameters: Mapping[str, str], name: str, of: str) -> list[tuple[str, str]]:
    query = parameters.get(name, "")
    if not query:
        return []
    try:
        return urllib.parse.parse_qsl(
            query, keep_blank_values=True, strict_parsing=True, errors="strict"
        )
    except ValueError:  # UnicodeDecodeError is a ValueError
        raise BadRequest(BAD_RETURN.format(name, of, query)) from None


def parse_formato(parameters: Mapping[str, str]) -> Literal["csv", "xlsx"] | None:
    """`formato`: the list as a file for people, CSV (Excel pt-BR) or xlsx; none: a page."""
    formato = parameters.get("formato", "")
    if formato in ("csv", "xlsx"):
        return "csv" if formato == "csv" else "xlsx"
    if formato:
        raise ListingError(f"formato deve ser csv ou xlsx (recebido «{formato:.50}»).")
    return None


def _number(parameters: Mapping[str, str], name: str, bad_cursor: str) -> int | None:
    value = parameters.get(name)
    if value is None:
        return None
    number = parse_id(value)
    if number is None:
        raise ListingError(bad_cursor.format(name))
    return number
