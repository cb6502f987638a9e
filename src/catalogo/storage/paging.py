"""Keyset pages, once for every backend and every list: a `Cursor` says "after" or "before" a
position in the page's order, so page 10,000 costs what page 1 costs.

A list page (`finding`) is read in steps that each backend answers with its own SQL, the
SQLite one on a thread and the PostgreSQL one awaiting its connection: the steps are written
once here, sans I/O (as h11 writes HTTP), and `run` / `run_async` drive them. The trash and
the histories, newest first by one key, are read likewise in `keyed`'s steps.
"""

import itertools
from collections.abc import Awaitable, Callable, Generator, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from catalogo.domain.busca import END, Ordem, Position, Query
from catalogo.domain.produtos import Produto

P = TypeVar("P")  # where a page starts or ends: an id, a version, or a busca.Position
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Cursor(Generic[P]):
    """A page request: the first page, or the items just after or before a position (a
    product's id in the trash, an event's version in a history, a busca.Position in a list)."""

    limit: int
    after: P | None = None
    before: P | None = None


_SERIALS = itertools.count()


@dataclass(frozen=True)
class Page(Generic[T, P]):
    items: list[T]
    next: Cursor[P] | None
    prev: Cursor[P] | None
    total: int | None = None  # how many in all, counted up to what was asked + 1; None: not asked
    before: int | None = None  # how many come before this page, counted likewise
    # Which read made it, never the same for two pages in a process: what is made of a page
    # (a list's HTML) is kept by it, and a store that keeps pages (SQLite's) hands out the
    # same page, serial and all, while nothing changes.
    serial: int = field(default_factory=lambda: next(_SERIALS), compare=False)


COUNT_CAP = 10_000  # a page says "mais de 10.000" rather than count a million
EXPORT_CHUNK = 100  # products an export reads, formats and sends at a time: 500 held the
# event loop 30-40 ms at the 99th percentile (bench/results/history.md), 100 under 3 ms, as fast
COUNT_EXACT = 2**62  # what a JSON client that asks for the total is counted up to


def page_of(
    cursor: Cursor[P],
    items: list[T],
    ids: tuple[P, P] | None,
    older: bool,
    newer: int,
    anywhere: bool,
) -> Page[T, P]:
    """A page and its links, from what lies around it: the positions (`ids`) of its first and
    last items, whether any item is `older` than its last, how many are `newer` than its first
    (counted up to one page and one more), and, for an empty page, whether there is any item
    at all (then the way back is page 1)."""
    if not items or ids is None:
        paged = cursor.after is not None or cursor.before is not None
        return Page([], None, Cursor(cursor.limit) if anywhere and paged else None)
    first, last = ids
    prev: Cursor[P] | None = None
    if newer > cursor.limit:
        prev = Cursor(cursor.limit, before=first)
    elif newer:
        prev = Cursor(cursor.limit)  # what is newer fits on the first page
    return Page(items, Cursor(cursor.limit, after=last) if older else None, prev)


class Walk(NamedTuple):
    """How a list page is read: along which column (id, nome, preco or atualizado_em), which
    way, and from which position (none: from the start)."""

    column: str
    ascending: bool
    position: Position | None


def walk(ordem: Ordem, cursor: Cursor[Position]) -> Walk:
    """A page before a position is read backwards from it, then turned round (`found`); the
    last page (before END) backwards from the end."""
    ascending = not ordem.startswith("-")
    if cursor.before is not None:
        ascending = not ascending
    position = cursor.after if cursor.after is not None else cursor.before
    return Walk(ordem.lstrip("-"), ascending, None if position == END else position)


def whole(cursor: Cursor[Position], rows: list[Any]) -> int | None:
    """How many there are when a first page's rows (a page and one more at most) hold them
    all: counted for free."""
    if cursor.after is None and cursor.before is None and len(rows) <= cursor.limit:
        return len(rows)
    return None


class Counts:
    """Counts as of one state of the database (`stamp`, which every change moves), so that the
    same thing is counted once while nothing changes, and never seen stale: a list query's
    total, or (SQLite) whether a word or a price range is rare enough for one plan."""

    _KEPT = 1_000

    def __init__(self) -> None:
        self._stamp: object = None
        self._known: dict[tuple[Hashable, int], int] = {}

    def known(self, stamp: object, counted: Hashable, up_to: int) -> int | None:
        """The count of `counted` made since the database was last changed, if one was."""
        if stamp != self._stamp or len(self._known) >= self._KEPT:
            self._stamp, self._known = stamp, {}
        return self._known.get((counted, up_to))

    def remember(self, counted: Hashable, up_to: int, total: int) -> int:
        self._known[counted, up_to] = total
        return total


