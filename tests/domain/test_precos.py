"""A price as people type and read it (domain/precos.py): exact, strict, and never guessed."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalogo.domain.precos import (
    PRECO_MAXIMO,
    PrecoInvalido,
    format_preco,
    parse_preco,
    preco_for_input,
)

CENTAVOS = st.integers(min_value=1, max_value=99_999_999_999)


@pytest.mark.parametrize(
    ("texto", "valor"),
    [
        ("1234.56", "1234.56"),
        ("1234,56", "1234.56"),
        ("1.234,56", "1234.56"),
        ("1,234.56", "1234.56"),
        ("R$ 12,50", "12.50"),
        ("R$12", "12.00"),
        ("r$ 3", "3.00"),
        ("R$\u00a01.234,56", "1234.56"),
        ("  7  ", "7.00"),
        ("12,5", "12.50"),
        (",5", "0.50"),
        ("0,01", "0.01"),
        ("1.234.567", "1234567.00"),
        ("1,234,567", "1234567.00"),
        ("1.234.567,89", "1234567.89"),
        ("999999999,99", "999999999.99"),
        ("007", "7.00"),
    ],
)
def test_accepted_price_formats_read_to_the_exact_value(texto: str, valor: str) -> None:
    assert parse_preco(texto) == Decimal(valor)
    assert str(parse_preco(texto)) == valor


@pytest.mark.parametrize(
    ("texto", "mensagem"),
    [
        ("1.234", "ambíguo"),
        ("1,234", "ambíguo"),
        ("12.345", "ambíguo"),
        ("NaN", "apenas algarismos"),
        ("Infinity", "apenas algarismos"),
        ("inf", "apenas algarismos"),
        ("1e5", "apenas algarismos"),
        ("1E5", "apenas algarismos"),
        ("١٢٣", "apenas algarismos"),
        ("\uff11\uff12", "apenas algarismos"),  # fullwidth digits
        ("12 345", "apenas algarismos"),
        ("0x10", "apenas algarismos"),
        ("+5", "apenas algarismos"),
        ("-5", "maior que zero"),
        ("\u22125", "maior que zero"),
        ("0", "maior que zero"),
        ("0,00", "maior que zero"),
        ("0,001", "duas casas"),
        ("1,234.567", "duas casas"),
        ("12,", "apenas algarismos"),
        (".", "apenas algarismos"),
        ("1.2.3", "três em três"),
        ("12.34.567", "três em três"),
        ("1.234,56.7", "apenas algarismos"),
        ("1000000000", "máximo"),
        ("", "Informe o preço"),
        ("R$", "Informe o preço"),
        ("1" * 41, "longo demais"),
    ],
)
def test_ambiguous_or_malformed_prices_are_refused_with_a_message(
    texto: str, mensagem: str
) -> None:
    with pytest.raises(PrecoInvalido, match=mensagem):
        parse_preco(texto)


@pytest.mark.parametrize(
    ("texto", "dito"),
    [
        ("129,9O", "«O» é a letra O, não o zero."),
        ("1o,50", "«o» é a letra O, não o zero."),
        ("l2,50", "«l» é a letra L, não o um."),
        ("I2,50", "«I» é a letra I, não o um."),
        ("12 345", "há um espaço no meio."),
        ("12\u00a0345", "há um espaço no meio."),
        ("12\u200b3", "há um caractere invisível no meio (U+200B)."),
        ("1e5", "«e» não é um algarismo de 0 a 9."),
        ("\u0661\u0662", "«\u0661» não é um algarismo de 0 a 9."),  # Arabic-Indic digits
    ],
)
def test_a_character_that_is_no_digit_is_named_where_it_hides(texto: str, dito: str) -> None:
    with pytest.raises(PrecoInvalido) as refused:
        parse_preco(texto)
    assert (
        str(refused.value)
        == f"Use apenas algarismos, com vírgula nos centavos: 1234,56 ou 1.234,56; {dito}"
    )


@given(CENTAVOS)
def test_every_price_reads_back_from_each_way_we_or_a_person_write_it(centavos: int) -> None:
    valor = Decimal(centavos).scaleb(-2)
    reais, resto = divmod(centavos, 100)
    escritas = [
        format_preco(valor),
        preco_for_input(valor),
        f"{reais}.{resto:02d}",
        f"{reais:,}.{resto:02d}",
        f"{reais:,}".replace(",", ".") + f",{resto:02d}",
    ]
    for escrita in escritas:
        assert parse_preco(escrita) == valor


def valid_or_refused(texto: str) -> None:
    try:
        valor = parse_preco(texto)
    except PrecoInvalido as erro:
        assert str(erro)
    else:
        assert Decimal("0.01") <= valor <= PRECO_MAXIMO
        assert valor == valor.quantize(Decimal("0.01"))


@given(st.text(max_size=60))
def test_any_text_is_either_a_valid_price_or_a_clear_refusal(texto: str) -> None:
    valid_or_refused(texto)


@given(st.text(alphabet="0123456789.,R$ -", max_size=20))
def test_near_miss_prices_are_either_valid_or_clearly_refused(texto: str) -> None:
    valid_or_refused(texto)


def test_pages_show_prices_the_brazilian_way() -> None:
    assert format_preco(Decimal("1234567.8")) == "R$ 1.234.567,80"
    assert format_preco(Decimal("0.5")) == "R$ 0,50"
    assert preco_for_input(Decimal("1234.5")) == "1234,50"
