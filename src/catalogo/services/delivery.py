"""Webhook delivery: every worker of every instance runs a Deliverer beside its requests
(http/app.py's lifespan), so there is nothing more for an operator to run; a lease on each
subscription's row makes one of them at a time its deliverer (storage's `claim_webhook`).

The outbox is the history itself: a subscription's `ultimo_evento` is the last event it is done
with, and the next are read as the feed reads them (`events`), so none is skipped whatever the
database. Each is sent, in event order, once the one before it was answered 2xx: at least once,
one in flight per subscription, so a slow or failing receiver delays only itself. A failure
waits as webhooks.SCHEDULE_S says, then the same event goes again with the same `webhook-id`; a
410, or a failure past the schedule's end, switches the subscription off, and /webhooks says
why. A worker killed mid-delivery loses nothing: its lease ends, another instance takes the
subscription and sends the event again. A long run of events of other kinds is passed over a
third of a lease at a time (each read's events passed over before it looks at the time, so a
slow read still moves on), then let go where it stands and taken again at the next look, so no
lease runs out while its holder is still reading.

Every connection goes to an address checked just before it is made (webhooks.refused_address):
the name is resolved here, and the request sent to the address found, with the name in `Host`
and, for https, in SNI and the certificate's check, so a name whose DNS changes between the
check and the connection reaches no private address. No redirects, 10 s for all of it, the
answer read to 1 KB.
"""

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import ssl
import time
import urllib.parse
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catalogo.domain import historico, webhooks
from catalogo.domain.errors import StorageUnavailable
from catalogo.domain.historico import Evento
from catalogo.domain.keyring import Keyring, Unopenable
from catalogo.domain.produtos import representation
from catalogo.domain.webhooks import Entrega, Network, Webhook
from catalogo.services.webhooks import AddressRefused, checked_addresses
from catalogo.storage import Storage

if TYPE_CHECKING:
    import httpx

POLL_S = 1.0  # how often a worker looks for a subscription with something to send
LEASE_S = 30.0  # a subscription's lease: three deliveries long, renewed by each one
TIMEOUT_S = 10.0
IN_FLIGHT = 16  # subscriptions one worker delivers to at once
EVENTS_READ = 100
BACKLOG_EVERY_S = 15.0  # how often the metrics' backlog is measured, when metrics are on
_LOG = logging.getLogger("catalogo.webhooks")
UNOPENABLE = (
    "o segredo deste webhook foi cifrado com uma chave que CATALOGO_WEBHOOKS_CHAVES não tem "
    "mais: devolva a chave à lista, ou apague o webhook e crie outro"
)


@dataclass(frozen=True)
class Outcome:
    """A delivery's answer: its status (None: none came) and the start of its body, or what
    kept it from being made."""

    status: int | None
    answer: str
    refused: bool = False  # its address may not be reached

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def _ignored(outcome: str) -> None:
    """An instrument no one reads: the default."""


@dataclass(frozen=True)
class Instruments:
    """What delivery tells the operators' metrics (runtime/metrics.py); by default no one listens.
    `outcome`: each delivery's, `entregue`, `falhou` or `recusado`; `backlog`: every
    BACKLOG_EVERY_S, the age in seconds of each subscription's oldest undelivered event."""

    outcome: Callable[[str], None] = _ignored
    backlog: Callable[[dict[int, float]], None] | None = None