def first_shown(cursor: Cursor[Position], rows: list[tuple[Produto, Position]]) -> Position | None:
    """The position of a page's first product as shown: rows read before a cursor come
    backwards."""
    shown = rows[: cursor.limit]
    if not shown:
        return None
    return shown[-1][1] if cursor.before is not None else shown[0][1]


Statement = tuple[str, list[Any]]


class Counting(NamedTuple):
    """A count a list page still needs: what it counts (its key in Counts) and the statement."""

    counted: Hashable
    statement: Statement


class CountingPlan(Protocol):
    """What a backend's plan of a list query says, for its counts."""

    query: Query

    def count(self, up_to: int) -> Statement: ...

    def page(self, cursor: Cursor[Position], limit: int, counted: bool = False) -> Statement: ...


def countings(
    plan: CountingPlan,
    cursor: Cursor[Position],
    rows: list[tuple[Produto, Position]],
    up_to: int,
    position: bool,
) -> tuple[int | Counting, int | Counting | None]:
    """A page's total and, for its `position`, how many come before it ("51-100 de 119"),
    each up to `up_to` + 1: known for free (a first page that holds them all, nothing before a
    first page), to be counted (Counting), or not asked or not known (None: before an empty
    page past the end)."""
    total = whole(cursor, rows)
    first = first_shown(cursor, rows)
    before: int | Counting | None = None
    if position and first is not None:
        back = Cursor(cursor.limit, before=first)
        before = Counting(("before", plan.query, first), plan.page(back, up_to + 1, True))
    elif position and cursor.after is None and cursor.before is None:
        before = 0
    return (Counting(plan.query, plan.count(up_to)) if total is None else total), before


def found(
    cursor: Cursor[Position],
    rows: list[tuple[Produto, Position]],
    total: int | None,
    newer: int | None = None,
    before: int | None = None,
) -> Page[Produto, Position]:
    """A list's page from up to one page and one more `rows` in the direction walked (for a
    `before` cursor, backwards, and more than a page: fewer, and the caller asks again for the
    first page). What lies before a page reached by `after` is read again only when it is
    cheap (`newer`, counted up to a page and one more: the whole catalog in an order); for a
    search that would cost as much as the page, and its way back may lead to the first page."""
    limit = cursor.limit
    more = len(rows) > limit
    rows = rows[:limit]
    if cursor.before is not None:
        rows.reverse()
    items = [produto for produto, _ in rows]
    paged = cursor.after is not None or cursor.before is not None
    if not items:
        return Page([], None, Cursor(limit) if paged else None, total, before)
    first, last = rows[0][1], rows[-1][1]
    if cursor.before is not None:
        later = None if cursor.before == END else Cursor(limit, after=last)
        return Page(items, later, Cursor(limit, before=first), total, before)
    prev = Cursor(limit, before=first) if paged else None
    if newer is not None and newer <= limit:
        prev = Cursor(limit) if newer else None  # what comes before fits on the first page
    return Page(items, Cursor(limit, after=last) if more else None, prev, total, before)


def next_chunk(
    cursor: Cursor[Position], rows: list[tuple[Produto, Position]]
) -> tuple[list[Produto], Cursor[Position] | None]:
    """An export's chunk from up to a chunk and one more `rows` read from `cursor`, and where
    the next chunk starts (None: this was the last)."""
    limit = cursor.limit
    items = [produto for produto, _ in rows[:limit]]
    return items, (Cursor(limit, after=rows[limit - 1][1]) if len(rows) > limit else None)


class Rows(NamedTuple):
    """A step: up to a page and one more rows from `cursor` on, in the walking direction."""

    cursor: Cursor[Position]


class Number(NamedTuple):
    """A step: the one number `statement` gives."""

    statement: Statement


class Count(NamedTuple):
    """A step: a count, remembered while the database is unchanged (Counts); None when it ran
    past the time budget, after which the backend can run no more statements."""

    counting: Counting
    up_to: int


Step = Rows | Number | Count
Steps = Generator[Step, Any, Page[Produto, Position]]


