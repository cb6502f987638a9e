"""History as rows, the same in both databases: an event's columns and values, and the keyed
lists (paging.KeyedList, SQL written with `?`) of a product's events and of the trash."""

from typing import Any

from catalogo import history
from catalogo.history import Autoria, Evento
from catalogo.produtos import Produto
from catalogo.storage import paging

EVENT_COLUMNS = "produto_id, tipo, versao, antes, depois, quem, token, origem, request_id, lote, em"

# A product's history, newest version first (its params: the product's id).
EVENTS = paging.KeyedList(
    f"SELECT id, {EVENT_COLUMNS} FROM eventos WHERE produto_id = ?",
    "versao",
    "SELECT 1 FROM eventos WHERE produto_id = ?",
    "versao",
    "?",
)


def trash(preco: str) -> paging.KeyedList:
    """The trash, newest removal first, each product with the event that removed it (its
    `preco` column is the database's own); a product's position in it, from its id."""
    removed = (
        f"SELECT p.id, p.nome, p.descricao, p.{preco}, p.versao, p.criado_em, "
        "p.atualizado_em, p.removido_em, e.quem, e.token FROM produtos p LEFT JOIN eventos e "
        "ON e.produto_id = p.id AND e.versao = p.versao WHERE p.removido_em IS NOT NULL"
    )
    return paging.KeyedList(
        removed,
        "p.removido_em, p.id",
        "SELECT 1 FROM produtos WHERE removido_em IS NOT NULL",
        "removido_em, id",
        "(SELECT removido_em, id FROM produtos WHERE id = ? AND removido_em IS NOT NULL)",
    )


def event_row(
    tipo: history.Tipo,
    produto: Produto,
    antes: Produto | None,
    depois: Produto | None,
    autoria: Autoria,
    now: float,
) -> tuple[Any, ...]:
    """A change's event, as EVENT_COLUMNS' values."""
    return (
        produto.id,
        tipo,
        produto.versao,
        None if antes is None else history.fields_json(antes),
        None if depois is None else history.fields_json(depois),
        *autoria,
        now,
    )


def evento_of(row: Any) -> Evento:
    id, produto_id, tipo, versao, antes, depois, quem, token, origem, request_id, lote, em = row
    return Evento(
        id=id,
        produto_id=produto_id,
        tipo=tipo,
        versao=versao,
        antes=history.parse_fields(antes),
        depois=history.parse_fields(depois),
        quem=quem,
        token=token,
        origem=origem,
        lote=lote,
        request_id=request_id,
        em=em,
    )
