"""The SQL both databases share, written with SQLite's `?` (`numbered` for PostgreSQL): an
event's columns and values, the keyed lists (paging.KeyedList) of a product's events and of the
trash, a user's and a token's columns, an import's."""

from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from catalogo.domain import historico
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.produtos import Produto, same_fields
from catalogo.domain.webhooks import Webhook
from catalogo.storage import paging
from catalogo.storage.port import Importacao, StagedLine

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
        "p.atualizado_em, p.codigo, p.removido_em, e.quem, e.token, e.origem, e.lote "
        "FROM produtos p LEFT JOIN eventos e "
        "ON e.produto_id = p.id AND e.versao = p.versao WHERE p.removido_em IS NOT NULL"
    )
    return paging.KeyedList(
        removed,
        "p.removido_em, p.id",
        "SELECT 1 FROM produtos WHERE removido_em IS NOT NULL",
        "removido_em, id",
        "(SELECT removido_em, id FROM produtos WHERE id = ? AND removido_em IS NOT NULL)",
    )


def narrowed(listed: paging.KeyedList, terms: tuple[str, ...]) -> paging.KeyedList:
    """The trash (`trash`) narrowed to the products whose folded text (`busca`: name,
    description and code) holds every term, each a LIKE with its %, _ and \\ escaped."""
    if not terms:
        return listed
    like = " AND {}busca LIKE ? ESCAPE '\\'" * len(terms)
    patterns = tuple(
        "%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for t in terms
    )
    return listed._replace(
        rows=listed.rows + like.replace("{}", "p."),
        every=listed.every + like.replace("{}", ""),
        params=patterns,
    )


def numbered(sql: str) -> str:
    """SQL written with `?` placeholders, in PostgreSQL's `$1`, `$2`…"""
    parts = sql.split("?")
    return "".join(f"{part}${n}" for n, part in enumerate(parts[:-1], 1)) + parts[-1]


# A batch's last event of each product, after an event id, a stretch at a time (by its index
# on lote, and the product's later versions by theirs).
LAST_EVENTS = (
    f"SELECT id, {EVENT_COLUMNS} FROM eventos e WHERE lote = ? AND id > ? AND NOT EXISTS "
    "(SELECT 1 FROM eventos l WHERE l.produto_id = e.produto_id AND l.versao > e.versao "
    "AND l.lote = e.lote) ORDER BY id LIMIT 1000"
)
CODIGO_HOLDER = "SELECT id, removido_em IS NOT NULL FROM produtos WHERE codigo_chave = ?"


def event_row(
    tipo: historico.Tipo,
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
        None if antes is None else historico.fields_json(antes),
        None if depois is None else historico.fields_json(depois),
        *autoria,
        now,
    )


def left_as_it_was(evento: Evento, current: Produto, removed: bool) -> bool:
    """Whether a product is still what a batch's last event of it left: live or removed as it
    left it, with the same fields (undone and done again by a later batch counts as the same:
    undoing batches newest first works)."""
    fields = evento.antes if evento.tipo == "removido" else evento.depois
    if fields is None or removed != (evento.tipo == "removido"):
        return False
    return same_fields(historico.produto_of(fields), current)


def evento_of(row: Any) -> Evento:
    id, produto_id, tipo, versao, antes, depois, quem, token, origem, request_id, lote, em = row
    return Evento(
        id=id,
        produto_id=produto_id,
        tipo=tipo,
        versao=versao,
        antes=historico.parse_fields(antes),
        depois=historico.parse_fields(depois),
        quem=quem,
        token=token,
        origem=origem,
        lote=lote,
        request_id=request_id,
        em=em,
    )


