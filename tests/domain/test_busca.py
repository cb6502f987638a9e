"""Search text: folding, the words of a query, and cursors bound to their query."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalogo.domain.busca import (
    SEPARATOR,
    BadToken,
    Position,
    Query,
    codigo_key,
    fold,
    folded,
    position_of,
    searchable,
    terms,
    token,
    trigrams,
)
from catalogo.domain.produtos import Produto


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Pão", "pao"),
        ("MAÇÃ", "maca"),
        ("Coração", "coracao"),
        ("Straße", "strasse"),
        ("ﬁlé", "file"),
        ("m²", "m2"),
        ("Cafe\u0301", "cafe"),  # decomposed as typed on some keyboards
        ("  duas\tpalavras \n ", "duas palavras"),
        ("ǰ", "j"),  # casefolds to j and a combining caron, which goes too
        ("Ελληνικά", "ελληνικα"),
        ("日本語", "日本語"),
    ],
)
def test_folding_drops_case_and_accents(text: str, folded: str) -> None:
    assert fold(text) == folded


@given(st.text())
def test_folding_twice_changes_nothing(text: str) -> None:
    assert fold(fold(text)) == fold(text)


@given(st.text(), st.text())
def test_no_folded_text_holds_the_separator_so_no_word_spans_name_and_description(
    nome: str, descricao: str
) -> None:
    assert searchable(nome, descricao).count(SEPARATOR) == 1
    assert all(SEPARATOR not in term for term in terms(nome + " " + descricao))


@pytest.mark.parametrize(
    ("q", "found"),
    [
        ("Caneca  AZUL", ("caneca", "azul")),
        ('"caneca azul" 300', ("caneca azul", "300")),
        ('monitor 24"', ("monitor", '24"')),
        ('"a" b"', ("a", 'b"')),
        ('""', ()),
        ("AND NEAR", ("and", "near")),
        ("pão pao", ("pao",)),
        ("   ", ()),
    ],
)
def test_a_query_is_its_folded_words_and_quoted_phrases(q: str, found: tuple[str, ...]) -> None:
    assert terms(q) == found


def test_trigrams_cover_a_word_without_overlapping_and_skip_short_ones() -> None:
    assert trigrams("caneca") == ["can", "eca"]
    assert trigrams("azul") == ["azu", "zul"]
    assert trigrams("no") == []


def test_a_cursor_names_its_position_only_for_its_own_query() -> None:
    by_name = Query(terms("caneca"), ordem="nome")
    position = Position("caneca azul", 7)
    assert position_of(by_name, token(by_name, position)) == position
    with pytest.raises(BadToken, match="de outra busca"):
        position_of(Query(terms("caneca"), ordem="-nome"), token(by_name, position))
    with pytest.raises(BadToken, match="de outra busca"):
        position_of(Query(terms("copo"), ordem="nome"), token(by_name, position))
    for garbage in ["", "abc", "!!!", "e30", "W10"]:
        with pytest.raises(BadToken):
            position_of(by_name, garbage)


def test_a_product_is_found_by_its_code_and_two_codes_that_differ_by_case_are_one() -> None:
    caneca = Produto(nome="Caneca", descricao="Azul", preco=Decimal(1), codigo="CAN-Ärvo")
    keys = folded(caneca)
    assert keys.busca.split(SEPARATOR) == ["caneca", "azul", "can-arvo"]
    assert keys.codigo_chave == codigo_key("can-ärvo") == "can-ärvo"
    assert folded(Produto(nome="Caneca", preco=Decimal(1))).codigo_chave is None


def test_a_cursor_made_before_codes_still_names_its_position() -> None:
    by_name = Query(terms("caneca"), ordem="nome")
    made_before = "WyI3YTBiNzg5YTM3MDMiLCJjYW5lY2EgYXp1bCIsN10"  # token() before codes existed
    assert position_of(by_name, token(by_name, Position("caneca azul", 7))) == Position(
        "caneca azul", 7
    )
    assert token(by_name, Position("caneca azul", 7)) == made_before
    with pytest.raises(BadToken, match="de outra busca"):
        position_of(Query(terms("caneca"), ordem="nome", codigos=("can-1",)), made_before)
