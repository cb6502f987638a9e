"""Webhooks: a program's subscription to the catalog's events, pushed to it as the Standard
Webhooks specification says, so that a receiver checks each delivery with the
`standardwebhooks` library or any other implementation: `webhook-id` (the event's, the same
on every retry), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` and the
base64 of an HMAC-SHA256 over `id.timestamp.body`, keyed by the `whsec_` secret).

Pure: what a subscription is and may be, which addresses may receive, the body, the signature
and the retry schedule. services/delivery.py sends; storage keeps the subscriptions; the events are
the history's own (docs/webhooks.md).
"""

import base64
import hashlib
import hmac
import ipaddress
import random
import secrets
import urllib.parse
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from catalogo.domain.errors import Invalid, NotFound
from catalogo.domain.produtos import JSON_OPTIONS

# The kinds of event a subscription may ask for: every product event, whoever wrote it (a
# person, a program, an import or a batch: each is one of these, with its `origem` and `lote`).
EVENTOS = ("criado", "alterado", "removido", "restaurado")
URL_MAXIMUM = 2000
# Seconds to wait after each failure in a row: the first two within half a minute, for a
# receiver that was restarting, then longer and longer, about three days in all. A failure
# past the last disables the subscription. Each wait is drawn between 80% and 100% of this.
SCHEDULE_S = (5, 25, 120, 600, 1800, 3600, 7200, 14400, 28800, 43200, 43200, 43200, 43200, 43200)
ANSWER_KEPT = 1024  # bytes of a receiver's answer kept, to show on /webhooks
DELIVERIES_KEPT = 100  # each subscription's latest attempts, for its page


@dataclass(frozen=True)
class Entrega:
    """One attempt to deliver an event to a subscription: when, which event, what came of it
    (the receiver's status and the start of its answer, or why none came, in words)."""

    webhook_id: int
    evento_id: int | None
    em: float
    status: int | None
    resposta: str
    entregue: bool


class UnknownWebhook(NotFound):
    """No subscription has that number."""

    def __init__(self, id: int) -> None:
        super().__init__(f"Não há webhook com o número {id}.")


class SubscriptionRefused(Invalid, ValueError):
    """A subscription that cannot be made as asked; the message says why, in the page's words,
    and `field` which of its fields."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Webhook:
    """A subscription, and where its delivery stands: `ultimo_evento` is the last event it is
    done with (delivered, or not of its kinds)."""

    id: int
    url: str
    eventos: tuple[str, ...]
    segredo: str
    criado_em: float
    criado_por: str | None
    ultimo_evento: int
    falhas: int
    falhando_desde: float | None
    proxima_em: float
    ultimo_status: int | None
    ultima_resposta: str | None
    ultima_em: float | None
    desativado_em: float | None
    motivo: str | None

    @property
    def ativo(self) -> bool:
        return self.desativado_em is None


def new_secret() -> str:
    """A signing secret as Standard Webhooks writes one: `whsec_` and base64 of 32 bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def message_id(evento_id: int) -> str:
    """The same for every delivery of one event, so that a receiver drops the repeats."""
    return f"evt_{evento_id}"


def body(evento: Mapping[str, Any], produto: Mapping[str, Any] | None) -> bytes:
    """The event as the feed gives it, and the product as it is when it is sent (null once it
    is removed)."""
    payload = {
        "type": f"produto.{evento['tipo']}",
        "timestamp": evento["em"],
        "data": {**evento, "produto": produto},
    }
    return orjson.dumps(payload, option=JSON_OPTIONS)


def parse_url(text: str) -> str:
    """An http(s) URL a program can be reached at; the address it names is checked apart
    (`refused_address`), when subscribing and at every delivery."""
    url = text.strip()
    if not url:
        raise SubscriptionRefused("Informe a URL que receberá os eventos.", "url")
    if len(url) > URL_MAXIMUM or not url.isascii() or any(c.isspace() for c in url):
        raise SubscriptionRefused(
            f"Use uma URL em ASCII, sem espaços, de até {URL_MAXIMUM} caracteres.", "url"
        )
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        raise SubscriptionRefused("A URL está malformada.", "url") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SubscriptionRefused(
            "A URL deve começar com http:// ou https:// e nomear um servidor.", "url"
        )
    if parts.username is not None or parts.password is not None:
        raise SubscriptionRefused("A URL não pode levar usuário nem senha.", "url")
    if parts.fragment or port == 0:
        raise SubscriptionRefused("A URL não pode ter # nem a porta 0.", "url")
    return url


