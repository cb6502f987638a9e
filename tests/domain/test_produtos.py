"""The product's rules: each field's, the text's, and what the pages are made from."""

import re
import time
import unicodedata
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from catalogo.domain.precos import PrecoInvalido, parse_preco
from catalogo.domain.produtos import ATRIBUTOS_HTML, Produto, samples, stored, validate
from catalogo.domain.text import format_moment


class TestFields:
    def test_a_valid_product_is_trimmed_and_keeps_its_line_breaks(self) -> None:
        produto, erros = validate(
            {"nome": "  Caneca  ", "descricao": "  uma\r\nduas\rtrês\ttab ", "preco": "10"}
        )
        assert erros == {}
        assert produto is not None
        assert produto.nome == "Caneca"
        assert produto.descricao == "uma\nduas\ntrês\ttab"
        assert produto.preco == Decimal("10.00")

    def test_descricao_is_optional(self) -> None:
        produto, _ = validate({"nome": "a", "preco": "1"})
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
        produto, erros = validate(dados)
        assert produto is None
        assert list(erros) == [campo]
        assert mensagem in erros[campo]

    def test_the_limits_are_inclusive(self) -> None:
        produto, erros = validate({"nome": "a" * 200, "descricao": "d" * 5000, "preco": "1"})
        assert erros == {} and produto is not None

    def test_line_breaks_count_once_like_the_browser_counts_them(self) -> None:
        _, erros = validate({"nome": "a", "descricao": "x\r\n" * 2500, "preco": "1"})
        assert erros == {}

    def test_html_attributes_come_from_the_same_rules(self) -> None:
        assert ATRIBUTOS_HTML == {
            "codigo": {"maxlength": "60"},
            "nome": {"required": "required", "maxlength": "200"},
            "descricao": {"maxlength": "5000"},
            "preco": {"required": "required"},
        }


# Unicode's Bidi_Control characters, and its format characters that are drawn after all.
DIRECTION_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
DRAWN_FORMAT_CHARACTERS = (
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
BLANK_LETTERS = "\u115f\u1160\u3164\uffa0\u2800\U0001d159"
INVISIBLE = st.one_of(
    st.characters(
        categories=("Cf", "Zs", "Mn", "Mc", "Me"),
        exclude_characters=DIRECTION_CONTROLS + DRAWN_FORMAT_CHARACTERS,
    ),
    st.sampled_from(BLANK_LETTERS),
)
# Any text, with the characters these rules are about turning up often.
TEXT = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from(DIRECTION_CONTROLS + BLANK_LETTERS + "\u2028\u2029\u200b\u200d\ufeff"),
        st.sampled_from("e\u0301\u0327c\u00e9 "),
    ),
    max_size=30,
)
NOME_PATTERN = re.compile(Produto.model_json_schema()["properties"]["nome"]["pattern"])


def nome_de(texto: str) -> str | None:
    """The name stored for `texto`, or None if it is refused."""
    produto, _ = validate({"nome": texto, "preco": "1"})
    return None if produto is None else produto.nome


