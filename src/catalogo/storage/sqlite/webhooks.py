"""Webhooks in the SQLite file (sql.py's statements): reads inline, writes on the writer
thread, which is also what makes a claim one instance's at a time."""

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from catalogo.domain.webhooks import DELIVERIES_KEPT, Entrega, Webhook
from catalogo.storage import sql

T = TypeVar("T")

_CLAIM = (
    "UPDATE webhooks SET dono = ?, posse_ate = ? WHERE id = "
    f"(SELECT id FROM webhooks WHERE {sql.WEBHOOK_DUE} ORDER BY proxima_em, id LIMIT 1) "
    f"RETURNING {sql.WEBHOOK_COLUMNS}"
)


class SQLiteWebhooks:
    """Mixed into SQLiteStorage, whose `_read` and `_write` these use."""

    if TYPE_CHECKING:

        def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...

        async def _write(self, sql: str, params: tuple[Any, ...]) -> list[Any]: ...

        async def _submit(self, work: Callable[[sqlite3.Connection], T]) -> T: ...

    async def create_webhook(
        self, url: str, eventos: tuple[str, ...], segredo: str, criado_por: str | None, now: float
    ) -> Webhook:
        params = (url, ",".join(eventos), segredo, now, criado_por)
        return sql.webhook_of((await self._write(sql.CREATE_WEBHOOK, params))[0])

    async def webhooks(self) -> list[Webhook]:
        return [sql.webhook_of(row) for row in self._read(sql.WEBHOOKS)]

    async def webhook(self, id: int) -> Webhook | None:
        rows = self._read(sql.WEBHOOK, (id,))
        return sql.webhook_of(rows[0]) if rows else None

    async def delete_webhook(self, id: int) -> bool:
        def run(connection: sqlite3.Connection) -> bool:
            connection.execute(sql.DELETE_DELIVERIES, (id,))
            return bool(connection.execute(sql.DELETE_WEBHOOK, (id,)).fetchall())

        return await self._submit(run)

    async def record_delivery(self, entrega: Entrega) -> None:
        def run(connection: sqlite3.Connection) -> None:
            connection.execute(sql.RECORD_DELIVERY, _delivery_row(entrega))
            kept = (entrega.webhook_id, entrega.webhook_id, DELIVERIES_KEPT)
            connection.execute(sql.PRUNE_DELIVERIES, kept)

        await self._submit(run)

    async def deliveries(self, webhook_id: int, limit: int) -> list[Entrega]:
        rows = self._read(sql.DELIVERIES, (webhook_id, limit))
        return [
            Entrega(w, e, em, status, resposta, bool(ok)) for w, e, em, status, resposta, ok in rows
        ]

    async def reseal_webhook(self, id: int, stored: str, sealed: str) -> bool:
        return bool(await self._write(sql.RESEAL_WEBHOOK, (sealed, id, stored)))

    async def replay_webhook(self, id: int, after: int) -> Webhook | None:
        rows = await self._write(sql.REPLAY_WEBHOOK, (after, id))
        return sql.webhook_of(rows[0]) if rows else None

    async def webhook_due(self, now: float) -> bool:
        return bool(self._read(sql.ANY_WEBHOOK_DUE, (now, now)))

    async def claim_webhook(self, owner: str, now: float, until: float) -> Webhook | None:
        rows = await self._write(_CLAIM, (owner, until, now, now))
        return sql.webhook_of(rows[0]) if rows else None

    async def webhook_delivered(
        self, id: int, owner: str, evento: int, status: int, answer: str, now: float, until: float
    ) -> bool:
        params = (evento, status, answer, now, until, id, owner, now)
        return bool(await self._write(sql.WEBHOOK_DELIVERED, params))

    async def webhook_failed(
        self,
        id: int,
        owner: str,
        status: int | None,
        answer: str,
        now: float,
        again_at: float,
        motivo: str | None,
    ) -> None:
        off = now if motivo is not None else None
        params = (now, again_at, status, answer, now, off, motivo, id, owner)
        await self._write(sql.WEBHOOK_FAILED, params)

    async def release_webhook(self, id: int, owner: str, past: int) -> None:
        await self._write(sql.RELEASE_WEBHOOK, (past, past, id, owner))

    async def webhook_backlog(self) -> dict[int, float | None]:
        return dict(self._read(sql.WEBHOOK_BACKLOG))


def _delivery_row(entrega: Entrega) -> tuple[Any, ...]:
    e = entrega
    return (e.webhook_id, e.evento_id, e.em, e.status, e.resposta, e.entregue)
