"""The list query: which page of the product list a request asks for, and the way back to it.

One parser for the list itself (`/produtos?depois=120`) and for `lista`, the parameter the edit,
new-product and removal pages carry so that a save, a removal or a cancel returns to the list
page the person came from (`/produtos/7?lista=depois%3D120`). Rebuilt from parsed values,
never echoed: a return address can only ever be a list page on this site.
"""

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from catalogo import errors
from catalogo.produtos import ler_id

LIST_PATH = "/produtos"
RETURN_PARAMETER = "lista"


@dataclass(frozen=True)
class Listing:
    """A page of the list: newest first, after or before a product (keyset cursors)."""

    after: int | None = None
    before: int | None = None

    @classmethod
    def parse(cls, parameters: Mapping[str, str], bad_cursor: str = errors.BAD_CURSOR) -> "Listing":
        """Reads the list's parameters, ignoring any others; a malformed one is 400. The trash
        pages by product too; a history pages by version, and says so (`bad_cursor`)."""
        try:
            return cls._read(parameters, bad_cursor)
        except _Malformed as malformed:
            raise errors.bad_request(*malformed.args) from None

    @classmethod
    def returning_to(
        cls, parameters: Mapping[str, str], name: str = RETURN_PARAMETER, of: str = "da lista"
    ) -> "Listing":
        """The list page named by a `lista` parameter (a query string), or the first page; or
        by another parameter `name` that carries the way back to a page `of` another list."""
        query = parameters.get(name, "")
        if not query:  # the first page: most requests, and the cheapest answer
            return _FIRST_PAGE
        try:
            pairs = urllib.parse.parse_qsl(
                query, keep_blank_values=True, strict_parsing=bool(query), errors="strict"
            )
            return cls._read(dict(pairs), errors.BAD_CURSOR)
        except (ValueError, _Malformed):  # UnicodeDecodeError is a ValueError
            raise errors.bad_request(errors.BAD_RETURN, name, of, query) from None

    @classmethod
    def _read(cls, parameters: Mapping[str, str], bad_cursor: str) -> "Listing":
        after = _cursor(parameters, "depois", bad_cursor)
        before = _cursor(parameters, "antes", bad_cursor)
        if after is not None and before is not None:
            raise _Malformed(errors.BOTH_CURSORS)
        return cls(after, before)

    @property
    def query(self) -> str:
        if self.after is not None:
            return f"depois={self.after}"
        if self.before is not None:
            return f"antes={self.before}"
        return ""

    @property
    def url(self) -> str:
        return self.at(LIST_PATH)

    def at(self, path: str) -> str:
        """This page of another list with the same cursors (the trash)."""
        return f"{path}?{self.query}" if self.query else path

    def carried(self, path: str) -> str:
        """`path` with this list as its way back (`?lista=…`), or `path` alone from page 1."""
        if not self.query:
            return path
        return f"{path}?{urllib.parse.urlencode({RETURN_PARAMETER: self.query})}"


_FIRST_PAGE = Listing()


def _cursor(parameters: Mapping[str, str], name: str, bad_cursor: str) -> int | None:
    value = parameters.get(name)
    if value is None:
        return None
    number = ler_id(value)
    if number is None:
        raise _Malformed(bad_cursor, name)
    return number


class _Malformed(Exception):
    """A list parameter we cannot read: the message, and what to fill it with."""
