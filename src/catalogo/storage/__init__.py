"""Where products are kept: one small interface, one module per database, SQL only there.

Pages are keyset pages in list order (newest first): a `Cursor` says "after" or "before" a
product id, so page 10,000 costs what page 1 costs.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from catalogo.produtos import Produto


class StorageUnavailable(Exception):
    """The database cannot answer now (locked too long, disk full, file gone): a 503."""


@dataclass(frozen=True)
class Cursor:
    """A page request: the first page, or the products just after or before an id."""

    limit: int
    after: int | None = None
    before: int | None = None


@dataclass(frozen=True)
class Page:
    produtos: list[Produto]
    next: Cursor | None
    prev: Cursor | None


class Storage(Protocol):
    async def page(self, cursor: Cursor) -> Page: ...

    async def get(self, id: int) -> Produto | None: ...

    async def create(self, produto: Produto) -> Produto: ...

    async def create_many(self, produtos: Iterable[Produto]) -> int: ...

    async def update(self, id: int, produto: Produto) -> Produto | None: ...

    async def delete(self, id: int) -> Produto | None: ...

    async def close(self) -> None: ...