class TestText:
    """Names that look like something else: empty, reordered, on two lines, or two names."""

    @pytest.mark.parametrize(
        "texto",
        [
            "\u200b",
            "\ufeff",
            "\u2060",
            "\u00ad",
            "\u200b\ufeff \u2060\u00ad",
            "\u3164",
            "\u115f\u1160",
            "\uffa0",
            "\u2800",
            "\u180e",
            "\U0001d159",
            "\u200d",
            "\u0301",
            "\u20dd",
            "\ufe0f",
            "\u034f",
            "\U000e0041\U000e007f",
            "\u3000\u2003\u00a0",
        ],
    )
    def test_a_name_of_only_invisible_characters_is_as_empty_as_an_empty_one(
        self, texto: str
    ) -> None:
        assert validate({"nome": texto, "preco": "1"}) == (None, {"nome": "Preencha este campo."})

    @given(st.text(INVISIBLE, min_size=1))
    def test_any_name_of_only_invisible_characters_is_as_empty_as_an_empty_one(
        self, texto: str
    ) -> None:
        assert validate({"nome": texto, "preco": "1"}) == (None, {"nome": "Preencha este campo."})

    @pytest.mark.parametrize(
        ("texto", "nome"),
        [
            ("\u200bCaneca\ufeff", "Caneca"),
            ("\u00ad\u2060Caneca\u3164 \u200b", "Caneca"),
            ("\u0301Caneca", "Caneca"),
            ("Ca\u00adneca", "Ca\u00adneca"),
            ("Dev \U0001f469\u200d\U0001f4bb", "Dev \U0001f469\u200d\U0001f4bb"),
            ("Dev \U0001f469\u200d\U0001f4bb\u200d", "Dev \U0001f469\u200d\U0001f4bb"),
            ("Amor \u2764\ufe0f", "Amor \u2764\ufe0f"),
            (
                "Camiseta \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
                "Camiseta \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
            ),
            (
                "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
                "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
            ),
            ("\u0600\u0661\u0662", "\u0600\u0661\u0662"),
        ],
    )
    def test_what_draws_nothing_is_trimmed_from_the_ends_and_kept_inside(
        self, texto: str, nome: str
    ) -> None:
        assert nome_de(texto) == nome

    @pytest.mark.parametrize("controle", DIRECTION_CONTROLS)
    @pytest.mark.parametrize("onde", ["Caneca {} azul", "Caneca azul{}", "{}Caneca"])
    def test_a_direction_control_in_a_name_is_refused_and_named(
        self, controle: str, onde: str
    ) -> None:
        produto, erros = validate({"nome": onde.format(controle), "preco": "1"})
        assert produto is None and list(erros) == ["nome"]
        assert f"U+{ord(controle):04X}" in erros["nome"]
        assert "direção do texto" in erros["nome"]
        assert "digite o nome de novo" in erros["nome"]

    def test_a_direction_control_stays_in_descricao_where_it_reaches_no_further(self) -> None:
        produto, _ = validate(
            {"nome": "a", "descricao": "\u05e9\u05dc\u05d5\u05dd\u200f!", "preco": "1"}
        )
        assert produto is not None and produto.descricao == "\u05e9\u05dc\u05d5\u05dd\u200f!"

    @pytest.mark.parametrize("quebra", ["\u2028", "\u2029", "\n", "\r", "\x85"])
    def test_a_line_break_in_a_name_is_refused_and_sent_to_descricao(self, quebra: str) -> None:
        produto, erros = validate({"nome": f"Caneca{quebra}azul", "preco": "1"})
        assert produto is None and list(erros) == ["nome"]
        assert f"U+{ord(quebra):04X}" in erros["nome"]
        assert "numa linha só" in erros["nome"] and "descrição" in erros["nome"]

    def test_descricao_is_trimmed_of_invisible_ends_too(self) -> None:
        produto, _ = validate(
            {"nome": "a", "descricao": "\u200b\n Uma\u2060linha\ufeff\t", "preco": "1"}
        )
        assert produto is not None and produto.descricao == "Uma\u2060linha"

    @pytest.mark.parametrize("controle", ["\x0b", "\x0c", "\x85"])
    def test_line_breaks_that_are_control_characters_stay_refused_in_descricao(
        self, controle: str
    ) -> None:
        _, erros = validate({"nome": "a", "descricao": f"um{controle}dois", "preco": "1"})
        codigo = f"U+{ord(controle):04X}"
        assert erros == {
            "descricao": f"Contém um caractere invisível não permitido (código {codigo})."
        }

    def test_every_line_break_in_descricao_is_kept_as_a_line_feed(self) -> None:
        produto, _ = validate({"nome": "a", "descricao": "1\u20282\u20293\r\n4\r5", "preco": "1"})
        assert produto is not None and produto.descricao == "1\n2\n3\n4\n5"

    def test_composed_and_decomposed_text_is_one_and_the_same(self) -> None:
        composto, _ = validate({"nome": "Caf\u00e9", "descricao": "p\u00e3o", "preco": "1"})
        decomposto, _ = validate({"nome": "Cafe\u0301", "descricao": "pa\u0303o", "preco": "1"})
        assert composto is not None and decomposto is not None
        assert (decomposto.nome, decomposto.descricao) == ("Caf\u00e9", "p\u00e3o")
        assert composto == decomposto

    def test_lengths_count_characters_after_normalisation(self) -> None:
        assert nome_de("e\u0301" * 200) == "\u00e9" * 200
        assert nome_de("a" * 199 + "\u0958") is None  # NFC writes it as two characters
        _, erros = validate({"nome": "a", "descricao": "e\u0301" * 5000, "preco": "1"})
        assert erros == {}

    @given(TEXT)
    def test_what_is_stored_is_nfc_and_reads_back_as_itself(self, texto: str) -> None:
        nome = nome_de(texto)
        if nome is not None:
            assert unicodedata.is_normalized("NFC", nome)
            assert nome_de(nome) == nome

    @given(TEXT)
    def test_every_stored_name_matches_the_pattern_the_api_describes(self, texto: str) -> None:
        nome = nome_de(texto)
        if nome is not None:
            assert NOME_PATTERN.fullmatch(nome)

    @given(TEXT)
    def test_a_name_that_matches_the_pattern_is_refused_for_no_character_in_it(
        self, texto: str
    ) -> None:
        if NOME_PATTERN.fullmatch(texto):
            _, erros = validate({"nome": texto, "preco": "1"})
            assert erros.get("nome", "Preencha este campo.") == "Preencha este campo."


