"""The store's webhooks role (port.py's Storage has it): subscriptions, and where each one's
delivery stands. The events they deliver are the history's (`HistoryStore.events`)."""

from typing import Protocol

from catalogo.domain.webhooks import Entrega, Webhook


class WebhookStore(Protocol):
    async def create_webhook(
        self, url: str, eventos: tuple[str, ...], segredo: str, criado_por: str | None, now: float
    ) -> Webhook:
        """It delivers the events written after it is made."""
        ...

    async def webhooks(self) -> list[Webhook]: ...

    async def webhook(self, id: int) -> Webhook | None: ...

    async def delete_webhook(self, id: int) -> bool:
        """Its deliveries' record goes with it."""
        ...

    async def record_delivery(self, entrega: Entrega) -> None:
        """An attempt, kept among its subscription's latest DELIVERIES_KEPT."""
        ...

    async def deliveries(self, webhook_id: int, limit: int) -> list[Entrega]:
        """A subscription's latest attempts, the newest first."""
        ...

    async def reseal_webhook(self, id: int, stored: str, sealed: str) -> bool:
        """Its secret kept as `sealed` if it is still kept as `stored` (False: it was not, or
        the subscription is gone)."""
        ...

    async def replay_webhook(self, id: int, after: int) -> Webhook | None:
        """From the event after `after` again, on again, its failures forgotten."""
        ...

    async def webhook_due(self, now: float) -> bool:
        """Whether any subscription is due: a read, so that instances with nothing to send
        write nothing."""
        ...

    async def claim_webhook(self, owner: str, now: float, until: float) -> Webhook | None:
        """A due subscription, leased to `owner` until `until`: no other instance delivers it
        meanwhile. One whose holder stopped renewing its lease is due again once it ends."""
        ...

    async def webhook_delivered(
        self,
        id: int,
        owner: str,
        evento: int,
        status: int,
        answer: str,
        now: float,
        until: float,
    ) -> bool:
        """`evento` is delivered, and the lease renewed; False if it was no longer `owner`'s."""
        ...

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
        """A failure: tried again at `again_at`, or, with a `motivo`, switched off."""
        ...

    async def release_webhook(self, id: int, owner: str, past: int) -> None:
        """The lease let go, the subscription moved past `past` (events not of its kinds)."""
        ...

    async def webhook_backlog(self) -> dict[int, float | None]:
        """Per subscription that is on, when the oldest event it has yet to receive was
        written (None: it has none)."""
        ...