def finding(
    plan: CountingPlan, cursor: Cursor[Position], count: int | None, position: bool
) -> Steps:
    """A list's page, as `Storage.find` promises it: a page before a cursor that has nothing
    before it is the first page; what lies before a page reached by `after` is counted when it
    is cheap (no filter); a count past the time budget is left out (None), and ends the
    reading."""
    rows = yield Rows(cursor)
    if cursor.before is not None and len(rows) <= cursor.limit:
        cursor = Cursor(cursor.limit)  # nothing before: this is the start
        rows = yield Rows(cursor)
    newer = None
    if cursor.after is not None and rows and not plan.query.filtered:
        back = Cursor(cursor.limit, before=rows[0][1])
        newer = yield Number(plan.page(back, cursor.limit + 1, counted=True))
    total = before = None
    if count is not None:
        whole, ahead = countings(plan, cursor, rows, count, position)
        total = (yield Count(whole, count)) if isinstance(whole, Counting) else whole
        if total is not None:
            before = (yield Count(ahead, count)) if isinstance(ahead, Counting) else ahead
    return found(cursor, rows, total, newer, before)


class Slice(NamedTuple):
    """A keyed step: up to `cursor.limit` items from the cursor on, newest first, as
    (item, key) pairs; before a cursor, read oldest first (`keyed` turns them round)."""

    cursor: Cursor[Any]


class Older(NamedTuple):
    """A keyed step: whether any item is older than the one keyed `last`."""

    last: Any


class Newer(NamedTuple):
    """A keyed step: how many items are newer than the one keyed `first`, up to `up_to`."""

    first: Any
    up_to: int


class Anywhere(NamedTuple):
    """A keyed step: whether the list has any item at all."""


KeyedStep = Slice | Older | Newer | Anywhere


class KeyedList(NamedTuple):
    """A list kept newest first by `key` (a column, or a row of them), in SQL written with `?`
    (PostgreSQL numbers them): its items (`rows`, a WHERE open to one more condition, taking
    `params`), the same list bare (`every`, whose key is `bare_key`), and `at`, where an item's
    key stands, from the one value a cursor holds."""

    rows: str
    key: str
    every: str
    bare_key: str
    at: str
    params: tuple[Any, ...] = ()

    def statement(self, step: KeyedStep) -> tuple[str, tuple[Any, ...]]:
        """The statement that answers `step`: rows for a Slice, one value otherwise."""
        newest = ", ".join(f"{column} DESC" for column in self.key.split(", "))
        match step:
            case Slice(Cursor(limit, _, before)) if before is not None:
                oldest = newest.replace(" DESC", " ASC")
                sql = f"{self.rows} AND ({self.key}) > {self.at} ORDER BY {oldest} LIMIT ?"
                return sql, (*self.params, before, limit)
            case Slice(Cursor(limit, after, _)) if after is not None:
                sql = f"{self.rows} AND ({self.key}) < {self.at} ORDER BY {newest} LIMIT ?"
                return sql, (*self.params, after, limit)
            case Slice(Cursor(limit, _, _)):
                return f"{self.rows} ORDER BY {newest} LIMIT ?", (*self.params, limit)
            case Older(last):
                sql = f"SELECT EXISTS({self.every} AND ({self.bare_key}) < {self.at})"
                return sql, (*self.params, last)
            case Newer(first, up_to):
                newer = f"{self.every} AND ({self.bare_key}) > {self.at} LIMIT ?"
                return f"SELECT count(*) FROM ({newer}) AS newer", (*self.params, first, up_to)
        return f"SELECT EXISTS({self.every})", self.params


def keyed(cursor: Cursor[P]) -> Generator[KeyedStep, Any, Page[Any, P]]:
    """A page of a list kept newest first by one key (the trash, a history), and its links."""
    rows = yield Slice(cursor)
    if cursor.before is not None:
        rows = rows[::-1]
    if not rows:
        return page_of(cursor, [], None, False, 0, (yield Anywhere()))
    first, last = rows[0][1], rows[-1][1]
    older = yield Older(last)
    newer = yield Newer(first, cursor.limit + 1)
    return page_of(cursor, [item for item, _ in rows], (first, last), older, newer, True)


def run(steps: Generator[Any, Any, R], answer: Callable[[Any], Any]) -> R:
    """What `steps` make, each step answered by `answer` (SQLite's reader)."""
    try:
        result = None
        while True:
            result = answer(steps.send(result))
    except StopIteration as done:
        made: R = done.value
        return made


async def run_async(steps: Generator[Any, Any, R], answer: Callable[[Any], Awaitable[Any]]) -> R:
    """`run`, with a backend that awaits its answers (PostgreSQL)."""
    try:
        result = None
        while True:
            result = await answer(steps.send(result))
    except StopIteration as done:
        made: R = done.value
        return made
