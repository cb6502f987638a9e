"""Webhook subscriptions: made once their URL names an address deliveries may reach, ended,
replayed from an event, and their secrets sealed anew under the keyring's first key.
services/delivery.py sends what they ask for, each address checked again (`checked_addresses`).
"""

import asyncio
import dataclasses
import ipaddress
import socket
import time
import urllib.parse
from collections.abc import Collection, Iterable

from catalogo.domain import webhooks
from catalogo.domain.errors import CatalogoError
from catalogo.domain.keyring import Keyring, Unopenable
from catalogo.domain.webhooks import Address, Network, Webhook
from catalogo.storage import Storage


async def checked_addresses(url: str, allowed: Collection[Network]) -> list[Address]:
    """The addresses `url`'s name resolves to now, or AddressRefused if it resolves to none, or to
    any that deliveries may not reach (a name may mix a public address and a private one)."""
    parts = urllib.parse.urlsplit(url)
    name = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except OSError as error:
        if getattr(error, "errno", None) == socket.EAI_AGAIN:
            raise AddressRefused(f"o DNS não respondeu sobre o nome {name} agora") from None
        raise AddressRefused(f"o nome {name} não existe no DNS") from None
    addresses = [ipaddress.ip_address(info[4][0]) for info in found]
    if not addresses:
        raise AddressRefused(f"o nome {name} não resolve para nenhum endereço")
    for address in addresses:
        why = webhooks.refused_address(address, allowed)
        if why is not None:
            raise AddressRefused(why)
    return addresses


class AddressRefused(CatalogoError):
    """The URL's name resolves to no address, or to one deliveries may not reach; the message
    says which, in the pages' words."""


async def subscribe(
    storage: Storage,
    url: str,
    eventos: Iterable[str],
    quem: str | None,
    allowed: Collection[webhooks.Network],
    keyring: Keyring,
) -> webhooks.Webhook:
    """A new webhook subscription, once its URL names an address deliveries may reach now
    (each delivery checks it again: DNS may change), with its secret as it is (the database
    keeps it as `keyring` seals it)."""
    checked = webhooks.parse_url(url)
    kinds = webhooks.parse_eventos(eventos)
    try:
        await checked_addresses(checked, allowed)
    except AddressRefused as refused:
        raise webhooks.SubscriptionRefused(f"Não posso entregar aqui: {refused}.", "url") from None
    secret = webhooks.new_secret()
    made = await storage.create_webhook(checked, kinds, keyring.seal(secret), quem, time.time())
    return dataclasses.replace(made, segredo=secret)


async def subscription(storage: Storage, id: int) -> Webhook:
    """Raises UnknownWebhook."""
    found = await storage.webhook(id)
    if found is None:
        raise webhooks.UnknownWebhook(id)
    return found


async def unsubscribe(storage: Storage, id: int) -> None:
    """The subscription ends: nothing more is delivered to it. Raises UnknownWebhook."""
    if not await storage.delete_webhook(id):
        raise webhooks.UnknownWebhook(id)


async def replay(storage: Storage, id: int, desde: int) -> Webhook:
    """Deliveries start again from event `desde`, and a subscription that was off is on again.
    Raises UnknownWebhook."""
    replayed = await storage.replay_webhook(id, desde - 1)
    if replayed is None:
        raise webhooks.UnknownWebhook(id)
    return replayed


async def reseal_secrets(storage: Storage, keyring: Keyring) -> tuple[int, list[int]]:
    """Every webhook's secret sealed under the keyring's first key (one kept as it is, or
    under an older key): how many were sealed anew, and the subscriptions whose secret no key
    opens (left as they are)."""
    sealed, unopenable = 0, []
    for webhook in await storage.webhooks():
        try:
            resealed = keyring.resealed(webhook.segredo)
        except Unopenable:
            unopenable.append(webhook.id)
            continue
        if resealed is not None and await storage.reseal_webhook(
            webhook.id, webhook.segredo, resealed
        ):
            sealed += 1
    return sealed, unopenable
