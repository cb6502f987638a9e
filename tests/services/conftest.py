"""The services' tests' fixtures: webhook receivers, and deliveries that come within a second."""

import http.server
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from standardwebhooks import Webhook as Verifier
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from catalogo.services import delivery
from tests.helpers import add_token, add_user, bearer
from tests.services.receiving import LOOPBACK, Receiver


@pytest.fixture
def receivers() -> Iterator[Callable[..., Receiver]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def make(answers: list[int] | None = None, delay: float = 0.0) -> Receiver:
        receiver = Receiver(list(answers or []), delay)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                sent = Verifier(receiver.secret).verify(body, dict(self.headers))
                time.sleep(receiver.delay)
                if receiver.gate is not None:
                    receiver.gate.wait(60)
                status = receiver.answers.pop(0) if receiver.answers else 200
                receiver.got.append((self.headers["webhook-id"], status, sent))
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"recebido")

            def log_message(self, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        receiver.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return receiver

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery, "POLL_S", 0.05)
    monkeypatch.setattr("catalogo.domain.webhooks.SCHEDULE_S", (0.3, 0.6, 0.9))


@pytest.fixture
def admin(database: str, settings: Settings, fast: None) -> Iterator[TestClient]:
    token = add_token(database, add_user(database, "ana", "admin"), "admin")
    allowed = Settings(**{**vars(settings), "webhook_networks": LOOPBACK})
    with TestClient(create_app(allowed), headers=bearer(token)) as client:
        yield client
