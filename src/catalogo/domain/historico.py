"""A product's history: every change as an event, who made it and from where. No I/O.

Storage appends an `Evento` in the same transaction as each create, update, removal and
restore, so no path (pages, JSON, CLI) can change a product without leaving one. `antes` and
`depois` are the product's fields as JSON text made here, so both databases keep (and give
back) the very same bytes.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, NamedTuple

import orjson

from catalogo.domain.contas import Principal
from catalogo.domain.produtos import CAMPOS, Produto
from catalogo.domain.text import as_datetime

Tipo = Literal["criado", "alterado", "removido", "restaurado"]
Origem = Literal["web", "api", "cli", "importacao", "lote"]


class Autoria(NamedTuple):
    """Who made a change, and from where: what every event records beside the change."""

    quem: str | None  # the user's name; None: anonymous (a catalog without users)
    token: str | None  # the label of the token used, if one was
    origem: Origem
    request_id: str | None = None
    lote: str | None = None


CLI = Autoria(None, None, "cli")
# A version's fields as an event keeps them (`fields_json`): text, the price as a decimal
# string, `codigo` null when the product had none (and absent from events before codes).
Fields = dict[str, str | None]


def authorship(principal: Principal | None, origem: Origem, request_id: str) -> Autoria:
    if principal is None:
        return Autoria(None, None, origem, request_id)
    return Autoria(principal.nome, principal.token, origem, request_id)


@dataclass(frozen=True)
class Evento:
    id: int
    produto_id: int
    tipo: Tipo
    versao: int
    antes: Fields | None
    depois: Fields | None
    quem: str | None
    token: str | None
    origem: Origem
    lote: str | None
    request_id: str | None
    em: float


def fields_json(produto: Produto) -> str:
    """A product's fields as an event keeps them: JSON text, the price as an exact decimal."""
    return orjson.dumps(
        {
            "codigo": produto.codigo,
            "nome": produto.nome,
            "descricao": produto.descricao,
            "preco": str(produto.preco),
        }
    ).decode()


def parse_fields(texto: str | None) -> Fields | None:
    found: Fields | None = None if texto is None else orjson.loads(texto)
    return found


def representation(evento: Evento) -> dict[str, Any]:
    return {
        "id": evento.id,
        "produto_id": evento.produto_id,
        "tipo": evento.tipo,
        "versao": evento.versao,
        "antes": evento.antes,
        "depois": evento.depois,
        "quem": evento.quem,
        "token": evento.token,
        "origem": evento.origem,
        "lote": evento.lote,
        "request_id": evento.request_id,
        "em": as_datetime(evento.em),
    }


def authors_of(eventos: Iterable[Evento]) -> list[str]:
    """Who made these changes, each named once, in the order of their first change; anonymous
    changes (a catalog without users) are "outra pessoa"."""
    return list(dict.fromkeys(e.quem or "outra pessoa" for e in eventos))


def field_value(campo: str, texto: str | None) -> Any:
    """A field as an event keeps it (`fields_json`), as a product holds it: a price is a Decimal.
    Events from before codes have no `codigo`: the product had none (None)."""
    return Decimal(texto) if campo == "preco" and texto is not None else texto


def produto_of(fields: Fields) -> Produto:
    """The product a stored version was (an event's fields), to compare and show."""
    return Produto.model_construct(**{c: field_value(c, fields.get(c)) for c in CAMPOS})