class Deliverer:
    def __init__(
        self,
        storage: Storage,
        allowed: Collection[Network] = (),
        instruments: Instruments = Instruments(),
        keyring: Keyring | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`allowed`: networks a delivery may reach although not public; `keyring`: what
        opens the secrets as the database keeps them; `clock`: the time leases are measured
        by (a test's own, so that a busy machine's pauses never end one)."""
        self._storage = storage
        self._clock = clock
        self._keyring = keyring or Keyring()
        self._allowed = allowed
        self._observe = instruments.outcome
        self._backlog = instruments.backlog
        self._owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._serving: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None  # made at the first delivery

    async def run(self) -> None:
        """Until cancelled: a look every POLL_S for subscriptions to serve."""
        measured = 0.0
        while True:
            try:
                await self.serve_due()
                if self._backlog is not None and time.monotonic() - measured > BACKLOG_EVERY_S:
                    measured = time.monotonic()
                    now = time.time()
                    written = await self._storage.webhook_backlog()
                    self._backlog({id: now - em if em else 0.0 for id, em in written.items()})
            except StorageUnavailable as error:
                _LOG.warning("webhooks: o banco de dados não responde (%s)", error)
            await asyncio.sleep(POLL_S)

    async def serve_due(self) -> None:
        """Claims every due subscription it has room for, each served in a task of its own."""
        now = self._clock()
        if len(self._serving) >= IN_FLIGHT or not await self._storage.webhook_due(now):
            return
        while len(self._serving) < IN_FLIGHT:
            claimed = await self._storage.claim_webhook(self._owner, now, now + LEASE_S)
            if claimed is None:
                return
            task = asyncio.create_task(self._serve(claimed))
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)

    async def close(self) -> None:
        for task in list(self._serving):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._serving, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()

    def _http(self) -> "httpx.AsyncClient":
        """httpx, imported at the first delivery: 6 MB of a worker's memory that a catalog
        without webhooks never needs."""
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(
                follow_redirects=False,
                trust_env=False,  # no proxy from the environment: the address checked is used
                timeout=TIMEOUT_S,
                headers={"User-Agent": "catalogo-webhooks", "Content-Type": "application/json"},
            )
        return self._client

    async def _serve(self, webhook: Webhook) -> None:
        """Its events in order while they are answered 2xx; then the lease let go."""
        done = webhook.ultimo_evento
        failures, failing_since = webhook.falhas, webhook.falhando_desde
        renewed = self._clock()
        try:
            while eventos := await self._storage.events(done, EVENTS_READ):
                for evento in eventos:
                    if evento.tipo not in webhook.eventos:
                        done = evento.id
                        continue
                    outcome = await self.send(webhook, evento)
                    now = self._clock()
                    await self._storage.record_delivery(
                        Entrega(
                            webhook.id,
                            evento.id,
                            now,
                            outcome.status,
                            outcome.answer,
                            outcome.delivered,
                        )
                    )
                    if not outcome.delivered:
                        failures += 1
                        await self._failed(webhook, outcome, failures, failing_since or now, now)
                        return
                    self._observe("entregue")
                    held = await self._storage.webhook_delivered(
                        webhook.id,
                        self._owner,
                        evento.id,
                        outcome.status or 0,
                        outcome.answer,
                        now,
                        now + LEASE_S,
                    )
                    if not held:  # replayed meanwhile, or taken over: the new holder goes on
                        return
                    done, failures, failing_since = evento.id, 0, None
                    renewed = now
                if self._clock() - renewed > LEASE_S / 3:
                    break  # a long run of other kinds: let go in time, where it stands
            await self._storage.release_webhook(webhook.id, self._owner, done)
        except StorageUnavailable as error:  # the lease ends by itself, and another goes on
            _LOG.warning("webhooks: o banco de dados não responde (%s)", error)
        except Exception:
            _LOG.exception("webhooks: a entrega ao webhook %s falhou", webhook.id)
            raise

    async def _failed(
        self, webhook: Webhook, outcome: Outcome, failures: int, since: float, now: float
    ) -> None:
        again_at = webhooks.next_attempt(failures, now)
        motivo = None
        if outcome.status == 410:
            motivo = "O receptor respondeu 410 (Gone): não quer mais receber eventos."
        elif again_at is None:
            motivo = (
                f"{failures} falhas seguidas em {(now - since) / 86400:.1f} dias; a última: "
                f"{outcome.answer[:200]}"
            )
        self._observe("recusado" if outcome.refused else "falhou")
        await self._storage.webhook_failed(
            webhook.id,
            self._owner,
            outcome.status,
            outcome.answer,
            now,
            again_at or now,
            motivo,
        )

    async def send(self, webhook: Webhook, evento: Evento) -> Outcome:
        """One delivery of `evento` to `webhook`, whatever comes of it."""
        produto = await self._storage.get(evento.produto_id)
        body = webhooks.body(
            historico.representation(evento), None if produto is None else representation(produto)
        )
        message = webhooks.message_id(evento.id)
        timestamp = int(self._clock())
        try:
            secret = self._keyring.open(webhook.segredo)
        except Unopenable:
            _LOG.error("webhooks: o segredo do webhook %s não abre com as chaves dadas", webhook.id)
            return Outcome(None, UNOPENABLE)
        headers = {
            "webhook-id": message,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": webhooks.signature(secret, message, timestamp, body),
        }
        client = self._http()
        import httpx  # what _http imported: its errors

        try:
            async with asyncio.timeout(TIMEOUT_S):
                url, extensions, host = await self._pinned(webhook.url)
                request = client.build_request(
                    "POST",
                    url,
                    content=body,
                    headers={**headers, "Host": host},
                    extensions=extensions,
                )
                response = await client.send(request, stream=True)
                try:
                    answer = await _start_of(response)
                finally:
                    await response.aclose()
        except AddressRefused as refused:
            return Outcome(None, str(refused), refused=True)
        except TimeoutError:
            return Outcome(None, f"sem resposta em {TIMEOUT_S:.0f} s")
        except (httpx.HTTPError, OSError) as error:
            return Outcome(None, _failure_said(error, httpx))
        return Outcome(response.status_code, answer)

    async def _pinned(self, url: str) -> tuple[str, dict[str, str], str]:
        """The URL with its host replaced by an address it resolves to now, checked; and what
        the request needs to still speak to the name (SNI, Host)."""
        parts = urllib.parse.urlsplit(url)
        address = (await checked_addresses(url, self._allowed))[0]
        where = f"[{address}]" if address.version == 6 else str(address)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        pinned = parts._replace(netloc=f"{where}:{port}").geturl()
        extensions = {"sni_hostname": parts.hostname or ""} if parts.scheme == "https" else {}
        return pinned, extensions, parts.netloc


async def _start_of(response: "httpx.Response") -> str:
    kept = b""
    async for chunk in response.aiter_raw():
        kept += chunk
        if len(kept) >= webhooks.ANSWER_KEPT:
            break
    return webhooks.kept_answer(kept)


def _failure_said(error: Exception, httpx: Any) -> str:
    """Why a delivery got no answer, in the page's words: httpx's and the system's are
    English, and name a class a shop's admin has no use for."""
    causes = [error, error.__cause__, error.__context__]
    if any(isinstance(cause, ssl.SSLCertVerificationError) for cause in causes):
        return (
            "o certificado TLS do receptor não foi aceito (vencido, de outro nome ou não confiável)"
        )
    if any(isinstance(cause, ssl.SSLError) for cause in causes):
        return "a conexão segura (TLS) com o receptor falhou"
    if isinstance(error, httpx.TimeoutException):
        return f"sem resposta em {TIMEOUT_S:.0f} s"
    if isinstance(error, httpx.ConnectError | ConnectionRefusedError):
        return "não conectou: o endereço recusou a conexão ou não respondeu"
    if isinstance(error, httpx.RemoteProtocolError):
        return "o receptor fechou a conexão sem responder em HTTP"
    if isinstance(error, httpx.ReadError | httpx.WriteError | ConnectionError):
        return "a conexão caiu durante a entrega"
    return "a entrega falhou por um erro de rede"