def test_sample_products_name_colours_that_agree_with_the_kind() -> None:
    nomes = [p.nome for p in samples(48)]
    assert "Garrafa vermelha nº 4" in nomes and "Caderno branco nº 9" in nomes
    for errado in ("Lápis vermelha", "Caderno branca", "Caneca preto", "Boné amarela"):
        assert not any(nome.startswith(errado) for nome in nomes)


def test_a_stored_product_is_the_one_model_construct_makes_frozen_alike() -> None:
    fields: dict[str, Any] = {
        "id": 7,
        "versao": 2,
        "criado_em": 1.5,
        "atualizado_em": 2.5,
        "codigo": "CAN-1",
        "nome": "Caneca",
        "descricao": "Azul",
        "preco": Decimal("12.50"),
    }
    fast, constructed = stored(**fields), Produto.model_construct(**fields)
    assert fast == constructed and repr(fast) == repr(constructed)
    assert fast.model_fields_set == constructed.model_fields_set
    assert fast.model_dump() == constructed.model_dump()
    assert fast.model_copy(update={"nome": "Xícara"}).nome == "Xícara"
    with pytest.raises(ValidationError):
        fast.nome = "Xícara"


@given(st.floats(min_value=0, max_value=4e9))
def test_a_moment_reads_as_its_day_and_minute_in_the_servers_time_zone(em: float) -> None:
    """format_moment makes each minute's text once: any moment of it reads the same."""
    assert format_moment(em) == time.strftime("%d/%m/%Y %H:%M", time.localtime(em))


_TYPED_PRICE = Produto.model_json_schema(mode="validation")["properties"]["preco"]["anyOf"][0]


@given(st.from_regex(_TYPED_PRICE["pattern"], fullmatch=True))
def test_every_price_text_the_description_allows_is_read(texto: str) -> None:
    if len(texto) <= _TYPED_PRICE["maxLength"]:
        assert parse_preco(texto) > 0


@pytest.mark.parametrize(
    "texto",
    [
        "1234.56",
        "1234,56",
        "1.234,56",
        "1,234.56",
        "12.5",
        "R$ 12,50",
        "r$3",
        "R$\u00a012",
        " 7 ",
        ",5",
        "007",
        "1.234.567",
        "1,234,567.89",
        "999.999.999,99",
    ],
)
def test_the_description_allows_each_way_a_person_types_a_price(texto: str) -> None:
    assert re.fullmatch(_TYPED_PRICE["pattern"], texto)


@pytest.mark.parametrize(
    "texto",
    [
        "1.234",
        "1,234",
        "0",
        "0,00",
        "0,001",
        "12,",
        ".",
        "1.2.3",
        "1.234,56.7",
        "1000000000",
        "",
        "R$",
        "-5",
        "+5",
        "1e5",
        "NaN",
        "\ufeff12",
        "12 345",
        "\uff11\uff12",
    ],
)
def test_the_description_refuses_what_the_server_refuses(texto: str) -> None:
    assert not re.fullmatch(_TYPED_PRICE["pattern"], texto)
    with pytest.raises(PrecoInvalido):
        parse_preco(texto)