IMPORT_COLUMNS = (
    "id, arquivo, codificacao, quem, token, criada_em, expira_em, estado, resumo, chave, "
    "aplicada_em, aplicada_por, desfeita_em, desfeita_por"
)
IMPORT = f"SELECT {IMPORT_COLUMNS} FROM importacoes WHERE id = ?"
IMPORTS = f"SELECT {IMPORT_COLUMNS} FROM importacoes ORDER BY criada_em DESC, id LIMIT ?"
IMPORT_FILE = "SELECT conteudo FROM importacoes WHERE id = ? AND estado = 'preparada'"
IMPORT_LINES = (
    "SELECT dados FROM importacao_linhas WHERE importacao_id = ? AND tipo = ? "
    "ORDER BY posicao LIMIT ? OFFSET ?"
)
WRITE_LINES_READ = 1000  # what confirming reads of an import's lines at a time
# An import's lines that write, after a position, in the file's order.
WRITE_LINES = (
    "SELECT posicao, dados FROM importacao_linhas WHERE importacao_id = ? "
    f"AND posicao > ? AND tipo IN ('novo', 'alterado') ORDER BY posicao LIMIT {WRITE_LINES_READ}"
)
# A dry run kept, in place of an earlier one of the same import only while that is staged.
STAGE = (
    "INSERT INTO importacoes (id, arquivo, codificacao, quem, token, criada_em, expira_em, "
    "estado, resumo, conteudo) VALUES (?, ?, ?, ?, ?, ?, ?, 'preparada', ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET criada_em = excluded.criada_em, "
    "expira_em = excluded.expira_em, resumo = excluded.resumo, conteudo = excluded.conteudo "
    "WHERE importacoes.estado = 'preparada' RETURNING id"
)
STAGED_LINES = (
    "INSERT INTO importacao_linhas (importacao_id, tipo, posicao, dados) VALUES (?, ?, ?, ?)"
)
FORGET_LINES = "DELETE FROM importacao_linhas WHERE importacao_id = ?"
# What imports expired before a moment no longer need: their rows and their files.
FORGET_EXPIRED = (
    "DELETE FROM importacao_linhas WHERE importacao_id IN "
    "(SELECT id FROM importacoes WHERE estado = 'preparada' AND expira_em < ?)",
    "UPDATE importacoes SET conteudo = NULL "
    "WHERE estado = 'preparada' AND expira_em < ? AND conteudo IS NOT NULL",
)
CONFIRM = (
    "UPDATE importacoes SET estado = 'aplicada', aplicada_em = ?, aplicada_por = ?, chave = ?, "
    "conteudo = NULL WHERE id = ? AND estado = 'preparada' AND expira_em > ? RETURNING id"
)
UNDO = (
    "UPDATE importacoes SET estado = 'desfeita', desfeita_em = ?, desfeita_por = ? "
    "WHERE id = ? AND estado = 'aplicada' RETURNING id"
)
KEYS_READ = 500  # codes asked for in one statement (SQLite takes at most 32,766 parameters)
BATCH_PAGE = f"SELECT id, {EVENT_COLUMNS} FROM eventos WHERE lote = ? ORDER BY id LIMIT ? OFFSET ?"


def importacao_of(row: Any) -> Importacao:
    """An IMPORT_COLUMNS row: the columns in Importacao's order, `resumo` as JSON text."""
    columns = dict(zip(IMPORT_COLUMNS.split(", "), row, strict=True))
    return Importacao(**{**columns, "resumo": orjson.loads(columns["resumo"])})


def staged_row(importacao: Importacao, conteudo: bytes) -> tuple[Any, ...]:
    """STAGE's values."""
    i = importacao
    resumo = orjson.dumps(i.resumo).decode()
    return (
        i.id,
        i.arquivo,
        i.codificacao,
        i.quem,
        i.token,
        i.criada_em,
        i.expira_em,
        resumo,
        conteudo,
    )


def line_rows(id: str, lines: Sequence[StagedLine]) -> Iterator[tuple[str, str, int, str]]:
    """STAGED_LINES' values, numbered in the file's order."""
    return ((id, tipo, posicao, dados) for posicao, (tipo, dados) in enumerate(lines))


