"""The account rules, without HTTP or a database: names, passwords, roles, secrets, throttling."""

import pytest

from catalogo.domain import contas
from catalogo.domain.contas import ContaInvalida, Failures


@pytest.mark.parametrize(
    ("typed", "stored"), [("Maria", "maria"), (" joão.silva@loja ", None), ("a", "a")]
)
def test_a_name_is_stored_lowercase_and_ascii_only(typed: str, stored: str | None) -> None:
    if stored is None:
        with pytest.raises(ContaInvalida, match="letras sem acento"):
            contas.parse_nome(typed)
    else:
        assert contas.parse_nome(typed) == stored


@pytest.mark.parametrize("nome", ["", "   ", "-maria", "ma ria", "m" * 65, "maria\u200b"])
def test_names_that_could_be_confused_or_mistyped_are_refused(nome: str) -> None:
    with pytest.raises(ContaInvalida):
        contas.parse_nome(nome)


def test_a_password_is_counted_in_characters_once_normalised() -> None:
    decomposed = "e\u0301" * 12  # 24 code points, 12 characters (é) once composed
    assert contas.parse_senha(decomposed) == "\u00e9" * 12
    with pytest.raises(ContaInvalida, match="pelo menos 12"):
        contas.parse_senha("e\u0301" * 11)
    with pytest.raises(ContaInvalida, match="no máximo 1024"):
        contas.parse_senha("x" * 1025)


def test_roles_are_ordered_and_a_token_is_admin_only_when_an_admin_asks_for_it() -> None:
    assert contas.allows("admin", "editor") and not contas.allows("leitor", "editor")
    assert contas.lesser("admin", "editor") == "editor"
    admin = contas.Usuario(1, "ana", "admin", True, 0)
    assert contas.token_papel(admin, None) == "editor"
    assert contas.token_papel(admin, "admin") == "admin"
    with pytest.raises(ContaInvalida, match="no máximo"):
        contas.token_papel(contas.Usuario(2, "bia", "editor", True, 0), "admin")


def test_secrets_have_the_shapes_that_are_looked_up() -> None:
    token = contas.new_token()
    assert contas.is_token(token) and not contas.is_token(token[:-1])
    assert contas.is_session_secret(contas.new_session_secret())
    assert contas.digest("x") != contas.digest("y") and len(contas.digest("x")) == 64


NOW = 1_000_000.0


def failures(pair: int = 0, address: int = 0, name: int = 0, known: bool = False) -> Failures:
    oldest = NOW - 60
    return Failures(pair, address, name, known, oldest, oldest, oldest)


@pytest.mark.parametrize(
    ("counted", "wait"),
    [
        (failures(pair=4, address=29, name=49), None),
        (failures(pair=5), 841),
        (failures(address=30), 841),
        (failures(name=50), 841),
        (failures(name=500, known=True), None),  # a stranger cannot keep the owner out
    ],
)
def test_throttling_waits_until_the_oldest_failure_leaves_the_window(
    counted: Failures, wait: int | None
) -> None:
    assert contas.throttled(counted, NOW) == wait
