"""A price as people type it and read it in Brazil: pure, no I/O.

Prices are exact: `Decimal` with two places (integer cents in SQLite). The parser is ours
because `Decimal()` and locale libraries accept `NaN`, exponents and non-ASCII digits, and
guess at `1.234`; we refuse what is ambiguous instead (docs/behaviour.md).
"""

import re
from decimal import Decimal

from catalogo.domain.errors import Invalid

PRECO_MAXIMO = Decimal("999999999.99")
CENTAVO = Decimal("0.01")

_DIGITOS_E_SEPARADORES = re.compile(r"[0-9.,]+", re.ASCII)
_GRUPO_INICIAL = re.compile(r"[0-9]{1,3}", re.ASCII)
_GRUPO = re.compile(r"[0-9]{3}", re.ASCII)
_ENTRADA_MAXIMA = 40


class PrecoInvalido(Invalid, ValueError):
    """A price the user typed that we will not guess at; the message says what to type."""


def parse_preco(texto: str) -> Decimal:
    """Read a price as people type it in Brazil or abroad: `1234,56`, `1.234,56`, `R$ 12,50`."""
    s = texto.strip()
    if len(s) > _ENTRADA_MAXIMA:
        raise PrecoInvalido("Preço longo demais.")
    if s[:2].upper() == "R$":
        s = s[2:].lstrip()
    if not s:
        raise PrecoInvalido("Informe o preço.")
    if s[0] in "-\u2212":  # a hyphen or a typographic minus
        raise PrecoInvalido("O preço deve ser maior que zero.")
    if not _DIGITOS_E_SEPARADORES.fullmatch(s):
        raise PrecoInvalido(f"{_SO_ALGARISMOS}; {_stranger(s)}.")

    inteiro, centavos = _split_cents(s)
    if len(centavos) > 2:
        raise PrecoInvalido("Use no máximo duas casas decimais.")
    valor = Decimal(f"{_without_thousands(inteiro) or '0'}.{centavos or '0'}")
    if valor <= 0:
        raise PrecoInvalido("O preço deve ser maior que zero.")
    if valor > PRECO_MAXIMO:
        raise PrecoInvalido("O preço máximo é R$ 999.999.999,99.")
    return valor.quantize(CENTAVO)


_SO_ALGARISMOS = "Use apenas algarismos, com vírgula nos centavos: 1234,56 ou 1.234,56"


def _stranger(s: str) -> str:
    """The first character of `s` that is no digit nor separator, said so that it can be
    found: in a font where O and 0 look alike, "129,9O" reads as a good price."""
    c = next(c for c in s if c not in "0123456789.,")
    if c in "Oo":
        return f"«{c}» é a letra O, não o zero"
    if c in "lI":
        return f"«{c}» é a letra {c.upper()}, não o um"
    if c.isspace():
        return "há um espaço no meio"
    if not c.isprintable():
        return f"há um caractere invisível no meio (U+{ord(c):04X})"
    return f"«{c}» não é um algarismo de 0 a 9"


def _split_cents(s: str) -> tuple[str, str]:
    """Split off the decimal part: the last separator is decimal unless it can only group."""
    ultimo = max(s.rfind(","), s.rfind("."))
    if ultimo == -1:
        return s, ""
    separador = s[ultimo]
    outro = "." if separador == "," else ","
    depois = s[ultimo + 1 :]
    if outro not in s and s.count(separador) > 1:
        return s, ""  # 1.234.567: only thousands can repeat
    if outro not in s and len(depois) == 3 and s[:ultimo].strip("0"):
        raise PrecoInvalido(
            f"«{s}» é ambíguo: se são milhares, escreva {s[:ultimo]}{depois},00; "
            "os centavos vão depois da vírgula, com no máximo duas casas."
        )
    if s.count(separador) > 1 or not depois:
        raise PrecoInvalido(f"{_SO_ALGARISMOS}.")
    return s[:ultimo], depois


def _without_thousands(inteiro: str) -> str:
    """Drop thousands separators, which must stand every three digits and be all alike."""
    if inteiro.isdigit() or not inteiro:
        return inteiro
    separador = "." if "." in inteiro else ","
    primeiro, *grupos = inteiro.split(separador)
    if not _GRUPO_INICIAL.fullmatch(primeiro) or not all(_GRUPO.fullmatch(g) for g in grupos):
        raise PrecoInvalido("Separe os milhares de três em três: 1.234.567,89.")
    return primeiro + "".join(grupos)


def format_preco(preco: Decimal) -> str:
    """`R$ 1.234,56`, as pages show a price."""
    return "R$ " + preco_for_input(preco, milhar=".")


def preco_for_input(preco: Decimal, milhar: str = "") -> str:
    """`1234,56`, as the edit form shows a price, so that it reads back to the same value."""
    centavos = int(preco.quantize(CENTAVO) * 100)
    reais, resto = divmod(centavos, 100)
    return f"{reais:,}".replace(",", milhar) + f",{resto:02d}"
