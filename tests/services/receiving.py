"""A webhook receiver on loopback for the delivery tests, and what they do with it."""

import ipaddress
import threading
from dataclasses import dataclass, field

from starlette.testclient import TestClient

from catalogo.domain.webhooks import EVENTOS
from tests.helpers import JSON

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


@dataclass
class Receiver:
    """Answers each delivery with the next of `answers` (then 200), after `delay` seconds;
    keeps what came, verified."""

    answers: list[int] = field(default_factory=list)
    delay: float = 0.0
    gate: threading.Event | None = None  # set: answers; until then each delivery waits
    secret: str = ""
    got: list[tuple[str, int, dict[str, object]]] = field(default_factory=list)  # id, status
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/eventos"

    def ids(self) -> list[str]:
        return [message for message, _, _ in self.got]


def subscribe(client: TestClient, receiver: Receiver, eventos: list[str] | None = None) -> int:
    made = client.post("/webhooks", json={"url": receiver.url, "eventos": eventos or list(EVENTOS)})
    assert made.status_code == 201, made.text
    receiver.secret = made.json()["segredo"]
    return int(made.json()["id"])


def create(client: TestClient, nome: str) -> int:
    made = client.post("/produtos", json={"nome": nome, "preco": "10"}, headers=JSON)
    assert made.status_code == 201, made.text
    return int(made.json()["id"])
