"""Webhook delivery, as a receiver meets it: a real app (its lifespan runs the deliverer) on a
real database, and a real HTTP receiver on loopback (allowed by the setting) that checks every
delivery with the `standardwebhooks` library. The schedule and the polling are shortened so
that each retry comes within a second."""

import asyncio
import json
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from starlette.testclient import TestClient

from catalogo.domain.historico import Evento
from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from catalogo.services import delivery
from catalogo.storage import Storage, open_storage
from tests.databases import Database
from tests.helpers import JSON, ONLY_POSTGRESQL, add_token, add_user, bearer, eventually
from tests.processes import free_port, http_client, start_serving, stop
from tests.runtime.test_metrics import scrape
from tests.services.receiving import LOOPBACK, Receiver, create, subscribe


def test_every_event_reaches_the_receiver_verified_in_order_with_the_product_as_it_is(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    receiver = receivers()
    subscribe(admin, receiver)
    id = create(admin, "Caneca")
    admin.put(f"/produtos/{id}", json={"nome": "Caneca azul", "preco": "12"}, headers=JSON)
    admin.delete(f"/produtos/{id}", headers=JSON)
    admin.post(f"/produtos/{id}/restauracao", headers=JSON)
    eventually(lambda: len(receiver.got) == 4, seconds=10)
    kinds = [sent["type"] for _, _, sent in receiver.got]
    assert kinds == ["produto.criado", "produto.alterado", "produto.removido", "produto.restaurado"]
    assert receiver.ids() == ["evt_1", "evt_2", "evt_3", "evt_4"]
    last = receiver.got[-1][2]["data"]
    assert isinstance(last, dict) and last["produto"]["nome"] == "Caneca azul"
    assert last["origem"] == "api" and last["versao"] == 4


def test_a_receiver_that_fails_three_times_gets_the_event_after_each_wait_then_never_again(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    receiver = receivers([500, 500, 503])
    id = subscribe(admin, receiver)
    create(admin, "Caneca")
    eventually(lambda: len(receiver.got) == 4, seconds=15)
    assert receiver.ids() == ["evt_1"] * 4
    assert [status for _, status, _ in receiver.got] == [500, 500, 503, 200]
    time.sleep(1.5)  # more than the whole (shortened) schedule: nothing comes again
    assert len(receiver.got) == 4
    shown = admin.get(f"/webhooks/{id}").json()
    assert shown["ultimo_evento"] == 1 and shown["falhas"] == 0 and shown["ultimo_status"] == 200


def test_a_receiver_that_never_answers_2xx_is_switched_off_saying_why(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    receiver = receivers([500] * 10)
    id = subscribe(admin, receiver)
    create(admin, "Caneca")
    eventually(lambda: not admin.get(f"/webhooks/{id}").json()["ativo"], seconds=15)
    shown = admin.get(f"/webhooks/{id}").json()
    assert len(receiver.got) == 4 and "4 falhas seguidas" in shown["motivo"]
    page = admin.get("/webhooks", headers={"Accept": "text/html"}).text
    assert "<strong>desligado</strong>" in page
    page = admin.get(f"/webhooks/{id}", headers={"Accept": "text/html"}).text
    assert "4 falhas seguidas" in page and page.count("o receptor respondeu 500") == 4


def test_a_subscriptions_page_lists_its_latest_deliveries_and_says_failures_in_words(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    receiver = receivers([503])
    id = subscribe(admin, receiver)
    create(admin, "Caneca")
    eventually(lambda: len(receiver.got) == 2, seconds=15)
    page = admin.get(f"/webhooks/{id}", headers={"Accept": "text/html"}).text
    assert "<h1>Webhook nº" in page and "entregue: 200" in page
    assert "<strong>recusado</strong>: o receptor respondeu 503" in page
    assert page.index("entregue: 200") < page.index("respondeu 503")  # the newest first
    nobody = f"http://127.0.0.1:{free_port()}/eventos"
    made = admin.post("/webhooks", json={"url": nobody, "eventos": ["criado"]})
    gone = made.json()["id"]
    create(admin, "Copo")
    eventually(
        lambda: (
            "não conectou" in admin.get(f"/webhooks/{gone}", headers={"Accept": "text/html"}).text
        ),
        seconds=15,
    )
    page = admin.get(f"/webhooks/{gone}", headers={"Accept": "text/html"}).text
    assert "ConnectError" not in page and "All connection attempts" not in page
    assert admin.delete(f"/webhooks/{gone}").status_code == 204


def test_a_410_switches_the_subscription_off_at_once_and_replaying_switches_it_on(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    receiver = receivers([410])
    id = subscribe(admin, receiver)
    create(admin, "Caneca")
    eventually(lambda: not admin.get(f"/webhooks/{id}").json()["ativo"], seconds=10)
    assert "410" in admin.get(f"/webhooks/{id}").json()["motivo"] and len(receiver.got) == 1
    create(admin, "Mesa")
    replayed = admin.post(f"/webhooks/{id}/reenvio", json={"desde": 1})
    assert replayed.status_code == 200 and replayed.json()["ativo"]
    eventually(lambda: len(receiver.got) == 3, seconds=10)
    assert receiver.ids() == ["evt_1", "evt_1", "evt_2"]


def test_a_slow_receiver_delays_neither_another_subscription_nor_the_site(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    """The slow one answers its first event only once the test lets it (never after a wall
    clock's margin, which a busy machine would eat): meanwhile the other gets all three, and
    the site answers."""
    slow, quick = receivers(), receivers()
    slow.gate = threading.Event()
    subscribe(admin, slow)
    subscribe(admin, quick)
    try:
        for n in range(3):
            create(admin, f"Produto {n}")
        eventually(lambda: len(quick.got) == 3, seconds=30)
        assert admin.get("/produtos/1", headers=JSON).status_code == 200
        assert slow.got == []  # still answering its first
    finally:
        slow.gate.set()


def test_only_the_kinds_asked_for_are_sent(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    receiver = receivers()
    subscribe(admin, receiver, ["removido"])
    id = create(admin, "Caneca")
    admin.delete(f"/produtos/{id}", headers=JSON)
    eventually(lambda: len(receiver.got) == 1, seconds=10)
    assert receiver.ids() == ["evt_2"]


@pytest.mark.parametrize(("read_s", "looks_taken"), [(0.07, 5), (0.15, 9)])
def test_a_long_run_of_other_kinds_is_passed_over_without_the_lease_running_out(
    database: str,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    receivers: Callable[..., Receiver],
    read_s: float,
    looks_taken: int,
) -> None:
    """Reads of the history that each take `read_s` of a clock the test moves (never the wall
    clock: a busy machine's pauses are no part of it), a lease of 0.3 s and 5 events a read:
    41 events take longer to pass over than a lease lasts. A rival instance tries to take the
    subscription at every read, by the same clock, and never can; each look moves on, even
    when one read takes longer than the third of a lease a look lasts (the events of a read
    are passed over before letting go: before, such reads were read again and again); the
    one event of the kind asked for comes once."""
    monkeypatch.setattr(delivery, "POLL_S", 1000.0)  # the app's own deliverer looks only once
    monkeypatch.setattr(delivery, "LEASE_S", 0.3)
    monkeypatch.setattr(delivery, "EVENTS_READ", 5)
    token = add_token(database, add_user(database, "ana", "admin"), "admin")
    allowed = Settings(**{**vars(settings), "webhook_networks": LOOPBACK})
    receiver = receivers()
    with TestClient(create_app(allowed), headers=bearer(token)) as admin:
        subscribe(admin, receiver, ["removido"])
        ids = [create(admin, f"Caneca {n}") for n in range(40)]
        admin.delete(f"/produtos/{ids[0]}", headers=JSON)

    taken_by_the_rival: list[float] = []
    clock = [time.time()]  # the receiver checks the signature's timestamp: start from now

    class SlowHistory:
        def __init__(self, storage: Storage) -> None:
            self._storage = storage

        def __getattr__(self, name: str) -> object:
            return getattr(self._storage, name)

        async def events(self, after: int, limit: int) -> list[Evento]:
            clock[0] += read_s
            now = clock[0]
            if await self._storage.claim_webhook("rival", now, now + 1) is not None:
                taken_by_the_rival.append(now)
            return await self._storage.events(after, limit)

    async def deliver() -> int:
        storage = await open_storage(allowed)
        deliverer = delivery.Deliverer(
            cast(Storage, SlowHistory(storage)), LOOPBACK, clock=lambda: clock[0]
        )
        looks = 0
        try:
            while not receiver.got and looks < 20 and not taken_by_the_rival:
                looks += 1
                await deliverer.serve_due()
                await asyncio.gather(*deliverer._serving)
        finally:
            await deliverer.close()
            await storage.close()
        return looks

    looks = asyncio.run(deliver())
    assert taken_by_the_rival == []
    assert looks == looks_taken  # let go on the way, and taken again where it stood
    assert receiver.ids() == ["evt_41"]


def test_a_name_that_resolves_to_a_private_address_at_delivery_is_not_reached(
    database: str, settings: Settings, fast: None, receivers: Callable[..., Receiver]
) -> None:
    """Subscribed while loopback was allowed; then the setting is gone, as if the name's DNS
    had changed to a private address: the delivery is refused on the address it would reach."""
    token = add_token(database, add_user(database, "ana", "admin"), "admin")
    receiver = receivers()
    allowed = Settings(**{**vars(settings), "webhook_networks": LOOPBACK})
    with TestClient(create_app(allowed), headers=bearer(token)) as client:
        id = subscribe(client, receiver)
    with TestClient(create_app(settings), headers=bearer(token)) as client:
        create(client, "Caneca")
        eventually(lambda: client.get(f"/webhooks/{id}").json()["falhas"] >= 1, seconds=10)
        shown = client.get(f"/webhooks/{id}").json()
    assert receiver.got == [] and shown["ultimo_status"] is None
    assert "127.0.0.1 é de loopback" in shown["ultima_resposta"]


def test_the_secret_signs_nothing_it_did_not_send(
    admin: TestClient, receivers: Callable[..., Receiver]
) -> None:
    receiver = receivers()
    subscribe(admin, receiver)
    create(admin, "Caneca")
    eventually(lambda: len(receiver.got) == 1, seconds=10)
    assert json.dumps(receiver.got[0][2]).count(receiver.secret) == 0


@ONLY_POSTGRESQL
def test_writes_on_two_instances_reach_the_receiver_once_each_in_order_across_a_kill_9(
    database: str, db: Database, tmp_path: Path, receivers: Callable[..., Receiver]
) -> None:
    """1,000 products created through two `catalogo serve` instances on one PostgreSQL; the
    instance delivering is killed (-9) halfway: after dropping repeats by `webhook-id`, every
    event came once, in event order."""
    token = add_token(database, add_user(database, "ana", "admin"), "admin")
    receiver = receivers(delay=0.005)
    env = {"CATALOGO_WEBHOOKS_REDES_PERMITIDAS": "127.0.0.1"}
    first = start_serving(database, tmp_path / "a.log", env=env)
    second = start_serving(database, tmp_path / "b.log", env=env)
    try:
        with http_client(first[0], headers=bearer(token), timeout=30) as a:
            made = a.post("/webhooks", json={"url": receiver.url, "eventos": ["criado"]})
            receiver.secret = made.json()["segredo"]
        with (
            http_client(first[0], headers=bearer(token), timeout=30) as a,
            http_client(second[0], headers=bearer(token), timeout=30) as b,
        ):
            for n in range(1000):
                sent = (a if n % 2 else b).post("/produtos", json={"nome": f"P{n}", "preco": "1"})
                assert sent.status_code == 201, sent.text
        holders: list[str] = []

        def held() -> bool:
            holders[:] = [row[0] for row in db.execute("SELECT dono FROM webhooks") if row[0]]
            return len(set(receiver.ids())) >= 300 and bool(holders)

        eventually(held, seconds=60)
        pid = int(holders[0].split(":")[1])
        victim = next(p for _, p in (first, second) if pid in _worker_pids(p.pid))
        stop(victim, signal.SIGKILL)
        eventually(lambda: len(set(receiver.ids())) == 1000, seconds=120)
    finally:
        for _, process in (first, second):
            stop(process)
    seen: list[int] = []
    for message in receiver.ids():
        if int(message.removeprefix("evt_")) not in seen:
            seen.append(int(message.removeprefix("evt_")))
    assert seen == list(range(1, 1001))


def _worker_pids(main: int) -> set[int]:
    """The serve process and its workers."""
    found = {main}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines())
        except (OSError, ValueError):
            continue
        if fields.get("PPid", "").strip() == str(main):
            found.add(int(status.parent.name))
    return found


def test_deliveries_by_outcome_and_each_subscriptions_backlog_show_in_the_metrics(
    database: str, tmp_path: Path, receivers: Callable[..., Receiver]
) -> None:
    token = add_token(database, add_user(database, "ana", "admin"), "admin")
    receiver = receivers([500])
    metrics_port = free_port()
    env = {
        "CATALOGO_WEBHOOKS_REDES_PERMITIDAS": "127.0.0.1",
        "CATALOGO_METRICS_PORT": str(metrics_port),
    }
    base, process = start_serving(database, tmp_path / "serve.log", env=env)
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    try:
        with http_client(base, headers=bearer(token), timeout=30) as client:
            made = client.post("/webhooks", json={"url": receiver.url, "eventos": ["criado"]})
            receiver.secret = made.json()["segredo"]
            client.post("/produtos", json={"nome": "Caneca", "preco": "1"})
        eventually(lambda: len(receiver.got) == 2, seconds=30)

        def counted() -> bool:
            samples = scrape(metrics)
            outcome = "catalogo_webhook_deliveries_total"
            return (
                samples.get((outcome, frozenset({"outcome": "falhou"}.items()))) == 1
                and samples.get((outcome, frozenset({"outcome": "entregue"}.items()))) == 1
                and (
                    "catalogo_webhook_oldest_undelivered_seconds",
                    frozenset({"webhook": "1"}.items()),
                )
                in samples
            )

        eventually(counted, seconds=40)  # the backlog is measured every 15 s
    finally:
        stop(process)
