"""Many products changed at once (Django admin's actions): what a clerk asks (`Pedido`: remove,
reprice by a percentage, or set one price), the price each product would get, and the
selection a confirmation carries (each product's id and the version it was shown at). No I/O:
services/lotes.py looks the products up and writes them.

Prices are rounded to the cent, half up (R$ 10,005 is R$ 10,01), and never below R$ 0,01 nor
above the form's maximum: a product whose new price would be is left out of the batch and named.
"""

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

from catalogo.domain.errors import Conflict, Invalid, NotFound
from catalogo.domain.historico import Evento
from catalogo.domain.precos import CENTAVO, PRECO_MAXIMO, PrecoInvalido, format_preco, parse_preco
from catalogo.domain.produtos import parse_id

Acao = Literal["remover", "reajustar", "definir"]
ACOES: dict[str, str] = {
    "reajustar": "Reajustar preço (%)",
    "definir": "Definir preço",
    "remover": "Remover",
}
PERCENTUAL_MINIMO = Decimal("-99.99")  # -100% would be no price at all
PERCENTUAL_MAXIMO = Decimal(1000)
_PERCENTUAL = re.compile(r"([+\-\u2212]?) *([0-9]{1,4})(?:[.,]([0-9]{1,2}))? *%?")


class LoteInvalido(Invalid, ValueError):
    """What was asked cannot be done as asked; the message says what would be. `campo` is the
    list form's field it is about (None: the request as a whole), `beside` the message as
    the form shows it beside that field (the message itself starts with the field's label)."""

    def __init__(self, message: str, campo: str | None = None) -> None:
        self.campo, self.beside = campo, message[:1].upper() + message[1:]
        label = CAMPOS.get(campo or "")
        super().__init__(f"{label}: {message}" if label else message)


# The list form's fields, by the names they are sent with, as the form labels them.
CAMPOS = {"percentual": "Percentual", "preco": "Novo preço"}


@dataclass(frozen=True)
class Pedido:
    acao: Acao
    percentual: Decimal | None = None
    preco: Decimal | None = None

    def said(self) -> str:
        """The action as the confirmation page names it."""
        if self.acao == "reajustar" and self.percentual is not None:
            sign = "+" if self.percentual > 0 else ""
            return f"Reajuste de {sign}{percent(self.percentual)}%"
        if self.acao == "definir" and self.preco is not None:
            return f"Preço definido em {format_preco(self.preco)}"
        return "Remoção"

    def done(self, count: int) -> str:
        """What the notice says once it is done: "42 produtos reajustados"."""
        one = count == 1
        what = {
            "reajustar": "reajustado" if one else "reajustados",
            "definir": "com o preço definido",
            "remover": "removido" if one else "removidos",
        }[self.acao]
        return f"{count} {'produto' if one else 'produtos'} {what}."


def products(count: int) -> str:
    """ "1 produto", "1.234 produtos"."""
    return f"{count:,} produto{'' if count == 1 else 's'}".replace(",", ".")


def described(events: list[Evento], total: int) -> str:
    """What a batch did, read from its events (a batch keeps no other record of what was
    asked): "Reajuste de +8% em 3 produtos", "Preço definido em R$ 9,90 em 2 produtos",
    "Remoção de 5 produtos"; "Alteração de 4 produtos" when the events say nothing plainer."""
    if events and all(e.tipo == "removido" for e in events):
        return f"Remoção de {products(total)}"
    priced = [
        (Decimal(str(e.antes["preco"])), Decimal(str(e.depois["preco"])))
        for e in events
        if e.tipo == "alterado" and e.antes and e.depois
    ]
    if not priced or len(priced) != len(events):
        return f"Alteração de {products(total)}"
    percentual = _percentage_of(priced)
    if percentual is not None:
        return f"{Pedido('reajustar', percentual=percentual).said()} em {products(total)}"
    if len({d for _, d in priced}) == 1:
        return f"{Pedido('definir', preco=priced[0][1]).said()} em {products(total)}"
    return f"Alteração de preço de {products(total)}"


