"""A list page's steps, written once for both databases (paging.finding, paging.keyed),
answered here by hand: what each backend is asked, in which order, and what a page is made of
the answers. The same steps against the real databases are tests/storage/test_busca.py's and
tests/storage/test_storage.py's (the trash, a history)."""

from decimal import Decimal
from typing import Any

from catalogo.domain.busca import Position, Query
from catalogo.domain.produtos import Produto
from catalogo.storage.paging import (
    Anywhere,
    Count,
    Counting,
    Cursor,
    KeyedStep,
    Newer,
    Number,
    Older,
    Page,
    Rows,
    Slice,
    Step,
    finding,
    keyed,
    run,
)


class Plan:
    """The statements a backend's plan would make, as strings that say what they are."""

    def __init__(self, query: Query) -> None:
        self.query = query

    def count(self, up_to: int) -> tuple[str, list[Any]]:
        return "count", [up_to]

    def page(
        self, cursor: Cursor[Position], limit: int, counted: bool = False
    ) -> tuple[str, list[Any]]:
        return ("count before" if counted else "page"), [cursor, limit]


def rows(*ids: int) -> list[tuple[Produto, Position]]:
    return [(Produto(id=id, nome=f"P{id}", preco=Decimal(1)), Position(id, id)) for id in ids]


def answered(
    query: Query,
    cursor: Cursor[Position],
    count: int | None,
    answers: dict[type, list[Any]],
    position: bool = True,
) -> tuple[Page[Produto, Position], list[Step]]:
    asked: list[Step] = []

    def answer(step: Step) -> Any:
        asked.append(step)
        return answers[type(step)].pop(0)

    return run(finding(Plan(query), cursor, count, position), answer), asked


def test_a_page_before_a_cursor_with_nothing_before_it_is_the_first_page() -> None:
    page, asked = answered(
        Query(), Cursor(3, before=Position(9, 9)), None, {Rows: [rows(10), rows(12, 11, 10, 9)]}
    )
    assert [step.cursor for step in asked if isinstance(step, Rows)] == [
        Cursor(3, before=Position(9, 9)),
        Cursor(3),
    ]
    assert [p.id for p in page.items] == [12, 11, 10] and page.prev is None
    assert page.next == Cursor(3, after=Position(10, 10))


def test_a_count_past_the_time_budget_leaves_out_every_count_after_it() -> None:
    page, asked = answered(
        Query(),
        Cursor(3, after=Position(20, 20)),
        100,
        {Rows: [rows(19, 18, 17, 16)], Count: [None], Number: [5]},
    )
    counts = [step for step in asked if isinstance(step, Count)]
    assert len(counts) == 1 and isinstance(counts[0].counting, Counting)
    assert page.total is None and page.before is None


def test_a_first_page_that_holds_them_all_is_counted_without_asking_the_database() -> None:
    page, asked = answered(Query(), Cursor(3), 100, {Rows: [rows(2, 1)]}, position=False)
    assert asked == [Rows(Cursor(3))]
    assert (page.total, page.before) == (2, None)


def keyed_answered(cursor: Cursor[int], answers: list[Any]) -> tuple[Page[str, int], list[Any]]:
    asked: list[KeyedStep] = []

    def answer(step: KeyedStep) -> Any:
        asked.append(step)
        return answers.pop(0)

    return run(keyed(cursor), answer), asked


def test_a_keyed_page_before_a_cursor_is_read_oldest_first_and_turned_round() -> None:
    page, asked = keyed_answered(Cursor(2, before=5), [[("seis", 6), ("sete", 7)], True, 3])
    assert asked == [Slice(Cursor(2, before=5)), Older(6), Newer(7, 3)]
    assert page.items == ["sete", "seis"]
    assert page.next == Cursor(2, after=6) and page.prev == Cursor(2, before=7)


def test_a_keyed_page_whose_newer_items_fit_on_one_page_leads_back_to_the_first() -> None:
    page, _ = keyed_answered(Cursor(2, after=9), [[("oito", 8), ("sete", 7)], False, 1])
    assert page.next is None and page.prev == Cursor(2)


def test_an_empty_keyed_page_leads_back_to_the_first_only_when_the_list_has_items() -> None:
    page, asked = keyed_answered(Cursor(2, after=1), [[], True])
    assert asked == [Slice(Cursor(2, after=1)), Anywhere()]
    assert page.items == [] and page.prev == Cursor(2)
    assert keyed_answered(Cursor(2, after=1), [[], False])[0].prev is None
