"""Webhooks in PostgreSQL (sql.py's statements), on storage/postgres/store.py's pool. A claim skips
the rows another instance is claiming at that moment, and checks the lease again on the row it
locked, so that two instances never both hold one."""

from typing import Any

from catalogo.domain.webhooks import DELIVERIES_KEPT, Entrega, Webhook
from catalogo.storage import sql
from catalogo.storage.postgres.pool import Connection, PostgresPool
from catalogo.storage.sql import numbered

_CREATE = numbered(sql.CREATE_WEBHOOK)
_WEBHOOKS = numbered(sql.WEBHOOKS)
_WEBHOOK = numbered(sql.WEBHOOK)
_DELETE = numbered(sql.DELETE_WEBHOOK)
_DELETE_DELIVERIES = numbered(sql.DELETE_DELIVERIES)
_RECORD_DELIVERY = numbered(sql.RECORD_DELIVERY)
_PRUNE_DELIVERIES = numbered(sql.PRUNE_DELIVERIES)
_DELIVERIES = numbered(sql.DELIVERIES)
_REPLAY = numbered(sql.REPLAY_WEBHOOK)
_RESEAL = numbered(sql.RESEAL_WEBHOOK)
_ANY_DUE = numbered(sql.ANY_WEBHOOK_DUE)
_CLAIM = numbered(
    "UPDATE webhooks SET dono = ?, posse_ate = ? WHERE id = "
    f"(SELECT id FROM webhooks WHERE {sql.WEBHOOK_DUE} ORDER BY proxima_em, id LIMIT 1 "
    f"FOR UPDATE SKIP LOCKED) AND posse_ate < ? RETURNING {sql.WEBHOOK_COLUMNS}"
)
_DELIVERED = numbered(sql.WEBHOOK_DELIVERED)
_FAILED = numbered(sql.WEBHOOK_FAILED)
_RELEASE = numbered(sql.RELEASE_WEBHOOK)
_BACKLOG = sql.WEBHOOK_BACKLOG


class PostgresWebhooks(PostgresPool):
    async def create_webhook(
        self, url: str, eventos: tuple[str, ...], segredo: str, criado_por: str | None, now: float
    ) -> Webhook:
        rows = await self._changed(_CREATE, url, ",".join(eventos), segredo, now, criado_por)
        return sql.webhook_of(rows[0])

    async def webhooks(self) -> list[Webhook]:
        return [sql.webhook_of(row) for row in await self._fetch(_WEBHOOKS)]

    async def webhook(self, id: int) -> Webhook | None:
        rows = await self._fetch(_WEBHOOK, id)
        return sql.webhook_of(rows[0]) if rows else None

    async def delete_webhook(self, id: int) -> bool:
        async def delete(connection: Connection) -> bool:
            await connection.execute(_DELETE_DELIVERIES, id)
            return bool(await connection.fetch(_DELETE, id))

        return await self._change(delete)

    async def record_delivery(self, entrega: Entrega) -> None:
        e = entrega

        async def record(connection: Connection) -> None:
            row = (e.webhook_id, e.evento_id, e.em, e.status, e.resposta, e.entregue)
            await connection.execute(_RECORD_DELIVERY, *row)
            await connection.execute(_PRUNE_DELIVERIES, e.webhook_id, e.webhook_id, DELIVERIES_KEPT)

        await self._change(record)

    async def deliveries(self, webhook_id: int, limit: int) -> list[Entrega]:
        rows = await self._fetch(_DELIVERIES, webhook_id, limit)
        return [Entrega(*row) for row in rows]

    async def reseal_webhook(self, id: int, stored: str, sealed: str) -> bool:
        return bool(await self._changed(_RESEAL, sealed, id, stored))

    async def replay_webhook(self, id: int, after: int) -> Webhook | None:
        rows = await self._changed(_REPLAY, after, id)
        return sql.webhook_of(rows[0]) if rows else None

    async def webhook_due(self, now: float) -> bool:
        return bool(await self._fetch(_ANY_DUE, now, now))

    async def claim_webhook(self, owner: str, now: float, until: float) -> Webhook | None:
        rows = await self._changed(_CLAIM, owner, until, now, now, now)
        return sql.webhook_of(rows[0]) if rows else None

    async def webhook_delivered(
        self, id: int, owner: str, evento: int, status: int, answer: str, now: float, until: float
    ) -> bool:
        return bool(
            await self._changed(_DELIVERED, evento, status, answer, now, until, id, owner, now)
        )

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
        await self._changed(_FAILED, now, again_at, status, answer, now, off, motivo, id, owner)

    async def release_webhook(self, id: int, owner: str, past: int) -> None:
        await self._changed(_RELEASE, past, past, id, owner)

    async def webhook_backlog(self) -> dict[int, float | None]:
        return {id: em for id, em in await self._fetch(_BACKLOG)}

    async def _changed(self, statement: str, *params: object) -> list[Any]:
        """One statement in a transaction of its own: its rows."""

        async def change(connection: Connection) -> list[Any]:
            return list(await connection.fetch(statement, *params))

        return await self._change(change)
