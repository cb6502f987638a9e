"""The access log and the request id: one JSON line per request on the real server's stderr,
the id taken from X-Request-ID only when it is a plain token, and the id on every error."""

import asyncio
import datetime
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.testclient import TestClient
from starlette.types import Message, Receive, Scope, Send

from catalogo.http.app import create_app
from catalogo.http.middleware.outermost import Handlers, Outermost
from catalogo.runtime.settings import Settings
from tests.helpers import JSON, ONLY_SQLITE, FailingStorage, storage_replaced
from tests.processes import http_client, start_serving, stop

FIELDS = {
    "time",
    "level",
    "logger",
    "message",
    "request_id",
    "method",
    "route",
    "path",
    "status",
    "duration_ms",
    "bytes",
}
MADE_ID = re.compile(r"[0-9a-f]{16}-[0-9a-f]+")  # a worker's random prefix and a count
BAD_IDS = [
    "",
    "a b",
    'a"b',
    "a\\b",
    "a{b}",
    "é",
    "x" * 129,
    "<script>",
]


def access_lines(log: Path) -> list[dict[str, Any]]:
    """The access-log lines in a server's output (Granian's own lines are plain text)."""
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    return [line for line in lines if line["logger"] == "catalogo.access"]


def line_of(log: Path, request_id: str) -> dict[str, Any]:
    """The line of the request with that id: written in the turn of the event loop after its
    answer, so it is waited for (a bounded poll)."""
    deadline = time.monotonic() + 10
    while True:
        found = [line for line in access_lines(log) if line["request_id"] == request_id]
        if found or time.monotonic() > deadline:
            assert len(found) == 1, log.read_text()
            return found[0]
        time.sleep(0.01)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One real `catalogo serve` on a SQLite file, for the tests that read its stderr."""
    folder = tmp_path_factory.mktemp("accesslog")
    log = folder / "serve.log"
    base, process = start_serving(f"sqlite:///{folder / 'catalogo.db'}", log)
    try:
        yield base, log
    finally:
        stop(process)


class TestTheLine:
    def test_each_request_is_one_json_line_on_stderr_with_the_documented_fields(
        self, server: tuple[str, Path]
    ) -> None:
        base, log = server
        with http_client(base) as client:
            created = client.post("/produtos", json={"nome": "Caneca", "preco": "9.90"})
            path = created.headers["location"]
            before = datetime.datetime.now(datetime.UTC)
            started = time.monotonic()
            response = client.get(path, headers={"x-request-id": "balancer-42"})
            took_ms = (time.monotonic() - started) * 1000
        assert response.status_code == 200
        assert response.headers["x-request-id"] == "balancer-42"
        line = line_of(log, "balancer-42")
        assert set(line) == FIELDS
        assert line["level"] == "info" and line["message"] == "request"
        assert (line["method"], line["route"], line["path"]) == ("GET", "/produtos/{id}", path)
        assert (line["status"], line["bytes"]) == (200, len(response.content))
        assert 0 < line["duration_ms"] <= took_ms
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["time"])
        logged = datetime.datetime.fromisoformat(line["time"])
        assert (
            before - datetime.timedelta(seconds=1)
            <= logged
            <= before + datetime.timedelta(seconds=10)
        )

    def test_the_method_is_the_one_sent_and_the_route_its_template(
        self, server: tuple[str, Path]
    ) -> None:
        base, log = server
        with http_client(base) as client:
            created = client.post("/produtos", json={"nome": "Lápis", "preco": "1"})
            path = created.headers["location"]
            removal = client.post(path, data={"_method": "DELETE"})
            unknown = client.get("/nada/aqui")
        assert (removal.status_code, unknown.status_code) == (303, 404)
        line = line_of(log, removal.headers["x-request-id"])
        assert (line["method"], line["route"], line["status"]) == ("POST", "/produtos/{id}", 303)
        assert line["bytes"] == 0
        line = line_of(log, unknown.headers["x-request-id"])
        assert (line["route"], line["path"], line["status"]) == (None, "/nada/aqui", 404)

    @pytest.mark.parametrize("sent", ["a b", 'a"b', "x" * 129])
    def test_an_id_that_is_not_a_plain_token_is_replaced_in_the_answer_and_the_line(
        self, server: tuple[str, Path], sent: str
    ) -> None:
        base, log = server
        with http_client(base) as client:
            response = client.get("/healthz", headers={"x-request-id": sent})
        made = response.headers["x-request-id"]
        assert made != sent and MADE_ID.fullmatch(made)
        assert line_of(log, made)["path"] == "/healthz"

    def test_what_a_client_puts_in_the_path_cannot_start_a_line_of_its_own(
        self, server: tuple[str, Path]
    ) -> None:
        base, log = server
        forged = '"}\n{"logger": "catalogo.access", "status": 200'
        with http_client(base) as client:
            response = client.get("/produtos/" + forged.replace("\n", "%0A"))
        assert response.status_code == 404
        line = line_of(log, response.headers["x-request-id"])
        assert line["path"] == "/produtos/" + forged
        assert not any(
            line.get("status") == 200 and "path" not in line for line in access_lines(log)
        )

    @pytest.mark.parametrize(
        ("content_type", "body"),
        [
            ("multipart/form-data", b"x"),
            ("multipart/form-data; boundary=x", b"--x\r\nContent-Disposition[: form-data\r\n\r\nv"),
        ],
    )
    def test_a_broken_multipart_body_writes_only_json_lines(
        self, server: tuple[str, Path], content_type: str, body: bytes
    ) -> None:
        """python-multipart warned in plain text ("No boundary given") before it raised; the
        400 says why already, and its line carries the request id."""
        base, log = server
        written = log.stat().st_size
        with http_client(base) as client:
            response = client.post(
                "/produtos",
                content=body,
                headers={"content-type": content_type, "x-request-id": f"multipart-{len(body)}"},
            )
        assert response.status_code == 400 and "Formulário malformado" in response.text
        assert line_of(log, f"multipart-{len(body)}")["status"] == 400
        lines = log.read_bytes()[written:].decode().splitlines()
        assert [line for line in lines if not line.startswith("{")] == []


async def _last_resort(request: Request, error: Exception) -> Response:
    return PlainTextResponse("falhou", 500)


def _answer(status: int, body: bytes = b"") -> Any:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})

    return app


def _call(
    layer: Outermost,
    path: str = "/x",
    headers: list[tuple[bytes, bytes]] | None = None,
    sent: list[Message] | None = None,
) -> list[Message]:
    """Sends one request through the layer, and lets the event loop turn once more so that
    the layer writes its line; returns what the layer sent (also into `sent`, if given)."""
    sent = [] if sent is None else sent
    scope = {"type": "http", "method": "GET", "path": path, "headers": headers or []}

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    async def run() -> None:
        try:
            await layer(scope, receive, send)
        finally:
            await asyncio.sleep(0)

    asyncio.run(run())
    return sent


class TestTheLayer:
    @pytest.mark.parametrize("sent", BAD_IDS)
    def test_a_forged_id_never_reaches_the_answer_or_the_line(
        self, sent: str, capfd: pytest.CaptureFixture[str]
    ) -> None:
        messages = _call(
            Outermost(_answer(200), True, _last_resort, ()),
            headers=[(b"x-request-id", sent.encode())],
        )
        echoed = dict(messages[0]["headers"])[b"x-request-id"].decode()
        assert echoed != sent and MADE_ID.fullmatch(echoed)
        assert json.loads(capfd.readouterr().err)["request_id"] == echoed

    def test_two_ids_are_neither_used(self, capfd: pytest.CaptureFixture[str]) -> None:
        headers = [(b"x-request-id", b"one"), (b"x-request-id", b"two")]
        messages = _call(Outermost(_answer(200), True, _last_resort, ()), headers=headers)
        assert MADE_ID.fullmatch(dict(messages[0]["headers"])[b"x-request-id"].decode())

    @pytest.mark.parametrize(
        "sent", ["8f0c2c1e-5d55-4c7e-9a51-2f8f7a9d2b61", "a.b:c_d-e", "x" * 128]
    )
    def test_a_plain_token_is_kept(self, sent: str, capfd: pytest.CaptureFixture[str]) -> None:
        messages = _call(
            Outermost(_answer(200), True, _last_resort, ()),
            headers=[(b"x-request-id", sent.encode())],
        )
        assert dict(messages[0]["headers"])[b"x-request-id"] == sent.encode()
        assert json.loads(capfd.readouterr().err)["request_id"] == sent

    def test_an_error_before_an_answer_gets_the_last_resort_answer_with_its_id_then_goes_on(
        self, capfd: pytest.CaptureFixture[str]
    ) -> None:
        async def failing(scope: Scope, receive: Receive, send: Send) -> None:
            raise RuntimeError("bug")

        sent: list[Message] = []
        with pytest.raises(RuntimeError):  # for the server to see, as Starlette's own does
            _call(Outermost(failing, True, _last_resort, ()), sent=sent)
        assert sent[0]["status"] == 500 and b"x-request-id" in dict(sent[0]["headers"])
        line = json.loads(capfd.readouterr().err)
        assert (line["status"], line["bytes"]) == (500, len("falhou"))

    def test_an_error_a_handler_knows_gets_its_answer_and_goes_no_further(
        self, capfd: pytest.CaptureFixture[str]
    ) -> None:
        async def missing(scope: Scope, receive: Receive, send: Send) -> None:
            raise HTTPException(404)

        async def not_found(request: Request, error: Exception) -> Response:
            return PlainTextResponse("não há", 404)

        sent: list[Message] = []
        handlers: Handlers = {HTTPException: not_found}
        _call(Outermost(missing, True, _last_resort, (), handlers=handlers), sent=sent)
        assert sent[0]["status"] == 404 and b"x-request-id" in dict(sent[0]["headers"])
        assert json.loads(capfd.readouterr().err)["status"] == 404

    def test_an_error_after_the_answer_began_is_not_answered_again(
        self, capfd: pytest.CaptureFixture[str]
    ) -> None:
        async def failing(scope: Scope, receive: Receive, send: Send) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            raise RuntimeError("bug")

        sent: list[Message] = []
        with pytest.raises(RuntimeError):
            _call(Outermost(failing, True, _last_resort, ()), sent=sent)
        assert [message["type"] for message in sent] == ["http.response.start"]
        assert json.loads(capfd.readouterr().err)["status"] == 200

    def test_a_path_that_is_not_text_is_still_logged(
        self, capfd: pytest.CaptureFixture[str]
    ) -> None:
        _call(Outermost(_answer(404), True, _last_resort, ()), path="/produtos/\ud800")
        assert json.loads(capfd.readouterr().err)["path"] == "/produtos/\\ud800"

    def test_off_writes_no_line_and_keeps_the_id(self, capfd: pytest.CaptureFixture[str]) -> None:
        messages = _call(Outermost(_answer(200, b"ok"), False, _last_resort, ()))
        assert MADE_ID.fullmatch(dict(messages[0]["headers"])[b"x-request-id"].decode())
        assert capfd.readouterr().err == ""


class TestTheIdOnErrors:
    def test_an_error_page_shows_the_id(self, client: TestClient) -> None:
        response = client.get("/produtos/999", headers={"x-request-id": "pedido-7"})
        assert response.status_code == 404
        assert response.headers["x-request-id"] == "pedido-7"
        assert "Código da requisição: <code>pedido-7</code>" in response.text

    @pytest.mark.parametrize(
        ("method", "path", "body", "status"),
        [
            ("GET", "/produtos/999", None, 404),
            ("POST", "/produtos", {"nome": ""}, 422),
            ("PUT", "/produtos/1", {"nome": "X", "preco": "1", "versao": 99}, 409),
        ],
    )
    def test_a_problem_carries_the_id(
        self, client: TestClient, method: str, path: str, body: object, status: int
    ) -> None:
        client.post("/produtos", json={"nome": "Caneca", "preco": "1"}, headers=JSON)
        response = client.request(
            method, path, json=body, headers={**JSON, "x-request-id": "pedido-8"}
        )
        assert response.status_code == status
        assert response.json()["request_id"] == "pedido-8"

    @ONLY_SQLITE
    def test_a_500_shows_the_id_that_its_header_and_its_json_log_line_carry(
        self, settings: Settings, capfd: pytest.CaptureFixture[str]
    ) -> None:
        app = create_app(settings)
        with (
            TestClient(app, raise_server_exceptions=False) as client,
            storage_replaced(app, FailingStorage(RuntimeError("secret detail"))),
        ):
            page = client.get("/produtos/1", headers={"x-request-id": "pedido-9"})
            problem = client.get("/produtos/1", headers={**JSON, "x-request-id": "pedido-10"})
        assert (page.status_code, page.headers["x-request-id"]) == (500, "pedido-9")
        assert "Código da requisição: <code>pedido-9</code>" in page.text
        assert (problem.status_code, problem.json()["request_id"]) == (500, "pedido-10")
        lines = [json.loads(line) for line in capfd.readouterr().err.splitlines()]
        errors = [line for line in lines if line["logger"] == "catalogo"]
        assert [line["request_id"] for line in errors] == ["pedido-9", "pedido-10"]
        assert errors[0]["level"] == "error"
        assert errors[0]["message"] == "request pedido-9 failed: GET /produtos/1"
        assert "RuntimeError: secret detail" in errors[0]["exception"]
