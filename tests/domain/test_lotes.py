"""A batch's rules (domain/lotes.py): what a clerk may ask, the price each product gets (half up, to
the cent, never below R$ 0,01), and the selection a confirmation carries."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalogo.domain import lotes
from catalogo.domain.historico import Evento
from catalogo.domain.lotes import LoteInvalido, Pedido, described
from catalogo.domain.precos import PRECO_MAXIMO


@pytest.mark.parametrize(
    ("percentual", "atual", "novo"),
    [
        ("10", "10.00", "11.00"),
        ("10", "10.05", "11.06"),  # 11.055, half up
        ("10", "0.15", "0.17"),  # 0.165
        ("-10", "0.15", "0.14"),  # 0.135
        ("8", "39.90", "43.09"),  # 43.092
        ("2,5", "100.00", "102.50"),
        ("-99,99", "100.00", "0.01"),
    ],
)
def test_a_reprice_rounds_half_up_to_the_cent(percentual: str, atual: str, novo: str) -> None:
    pedido = lotes.parse_pedido("reajustar", percentual, None)
    assert lotes.new_price(pedido, Decimal(atual)) == Decimal(novo)


def test_a_price_that_would_leave_the_allowed_range_is_none() -> None:
    assert (
        lotes.new_price(Pedido("reajustar", percentual=Decimal("-99.99")), Decimal("0.01")) is None
    )
    assert lotes.new_price(Pedido("reajustar", percentual=Decimal(1000)), PRECO_MAXIMO) is None


@pytest.mark.parametrize(
    ("texto", "valor"),
    [
        ("8", "8"),
        ("+8", "8"),
        ("-10", "-10"),
        ("\u221210", "-10"),
        ("7,25 %", "7.25"),
        ("1000", "1000"),
    ],
)
def test_a_percentage_is_read_as_people_write_it(texto: str, valor: str) -> None:
    assert lotes.parse_percentual(texto) == Decimal(valor)


@pytest.mark.parametrize("texto", ["", "dez", "8,125", "0", "-100", "1000,01", "1e3", "8%%", "٨"])
def test_any_other_percentage_is_refused_with_what_to_write(texto: str) -> None:
    with pytest.raises(LoteInvalido, match="Percentual"):
        lotes.parse_percentual(texto)


@given(st.text(max_size=12))
def test_no_text_is_read_otherwise_than_as_a_percentage_in_range_or_a_refusal(texto: str) -> None:
    try:
        value = lotes.parse_percentual(texto)
    except LoteInvalido:
        return
    assert lotes.PERCENTUAL_MINIMO <= value <= lotes.PERCENTUAL_MAXIMO and value != 0


@given(
    st.lists(
        st.tuples(st.integers(1, 2**63 - 1), st.integers(1, 2**63 - 1)),
        min_size=1,
        unique_by=lambda p: p[0],
    )
)
def test_a_selection_reads_back_as_it_was_written(seen: list[tuple[int, int]]) -> None:
    assert lotes.parse_selection(lotes.selection(seen), len(seen)) == seen


@pytest.mark.parametrize(
    "texto", ["", "1", "1:0", "0:1", "1:2 1:3", "1:2;3:4", "01:2", "1:2 3:4 5:6"]
)
def test_a_selection_it_did_not_write_is_refused(texto: str) -> None:
    with pytest.raises(LoteInvalido):
        lotes.parse_selection(texto, 2)


def test_the_notice_counts_what_was_done() -> None:
    assert Pedido("reajustar").done(42) == "42 produtos reajustados."
    assert Pedido("remover").done(1) == "1 produto removido."
    assert Pedido("definir").done(3) == "3 produtos com o preço definido."
    assert Pedido("reajustar", percentual=Decimal("-2.5")).said() == "Reajuste de -2,5%"


def _repriced(*pairs: tuple[str, str]) -> list[Evento]:
    return [
        Evento(n, n, "alterado", 2, {"preco": a}, {"preco": d}, None, None, "lote", "x", None, 0)
        for n, (a, d) in enumerate(pairs, 1)
    ]


@pytest.mark.parametrize(
    ("events", "said"),
    [
        (_repriced(("10.00", "10.80"), ("0.99", "1.07")), "Reajuste de +8% em 2 produtos"),
        (_repriced(("10.05", "11.06"), ("10.00", "11.00")), "Reajuste de +10% em 2 produtos"),
        (_repriced(("10.00", "9.00"), ("5.55", "5.00")), "Reajuste de -10% em 2 produtos"),
        (_repriced(("10.00", "10.25")), "Reajuste de +2,5% em 1 produto"),
        (_repriced(("10.00", "9.90"), ("0.99", "9.90")), "Preço definido em R$ 9,90 em 2 produtos"),
        (_repriced(("1.00", "2.00"), ("3.00", "3.50")), "Alteração de preço de 2 produtos"),
    ],
)
def test_a_batch_is_said_from_its_events_by_how_much_it_changed_prices(
    events: list[Evento], said: str
) -> None:
    assert described(events, len(events)) == said


def test_a_removal_is_said_with_the_batchs_whole_count() -> None:
    removed = Evento(1, 1, "removido", 2, {"preco": "1.00"}, None, None, None, "lote", "x", None, 0)
    assert described([removed], 1_234) == "Remoção de 1.234 produtos"
