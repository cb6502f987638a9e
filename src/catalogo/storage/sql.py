"""The SQL both databases share, written with SQLite's `?` (`numbered` for PostgreSQL): an
event's columns and values, the keyed lists (paging.KeyedList) of a product's events and of the
trash, a user's and a token's columns."""

from typing import Any

from catalogo import history
from catalogo.history import Autoria, Evento
from catalogo.produtos import Produto
from catalogo.storage import paging

USER_COLUMNS = "id, nome, papel, ativo, created_at"
TOKEN_COLUMNS = (
    "t.id, u.nome, t.nome, t.papel, t.created_at, t.expires_at, t.last_used_at, t.revoked_at"  # noqa: S105 (column names)
)
TOKENS_FROM = "FROM tokens t JOIN usuarios u ON u.id = t.usuario_id"
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
        "p.atualizado_em, p.codigo, p.removido_em, e.quem, e.token FROM produtos p "
        "LEFT JOIN eventos e "
        "ON e.produto_id = p.id AND e.versao = p.versao WHERE p.removido_em IS NOT NULL"
    )
    return paging.KeyedList(
        removed,
        "p.removido_em, p.id",
        "SELECT 1 FROM produtos WHERE removido_em IS NOT NULL",
        "removido_em, id",
        "(SELECT removido_em, id FROM produtos WHERE id = ? AND removido_em IS NOT NULL)",
    )


def numbered(sql: str) -> str:
    """SQL written with `?` placeholders, in PostgreSQL's `$1`, `$2`…"""
    parts = sql.split("?")
    return "".join(f"{part}${n}" for n, part in enumerate(parts[:-1], 1)) + parts[-1]


BATCH_EVENTS = f"SELECT id, {EVENT_COLUMNS} FROM eventos WHERE lote = ? ORDER BY id"
CODIGO_HOLDER = "SELECT id, removido_em IS NOT NULL FROM produtos WHERE codigo_chave = ?"


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
