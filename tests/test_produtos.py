"""The product's rules and its price: exact, strict, and never guessed."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalogo.produtos import (
    ATRIBUTOS_HTML,
    PRECO_MAXIMO,
    PrecoInvalido,
    base_de,
    campos_mudados,
    exemplos,
    formatar_preco,
    ler_preco,
    preco_no_campo,
    validar,
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
    assert ler_preco(texto) == Decimal(valor)
    assert str(ler_preco(texto)) == valor


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
        ler_preco(texto)


@given(CENTAVOS)
def test_every_price_reads_back_from_each_way_we_or_a_person_write_it(centavos: int) -> None:
    valor = Decimal(centavos).scaleb(-2)
    reais, resto = divmod(centavos, 100)
    escritas = [
        formatar_preco(valor),
        preco_no_campo(valor),
        f"{reais}.{resto:02d}",
        f"{reais:,}.{resto:02d}",
        f"{reais:,}".replace(",", ".") + f",{resto:02d}",
    ]
    for escrita in escritas:
        assert ler_preco(escrita) == valor


def valid_or_refused(texto: str) -> None:
    try:
        valor = ler_preco(texto)
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
    assert formatar_preco(Decimal("1234567.8")) == "R$ 1.234.567,80"
    assert formatar_preco(Decimal("0.5")) == "R$ 0,50"
    assert preco_no_campo(Decimal("1234.5")) == "1234,50"


class TestFields:
    def test_a_valid_product_is_trimmed_and_keeps_its_line_breaks(self) -> None:
        produto, erros = validar(
            {"nome": "  Caneca  ", "descricao": "  uma\r\nduas\rtrês\ttab ", "preco": "10"}
        )
        assert erros == {}
        assert produto is not None
        assert produto.nome == "Caneca"
        assert produto.descricao == "uma\nduas\ntrês\ttab"
        assert produto.preco == Decimal("10.00")

    def test_descricao_is_optional(self) -> None:
        produto, _ = validar({"nome": "a", "preco": "1"})
        assert produto is not None and produto.descricao == ""

    @pytest.mark.parametrize(
        ("dados", "campo", "mensagem"),
        [
            ({"preco": "1"}, "nome", "Preencha este campo."),
            ({"nome": " \u00a0 ", "preco": "1"}, "nome", "Preencha este campo."),
            ({"nome": "\x85a", "preco": "1"}, "nome", "U+0085"),
            ({"nome": "a\x0b", "preco": "1"}, "nome", "U+000B"),
            ({"nome": "a", "descricao": "\x0c a", "preco": "1"}, "descricao", "U+000C"),
            ({"nome": "a" * 201, "preco": "1"}, "nome", "Use no máximo 200 caracteres."),
            ({"nome": "a\tb", "preco": "1"}, "nome", "U+0009"),
            ({"nome": "a\nb", "preco": "1"}, "nome", "U+000A"),
            ({"nome": "a", "descricao": "x" * 5001, "preco": "1"}, "descricao", "5000"),
            ({"nome": "a", "descricao": "a\x00", "preco": "1"}, "descricao", "U+0000"),
            ({"nome": "a"}, "preco", "Preencha este campo."),
            ({"nome": "a", "preco": "1,234"}, "preco", "ambíguo"),
        ],
    )
    def test_each_bad_field_gets_its_own_message(
        self, dados: dict[str, str], campo: str, mensagem: str
    ) -> None:
        produto, erros = validar(dados)
        assert produto is None
        assert list(erros) == [campo]
        assert mensagem in erros[campo]

    def test_the_limits_are_inclusive(self) -> None:
        produto, erros = validar({"nome": "a" * 200, "descricao": "d" * 5000, "preco": "1"})
        assert erros == {} and produto is not None

    def test_line_breaks_count_once_like_the_browser_counts_them(self) -> None:
        _, erros = validar({"nome": "a", "descricao": "x\r\n" * 2500, "preco": "1"})
        assert erros == {}

    def test_html_attributes_come_from_the_same_rules(self) -> None:
        assert ATRIBUTOS_HTML == {
            "nome": {"required": "required", "maxlength": "200"},
            "descricao": {"maxlength": "5000"},
            "preco": {"required": "required"},
        }


def test_sample_products_name_colours_that_agree_with_the_kind() -> None:
    nomes = [p.nome for p in exemplos(48)]
    assert "Garrafa vermelha nº 4" in nomes and "Caderno branco nº 9" in nomes
    for errado in ("Lápis vermelha", "Caderno branca", "Caneca preto", "Boné amarela"):
        assert not any(nome.startswith(errado) for nome in nomes)


def test_a_forms_base_tells_the_fields_that_changed_from_those_left_alone() -> None:
    produto, _ = validar({"nome": "Caneca", "descricao": "a\nb", "preco": "10"})
    assert produto is not None
    base = base_de(produto)
    typed, _ = validar({"nome": " Caneca ", "descricao": "a\r\nb", "preco": "R$ 10,00"})
    assert typed is not None and campos_mudados(base, typed) == frozenset()
    other, _ = validar({"nome": "Caneca azul", "descricao": "a\nb", "preco": "10,01"})
    assert other is not None and campos_mudados(base, other) == {"nome", "preco"}
