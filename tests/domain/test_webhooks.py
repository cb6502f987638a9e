"""Webhooks' rules: the signature a receiver checks with the `standardwebhooks` library, which
URLs and addresses may receive, the body, and the retry schedule."""

import ipaddress
import itertools
import json
import random
import time

import pytest
from standardwebhooks import Webhook as Receiver
from standardwebhooks.webhooks import WebhookVerificationError

from catalogo.domain import webhooks
from catalogo.domain.webhooks import SubscriptionRefused


def test_a_delivery_is_verified_by_the_standard_webhooks_library_and_a_forgery_is_not() -> None:
    secret = webhooks.new_secret()
    assert secret.startswith("whsec_")
    body = webhooks.body({"id": 7, "tipo": "criado", "em": "2026-11-27T10:00:00Z"}, None)
    message, timestamp = webhooks.message_id(7), int(time.time())
    headers = {
        "webhook-id": message,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": webhooks.signature(secret, message, timestamp, body),
    }
    assert Receiver(secret).verify(body, headers) == json.loads(body)
    with pytest.raises(WebhookVerificationError):
        Receiver(secret).verify(body + b" ", headers)
    with pytest.raises(WebhookVerificationError):
        Receiver(webhooks.new_secret()).verify(body, headers)


def test_the_body_is_the_event_as_the_feed_gives_it_and_the_product_as_it_is() -> None:
    evento = {"id": 7, "tipo": "alterado", "em": "2026-11-27T10:00:00Z", "produto_id": 3}
    produto = {"id": 3, "nome": "Caneca"}
    sent = json.loads(webhooks.body(evento, produto))
    assert sent == {
        "type": "produto.alterado",
        "timestamp": "2026-11-27T10:00:00Z",
        "data": {**evento, "produto": produto},
    }


def test_an_events_message_id_is_the_same_on_every_retry() -> None:
    assert webhooks.message_id(41) == webhooks.message_id(41) == "evt_41"


@pytest.mark.parametrize(
    "url",
    ["https://erp.example.com/hook", "http://203.0.113.9:8080/x?a=1", "  https://a.b/  "],
)
def test_an_http_or_https_url_is_taken(url: str) -> None:
    assert webhooks.parse_url(url) == url.strip()


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("", "Informe a URL"),
        ("ftp://example.com/", "http:// ou https://"),
        ("file:///etc/passwd", "http:// ou https://"),
        ("javascript:alert(1)", "http:// ou https://"),
        ("https://", "http:// ou https://"),
        ("https://user:pw@example.com/", "usuário nem senha"),
        ("https://example.com/#x", "não pode ter #"),
        ("https://example.com:99999/", "malformada"),
        ("https://exa mple.com/", "sem espaços"),
        ("https://exämple.com/", "ASCII"),
        ("https://example.com/" + "a" * 2000, "até 2000"),
    ],
)
def test_a_url_that_cannot_receive_is_refused_saying_why(url: str, said: str) -> None:
    with pytest.raises(SubscriptionRefused, match=said) as refused:
        webhooks.parse_url(url)
    assert refused.value.field == "url"


def test_the_kinds_asked_for_come_in_order_and_an_unknown_or_none_is_refused() -> None:
    assert webhooks.parse_eventos(["removido", "criado", "criado"]) == ("criado", "removido")
    with pytest.raises(SubscriptionRefused, match="Evento desconhecido: apagado"):
        webhooks.parse_eventos(["criado", "apagado"])
    with pytest.raises(SubscriptionRefused, match="ao menos um"):
        webhooks.parse_eventos([])


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.1.2.3", "privada"),
        ("192.168.0.10", "privada"),
        ("172.16.5.4", "privada"),
        ("fd00:ec2::254", "privada"),
        ("100.64.0.1", "reservado"),
        ("0.0.0.1", "privada"),
        ("224.0.0.1", "reservado"),
        # IPv6 forms that carry one of those: NAT64 of the metadata address and of loopback,
        # IPv4-compatible, 6to4, IPv4-translated, Teredo's, and deprecated site-local
        ("64:ff9b::a9fe:a9fe", "leva a 169.254.169.254, é link-local"),
        ("64:ff9b::7f00:1", "leva a 127.0.0.1, é de loopback"),
        ("::127.0.0.1", "leva a 127.0.0.1, é de loopback"),
        ("::a00:5", "leva a 10.0.0.5, é de rede privada"),
        ("2002:7f00:1::", "leva a 127.0.0.1, é de loopback"),
        ("2002:a9fe:a9fe::1", "leva a 169.254.169.254, é link-local"),
        ("::ffff:0:7f00:1", "leva a 127.0.0.1, é de loopback"),
        ("::ffff:0:a9fe:a9fe", "leva a 169.254.169.254, é link-local"),
        ("2001:0:7f00:1::", "leva a 127.0.0.1, é de loopback"),  # Teredo's server
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", "f7f7:f7f7 é"),  # Teredo, both ends public
        ("fec0::1", "site-local"),
        ("64:ff9b:1::a00:1", "NAT64 local"),
    ],
)
def test_deliveries_refuse_every_address_that_is_not_public(address: str, kind: str) -> None:
    why = webhooks.refused_address(ipaddress.ip_address(address), ())
    assert why is not None and kind in why and "CATALOGO_WEBHOOKS_REDES_PERMITIDAS" in why


def test_a_public_address_or_one_in_an_allowed_network_may_receive() -> None:
    assert webhooks.refused_address(ipaddress.ip_address("203.0.114.7"), ()) is None
    assert webhooks.refused_address(ipaddress.ip_address("2606:4700::1111"), ()) is None
    for public in ("::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"):
        assert webhooks.refused_address(ipaddress.ip_address(public), ()) is None, public
    assert (
        webhooks.refused_address(
            ipaddress.ip_address("64:ff9b::a00:5"), (ipaddress.ip_network("10.0.0.0/8"),)
        )
        is None
    )
    allowed = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("fd00::/8"))
    assert webhooks.refused_address(ipaddress.ip_address("127.0.0.1"), allowed) is None
    assert webhooks.refused_address(ipaddress.ip_address("fd00:ec2::254"), allowed) is None
    assert webhooks.refused_address(ipaddress.ip_address("10.0.0.1"), allowed) is not None


def test_retries_come_twice_within_half_a_minute_then_spread_over_about_three_days() -> None:
    draw = random.Random(1)  # noqa: S311 - the jitter's draw, made repeatable
    waits = []
    failures = 1
    while (again := webhooks.next_attempt(failures, 0.0, draw)) is not None:
        waits.append(again)
        failures += 1
    assert 4 <= waits[0] <= 5 and 20 <= waits[1] <= 25 and waits[0] + waits[1] <= 30
    assert all(a <= b * 1.25 for a, b in itertools.pairwise(waits))
    assert 2.5 * 86400 <= sum(webhooks.SCHEDULE_S) <= 3.5 * 86400
    assert failures == len(webhooks.SCHEDULE_S) + 1


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (7, 7),
        ("7", 7),
        ("0", None),
        (0, None),
        (True, None),
        ("x", None),
        (2**63, None),
        (None, None),
    ],
)
def test_the_event_to_deliver_again_from_is_a_whole_number_from_1(
    value: object, found: int | None
) -> None:
    assert webhooks.parse_desde(value) == found