# Webhooks (domain/webhooks.py): a subscription's columns, in Webhook's order.
WEBHOOK_COLUMNS = (
    "id, url, eventos, segredo, criado_em, criado_por, ultimo_evento, falhas, falhando_desde, "
    "proxima_em, ultimo_status, ultima_resposta, ultima_em, desativado_em, motivo"
)
# A new one delivers the events written after it: those after the last one now.
CREATE_WEBHOOK = (
    "INSERT INTO webhooks (url, eventos, segredo, criado_em, criado_por, ultimo_evento) "
    "VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM eventos)) "
    f"RETURNING {WEBHOOK_COLUMNS}"
)
WEBHOOKS = f"SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY id"
WEBHOOK = f"SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?"
DELETE_WEBHOOK = "DELETE FROM webhooks WHERE id = ? RETURNING id"
DELETE_DELIVERIES = "DELETE FROM entregas WHERE webhook_id = ?"
RECORD_DELIVERY = (
    "INSERT INTO entregas (webhook_id, evento_id, em, status, resposta, entregue) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
# Only each subscription's latest webhooks.DELIVERIES_KEPT attempts are kept.
PRUNE_DELIVERIES = (
    "DELETE FROM entregas WHERE webhook_id = ? AND id < (SELECT min(id) FROM (SELECT id FROM "
    "entregas WHERE webhook_id = ? ORDER BY id DESC LIMIT ?) AS recentes)"
)
DELIVERIES = (
    "SELECT webhook_id, evento_id, em, status, resposta, entregue FROM entregas "
    "WHERE webhook_id = ? ORDER BY id DESC LIMIT ?"
)
RESEAL_WEBHOOK = "UPDATE webhooks SET segredo = ? WHERE id = ? AND segredo = ? RETURNING id"
# From the event after `ultimo_evento` again, on again, its failures forgotten; a delivery under
# way loses its lease, so that what it was sending does not move the subscription on.
REPLAY_WEBHOOK = (
    "UPDATE webhooks SET ultimo_evento = ?, falhas = 0, falhando_desde = NULL, proxima_em = 0, "
    "desativado_em = NULL, motivo = NULL, dono = NULL, posse_ate = 0 WHERE id = ? "
    f"RETURNING {WEBHOOK_COLUMNS}"
)
# Whether a subscription is due: on, not held, its wait over, and an event after its last.
WEBHOOK_DUE = (
    "desativado_em IS NULL AND proxima_em <= ? AND posse_ate < ? "
    "AND ultimo_evento < (SELECT coalesce(max(id), 0) FROM eventos)"
)
ANY_WEBHOOK_DUE = f"SELECT 1 FROM webhooks WHERE {WEBHOOK_DUE} LIMIT 1"
# A delivery that answered 2xx: the next event, while the lease is still this instance's.
WEBHOOK_DELIVERED = (
    "UPDATE webhooks SET ultimo_evento = ?, falhas = 0, falhando_desde = NULL, proxima_em = 0, "
    "ultimo_status = ?, ultima_resposta = ?, ultima_em = ?, posse_ate = ? "
    "WHERE id = ? AND dono = ? AND posse_ate >= ? RETURNING id"
)
# One that did not: when to try again (or, with a `motivo`, off), and the lease let go.
WEBHOOK_FAILED = (
    "UPDATE webhooks SET falhas = falhas + 1, falhando_desde = coalesce(falhando_desde, ?), "
    "proxima_em = ?, ultimo_status = ?, ultima_resposta = ?, ultima_em = ?, "
    "desativado_em = ?, motivo = ?, dono = NULL, posse_ate = 0 WHERE id = ? AND dono = ?"
)
# The lease let go, past the events that were not of its kinds.
RELEASE_WEBHOOK = (
    "UPDATE webhooks SET ultimo_evento = CASE WHEN ultimo_evento < ? THEN ? "
    "ELSE ultimo_evento END, dono = NULL, posse_ate = 0 WHERE id = ? AND dono = ?"
)

# Per subscription that is on: when the oldest event it has yet to receive was written.
WEBHOOK_BACKLOG = (
    "SELECT w.id, (SELECT e.em FROM eventos e WHERE e.id > w.ultimo_evento "
    "AND (',' || w.eventos || ',') LIKE ('%,' || e.tipo || ',%') ORDER BY e.id LIMIT 1) "
    "FROM webhooks w WHERE w.desativado_em IS NULL"
)


def webhook_of(row: Sequence[Any]) -> Webhook:
    values = list(row)
    values[2] = tuple(values[2].split(","))  # eventos, as the table lists them
    return Webhook(*values)