def parse_eventos(values: Iterable[str]) -> tuple[str, ...]:
    """The kinds asked for, in EVENTOS' order; at least one, none unknown."""
    asked = {value.strip() for value in values}
    unknown = sorted(asked - set(EVENTOS))
    if unknown:
        raise SubscriptionRefused(
            f"Evento desconhecido: {', '.join(unknown)[:100]}. Escolha entre {', '.join(EVENTOS)}.",
            "eventos",
        )
    if not asked:
        raise SubscriptionRefused("Escolha ao menos um evento.", "eventos")
    return tuple(kind for kind in EVENTOS if kind in asked)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# IPv6 forms that carry an IPv4 address in their last 32 bits: NAT64's well-known prefix
# (RFC 6052), IPv4-translated (RFC 2765) and IPv4-compatible (deprecated, RFC 4291).
# IPv4-mapped, 6to4 and Teredo have ipaddress's own properties.
_CARRIERS = tuple(
    ipaddress.IPv6Network(prefix) for prefix in ("64:ff9b::/96", "::ffff:0:0:0/96", "::/96")
)
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: a network's own translator


def carried(address: Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address stands for, which a packet to it may reach: the
    one it maps, translates or is compatible with, NAT64's, 6to4's, and a Teredo address's
    server and client."""
    if isinstance(address, ipaddress.IPv4Address):
        return ()
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    if int(address) > 1 and any(address in network for network in _CARRIERS):
        return (ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF),)
    return ()


def refused_address(address: Address, allowed: Collection[Network]) -> str | None:
    """Why a delivery may not connect to `address` (None: it may): only public addresses,
    unless CATALOGO_WEBHOOKS_REDES_PERMITIDAS allows the network; never loopback, private,
    link-local (where clouds answer with their metadata), shared, site-local or reserved
    ones, nor an IPv6 address that carries one of them (`::ffff:127.0.0.1`,
    `64:ff9b::a9fe:a9fe`, `2002:7f00:1::`, `::127.0.0.1`)."""
    inner = carried(address)
    if _within(address, allowed) or (inner and all(_within(a, allowed) for a in inner)):
        return None
    for embedded in inner:
        kind = _not_public(embedded)
        if kind is not None:
            return _refusal(f"{address}, que leva a {embedded}, é {kind}")
    teredo = isinstance(address, ipaddress.IPv6Address) and address.teredo is not None
    if inner and not teredo:  # a public IPv4 address, reached through NAT64 or 6to4
        return None
    kind = _not_public(address)
    return None if kind is None else _refusal(f"{address} é {kind}")


def _within(address: Address, networks: Collection[Network]) -> bool:
    return any(address.version == network.version and address in network for network in networks)


def _not_public(address: Address) -> str | None:
    """What kind of address it is, when it is not one a delivery may reach."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.is_site_local:
            return "site-local (obsoleto, de rede privada)"
        if address in _LOCAL_NAT64:
            return "de um tradutor NAT64 local"
    if address.is_global and not address.is_multicast:
        return None
    if address.is_loopback:
        return "de loopback"
    if address.is_link_local:
        return "link-local (como o dos metadados da nuvem)"
    if address.is_private:
        return "de rede privada"
    return "reservado, e não público"


def _refusal(what: str) -> str:
    return (
        f"o endereço {what}: só endereços públicos recebem eventos, a menos que "
        "CATALOGO_WEBHOOKS_REDES_PERMITIDAS permita a rede dele"
    )


_JITTER = random.Random()  # noqa: S311 - spreads retries out, guards nothing


def next_attempt(failures: int, now: float, draw: random.Random = _JITTER) -> float | None:
    """When to try again after `failures` in a row; None once the schedule is over."""
    if failures > len(SCHEDULE_S):
        return None
    return now + SCHEDULE_S[failures - 1] * draw.uniform(0.8, 1.0)


def parse_desde(value: object) -> int | None:
    """The event to deliver again from: a whole number from 1 (JSON's or a form's text)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value < 2**63:
        return value
    return None


def kept_answer(content: bytes) -> str:
    return content[:ANSWER_KEPT].decode("utf-8", "replace")
