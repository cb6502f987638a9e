"""Webhook subscriptions' secrets: sealed at rest, and moved to a new key by `catalogo webhooks
cifrar` (services/webhooks.py's reseal_secrets) while deliveries go on, each verified by a real
receiver."""

from collections.abc import Callable

from starlette.testclient import TestClient

from catalogo.domain.keyring import new_key
from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import add_token, add_user, bearer, eventually
from tests.processes import catalogo
from tests.services.receiving import LOOPBACK, Receiver, create, subscribe


def test_secrets_are_sealed_at_rest_and_keys_rotate_without_a_delivery_failing(
    database: str, settings: Settings, db: Database, fast: None, receivers: Callable[..., Receiver]
) -> None:
    """A secret made before any key is kept as it is and sealed by `catalogo webhooks cifrar`;
    a new key put first still opens what the old one sealed, `cifrar` moves every secret to
    it, and the old key may go. Every delivery on the way is verified by the receiver with the
    secret shown once; a key lost makes deliveries fail saying so."""
    token = bearer(add_token(database, add_user(database, "ana", "admin"), "admin"))
    old, new = new_key(), new_key()
    receiver = receivers()

    def delivered_with(keys: tuple[str, ...], nome: str) -> None:
        configured = {**vars(settings), "webhook_networks": LOOPBACK, "webhook_keys": keys}
        with TestClient(create_app(Settings(**configured)), headers=token) as client:
            if not receiver.secret:
                subscribe(client, receiver)
            create(client, nome)
            eventually(lambda: nome in str(receiver.got[-1:]), seconds=10)
            eventually(released, seconds=10)  # so that the next app need not wait for a lease

    def released() -> bool:
        return bool(db.execute("SELECT dono FROM webhooks").fetchone() == (None,))

    def kept() -> str:
        return str(db.execute("SELECT segredo FROM webhooks").fetchone()[0])

    def cifrar(keys: str) -> str:
        done = catalogo(database, "webhooks", "cifrar", env={"CATALOGO_WEBHOOKS_CHAVES": keys})
        assert done.returncode == 0, done.stderr
        return done.stdout

    delivered_with((), "Caneca")
    assert kept() == receiver.secret  # no key: kept as it is, as before
    delivered_with((old,), "Copo")  # a key given: what was kept as it is is still read
    assert "1 segredo cifrado" in cifrar(old)
    sealed = kept()
    assert not sealed.startswith("whsec_") and receiver.secret[6:] not in sealed
    delivered_with((new, old), "Prato")  # the new key first: the old one still opens
    assert "1 segredo cifrado" in cifrar(f"{new},{old}")
    assert "0 segredos cifrados" in cifrar(f"{new},{old}")  # once is enough
    delivered_with((new,), "Pires")  # the old key gone
    assert receiver.ids() == ["evt_1", "evt_2", "evt_3", "evt_4"]
    configured = {**vars(settings), "webhook_networks": LOOPBACK, "webhook_keys": (old,)}
    with TestClient(create_app(Settings(**configured)), headers=token) as client:
        create(client, "Jarra")
        eventually(lambda: client.get("/webhooks/1").json()["falhas"] >= 1, seconds=10)
        assert "CATALOGO_WEBHOOKS_CHAVES" in client.get("/webhooks/1").json()["ultima_resposta"]
    lost = catalogo(database, "webhooks", "cifrar", env={"CATALOGO_WEBHOOKS_CHAVES": old})
    assert lost.returncode == 1 and "nenhuma chave abre o segredo dos webhooks 1" in lost.stderr
    assert len(receiver.got) == 4