def _percentage_of(priced: list[tuple[Decimal, Decimal]]) -> Decimal | None:
    """The percentage (of two places at most, the roundest) that gives every new price from
    its old one, if one does: each new price, rounded to the cent, bounds it."""
    half = CENTAVO / 2
    low = max(((d - half) / a - 1) * 100 for a, d in priced)
    high = min(((d + half) / a - 1) * 100 for a, d in priced)
    first, last = int((low * 100).to_integral_value(ROUND_CEILING)), int(high * 100)
    candidates = [Decimal(n).scaleb(-2) for n in range(first, min(last, first + 2000) + 1) if n]
    candidates.sort(key=lambda p: (len(percent(p)), abs(p)))
    for percentual in candidates:
        pedido = Pedido("reajustar", percentual=percentual)
        if all(new_price(pedido, a) == d for a, d in priced):
            return percentual
    return None


def percent(value: Decimal) -> str:
    return f"{value.normalize():f}".replace(".", ",")


def parse_pedido(acao: str, percentual: str | None, preco: str | None) -> Pedido:
    """Raises LoteInvalido, naming the field."""
    if acao == "remover":
        return Pedido("remover")
    if acao == "reajustar":
        return Pedido("reajustar", percentual=parse_percentual(percentual or ""))
    if acao == "definir":
        if not (preco or "").strip():
            raise LoteInvalido("informe o novo preço (por exemplo, 29,90).", "preco")
        try:
            return Pedido("definir", preco=parse_preco(preco or ""))
        except PrecoInvalido as error:
            raise LoteInvalido(str(error), "preco") from None
    raise LoteInvalido(
        f"acao deve ser {', '.join(ACOES)} (recebido «{acao:.30}»)." if acao else "Escolha a ação.",
        "acao",
    )


def parse_percentual(text: str) -> Decimal:
    """`8`, `-10`, `+2,5`, `7.25%`: a percentage of up to two decimal places."""
    found = _PERCENTUAL.fullmatch(text.strip())
    if found is None:
        raise LoteInvalido(
            f"«{text.strip():.20}» não é um percentual; escreva, por exemplo, 8 para aumentar 8% "
            "ou -10 para baixar 10%."
            if text.strip()
            else "informe quanto reajustar (por exemplo, 8 ou -10).",
            "percentual",
        )
    sign, whole, cents = found.groups()
    minus = sign in ("-", "\u2212")
    value = Decimal(f"{'-' if minus else ''}{whole}.{cents or '0'}")
    if value == 0:
        raise LoteInvalido("um reajuste de 0% não muda nada.", "percentual")
    if not PERCENTUAL_MINIMO <= value <= PERCENTUAL_MAXIMO:
        raise LoteInvalido("use de -99,99 a 1000.", "percentual")
    return value


def new_price(pedido: Pedido, atual: Decimal) -> Decimal | None:
    """The price `pedido` gives a product priced `atual`, or None when it would fall outside
    R$ 0,01 … the maximum (the product is left out of the batch)."""
    if pedido.acao == "definir":
        return pedido.preco
    if pedido.percentual is None:
        return atual
    try:
        value = (atual * (100 + pedido.percentual) / 100).quantize(CENTAVO, ROUND_HALF_UP)
    except InvalidOperation:
        return None
    return value if CENTAVO <= value <= PRECO_MAXIMO else None


def selection(seen: list[tuple[int, int]]) -> str:
    """What a confirmation carries of each product: its id and the version it was shown at."""
    return " ".join(f"{id}:{versao}" for id, versao in seen)


def parse_selection(text: str, most: int) -> list[tuple[int, int]]:
    """Raises LoteInvalido for anything `selection` does not write, or more than `most`."""
    parts = text.split()
    if not parts:
        raise LoteInvalido("Nenhum produto selecionado.")
    if len(parts) > most:
        raise LoteInvalido(f"Um lote leva até {most:,} produtos.".replace(",", "."))
    seen = []
    for part in parts:
        id, _, versao = part.partition(":")
        read = parse_id(id), parse_id(versao)
        if read[0] is None or read[1] is None:
            raise LoteInvalido("selecao malformada: envie a da página de confirmação.")
        seen.append((read[0], read[1]))
    if len({id for id, _ in seen}) != len(seen):
        raise LoteInvalido("selecao malformada: um produto aparece duas vezes.")
    return seen


class BatchNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__("Não há lote com este número.", "Lote não encontrado")


class BatchUndone(Conflict):
    """The batch was undone already."""

    def __init__(self) -> None:
        super().__init__("Este lote já foi desfeito.")


class BatchRefused(Invalid):
    title = "Lote recusado"
