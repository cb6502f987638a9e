"""The guard, before routing: method override, the body limit and deadline, the Host
allow-list, cross-site writes, security headers."""

import asyncio
import dataclasses
import http.client
import json
import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import (
    JSON,
    ONLY_SQLITE,
    Stored,
    count_products,
    create_via_form,
    stored,
    stored_names,
)
from tests.processes import address, errors_logged, exchange, serving

URLENCODED = {"content-type": "application/x-www-form-urlencoded"}
FORM_BODY = {"produto.nome": "Caneca", "produto.preco": "30"}
AS_CREATED = Stored("Caneta", "", 250, 1)  # what create_via_form stores
AS_UPDATED = Stored("Caneca", "", 3000, 2)  # the same after an update with FORM_BODY


class TestMethodOverride:
    @pytest.mark.parametrize("value", ["PUT", "put", "Put"])
    def test_method_put_in_a_form_post_becomes_put_in_any_case(
        self, client: TestClient, db: Database, value: str
    ) -> None:
        id = create_via_form(client, db)
        response = client.post(f"/produtos/{id}", data={**FORM_BODY, "_method": value})
        assert response.status_code == 303
        assert stored(db, id) == AS_UPDATED

    def test_method_in_a_multipart_post_works_too(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        response = client.post(f"/produtos/{id}", files={"_method": (None, "delete")})
        assert response.status_code == 303
        assert stored(db, id) is None

    def test_method_in_the_query_string_is_ignored(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        response = client.post(f"/produtos/{id}?_method=DELETE", data=FORM_BODY)
        assert response.status_code == 405
        assert stored(db, id) == AS_CREATED

    def test_method_on_a_method_other_than_post_is_ignored(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        response = client.put(f"/produtos/{id}", data={**FORM_BODY, "_method": "DELETE"})
        assert response.status_code == 303
        assert stored(db, id) == AS_UPDATED

    def test_method_in_a_body_that_is_not_a_form_is_ignored(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        response = client.post(
            f"/produtos/{id}", content=b"_method=DELETE", headers={"content-type": "text/plain"}
        )
        assert response.status_code == 405
        assert stored(db, id) == AS_CREATED

    @pytest.mark.parametrize("value", ["PATCH", "POST", "GET", "", "DELETEX"])
    def test_any_other_value_is_a_400_naming_the_accepted_ones(
        self, client: TestClient, db: Database, value: str
    ) -> None:
        id = create_via_form(client, db)
        response = client.post(f"/produtos/{id}", data={"_method": value})
        assert response.status_code == 400
        assert "_method aceita apenas PUT ou DELETE" in response.text
        assert stored(db, id) == AS_CREATED

    def test_two_different_values_are_refused(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        response = client.post(
            f"/produtos/{id}", content=b"_method=PUT&_method=DELETE", headers=URLENCODED
        )
        assert response.status_code == 400
        assert "«_method» veio mais de uma vez" in response.text
        assert stored(db, id) == AS_CREATED

    def test_override_to_a_method_the_path_lacks_is_405(self, client: TestClient) -> None:
        response = client.post("/produtos", data={"_method": "PUT"})
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, HEAD, POST, OPTIONS"


def _form_post(length: bytes) -> dict[str, object]:
    """A form's POST to /produtos as a server hands it to the app, declaring `length`."""
    return {
        "type": "http",
        "method": "POST",
        "path": "/produtos",
        "raw_path": b"/produtos",
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "http_version": "1.1",
        "headers": [
            (b"host", b"testserver"),
            (b"content-length", length),
            (b"content-type", b"application/x-www-form-urlencoded"),
        ],
    }


class TestBodyLimit:
    def test_a_body_over_the_limit_is_413(self, client: TestClient, db: Database) -> None:
        body = b"produto.nome=x&produto.preco=1&produto.descricao=" + b"a" * (1024 * 1024)
        response = client.post("/produtos", content=body, headers=URLENCODED)
        assert response.status_code == 413
        assert "limite de 1048576 bytes" in response.text
        assert count_products(db) == 0

    def test_a_declared_length_over_the_limit_is_refused_before_reading_the_body(
        self, settings: Settings
    ) -> None:
        received: list[object] = []
        sent: list[dict[str, object]] = []

        async def receive() -> dict[str, object]:
            received.append(1)
            return {"type": "http.request", "body": b"x" * 65536, "more_body": True}

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        scope = _form_post(b"2000000")
        asyncio.run(create_app(settings)(scope, receive, send))  # type: ignore[arg-type]
        assert sent[0]["status"] == 413
        assert received == []

    def test_a_body_with_all_its_declared_length_is_whole_without_waiting_for_its_end(
        self, settings: Settings, db: Database
    ) -> None:
        """Granian sends a body's end as a message of its own: not waited for once the body has
        its Content-Length. A body without one is read to its end, as before."""
        body = b"produto.nome=Caneca&produto.preco=30"
        sent: list[dict[str, object]] = []

        messages = iter([{"type": "http.request", "body": body, "more_body": True}])

        async def receive() -> dict[str, object]:
            message = next(messages, None)
            if message is None:
                await asyncio.Event().wait()  # the body's end, never sent
            assert message is not None
            return message

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        scope = _form_post(b"%d" % len(body))

        async def answered() -> None:
            app = create_app(settings)
            async with app.router.lifespan_context(app):
                await asyncio.wait_for(app(scope, receive, send), 10)  # type: ignore[arg-type]

        asyncio.run(answered())
        assert sent[0]["status"] == 303
        assert stored_names(db) == ["Caneca"]

    def test_a_chunked_body_over_the_limit_is_413_too(
        self, client: TestClient, db: Database
    ) -> None:
        def chunks() -> Iterator[bytes]:
            yield b"produto.nome=x&produto.preco=1&produto.descricao="
            for _ in range(20):
                yield b"a" * 65536

        response = client.post("/produtos", content=chunks(), headers=URLENCODED)
        assert response.status_code == 413
        assert count_products(db) == 0

    def test_a_bad_content_length_is_400(self, client: TestClient) -> None:
        headers = {**URLENCODED, "content-length": "abc"}
        response = client.post("/produtos", content=b"", headers=headers)
        assert response.status_code == 400


class TestCrossOriginProtection:
    @pytest.mark.parametrize(
        "headers",
        [
            {"sec-fetch-site": "cross-site"},
            {"sec-fetch-site": "same-site"},
            {"sec-fetch-site": "cross-site", "origin": "http://testserver"},
            {"origin": "http://evil.example"},
            {"origin": "http://testserver.evil.example"},
            {"origin": "null"},
        ],
    )
    def test_writes_from_another_site_are_403_and_change_nothing(
        self, client: TestClient, db: Database, headers: dict[str, str]
    ) -> None:
        id = create_via_form(client, db)
        response = client.post(f"/produtos/{id}", data={"_method": "DELETE"}, headers=headers)
        assert response.status_code == 403
        assert "outro site" in response.text
        assert client.post("/produtos", data=FORM_BODY, headers=headers).status_code == 403
        assert count_products(db) == 1

    @pytest.mark.parametrize(
        "headers",
        [
            {},
            {"sec-fetch-site": "same-origin"},
            {"sec-fetch-site": "none"},
            {"origin": "http://testserver"},
            {"sec-fetch-site": "same-origin", "origin": "http://evil.example"},
        ],
    )
    def test_same_origin_and_non_browser_writes_pass(
        self, client: TestClient, db: Database, headers: dict[str, str]
    ) -> None:
        assert client.post("/produtos", data=FORM_BODY, headers=headers).status_code == 303
        assert count_products(db) == 1

    def test_reads_from_another_site_are_allowed(self, client: TestClient) -> None:
        response = client.get("/produtos", headers={"sec-fetch-site": "cross-site"})
        assert response.status_code == 200


class TestSecurityHeaders:
    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("GET", "/produtos"),
            ("GET", "/produtos/novo"),
            ("GET", "/nada"),
            ("PUT", "/produtos"),
            ("GET", "/static/catalogo.css"),
            ("POST", "/produtos"),
        ],
    )
    def test_every_response_carries_them(self, client: TestClient, method: str, path: str) -> None:
        headers = client.request(method, path).headers
        csp = headers["content-security-policy"]
        for directive in (
            "default-src 'none'",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
            "script-src 'self'",
        ):
            assert directive in csp
        assert "unsafe-inline" not in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"

    def test_pages_have_no_inline_script_or_style(self, client: TestClient) -> None:
        html = client.get("/produtos/novo").text
        assert "<script>" not in html and "<style" not in html and " style=" not in html
        assert " on" not in html.replace(" onde", "")  # no onclick= and the like


class TestWholePaths:
    """A route matches its whole path or nothing: no second address for a product."""

    @pytest.mark.parametrize("tail", ["%0A", "%0D%0A", "%00", "%09", "%1F", "%7F"])
    def test_a_path_with_a_control_character_reads_and_changes_nothing(
        self, client: TestClient, db: Database, tail: str
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        assert client.get(f"/produtos/{id}{tail}").status_code == 404
        form = {"produto.nome": "Outra", "produto.preco": "5"}
        assert client.put(f"/produtos/{id}{tail}", data=form).status_code == 404
        assert (
            client.post(f"/produtos/{id}{tail}", data={**form, "_method": "PUT"}).status_code == 404
        )
        assert client.delete(f"/produtos/{id}{tail}").status_code == 404
        assert client.post(f"/produtos{tail}", data=form).status_code == 404
        assert stored(db, id) == Stored("Caneca", "", 1000, 1) and count_products(db) == 1
        answer = client.get(f"/produtos/{id}{tail}", headers={"Accept": "application/json"})
        assert answer.headers["content-type"] == "application/problem+json"


@ONLY_SQLITE
class TestAllowedHosts:
    """DNS rebinding: a page on a domain its owner points at 127.0.0.1 sends that domain as
    Host, and the same domain as Origin, so only Host itself can tell it from our pages."""

    @pytest.fixture
    def laptop(self, settings: Settings) -> Iterator[TestClient]:
        """The app as a fresh install has it: CATALOGO_ALLOWED_HOSTS unset."""
        defaults = dataclasses.replace(settings, allowed_hosts=Settings.allowed_hosts)
        with TestClient(create_app(defaults), follow_redirects=False) as client:
            yield client

    @pytest.mark.parametrize(
        "host",
        ["localhost", "localhost:8000", "LOCALHOST", "localhost.", "127.0.0.1:8000", "[::1]:8000"],
    )
    def test_a_fresh_install_answers_to_the_names_of_this_machine(
        self, laptop: TestClient, host: str
    ) -> None:
        assert laptop.get("/produtos", headers={"host": host}).status_code == 200

    @pytest.mark.parametrize(
        "host", ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.2"]
    )
    def test_any_other_name_is_400_for_reads_and_writes_and_changes_nothing(
        self, laptop: TestClient, db: Database, host: str
    ) -> None:
        origin = {"host": host, "origin": f"http://{host}"}
        response = laptop.get("/produtos", headers=origin)
        assert response.status_code == 400
        assert "CATALOGO_ALLOWED_HOSTS" in response.text
        assert laptop.post("/produtos", data=FORM_BODY, headers=origin).status_code == 400
        assert count_products(db) == 0

    def test_the_refusal_names_the_host_for_a_program_too(self, laptop: TestClient) -> None:
        response = laptop.get("/produtos", headers={**JSON, "host": "evil.example"})
        assert response.headers["content-type"] == "application/problem+json"
        assert "«evil.example»" in response.json()["detail"]

    @pytest.mark.parametrize(
        "host", ["a b", "localhost:80:80", "localhost:x", "[::1", "ló.example", "a" * 8000]
    )
    def test_a_host_that_is_no_name_is_400(self, laptop: TestClient, host: str) -> None:
        response = laptop.get("/produtos", headers={b"host": host.encode()})
        assert response.status_code == 400
        assert "não é um nome nem um endereço" in response.text

    def test_two_host_headers_are_400(self, laptop: TestClient) -> None:
        response = laptop.get("/produtos", headers=[("host", "localhost"), ("host", "localhost")])
        assert response.status_code == 400
        assert "mais de um cabeçalho Host" in response.text

    @pytest.mark.parametrize(
        ("allowed", "host", "status"),
        [
            ((".example.com",), "catalogo.example.com", 200),
            ((".example.com",), "example.com", 200),
            ((".example.com",), "badexample.com", 400),
            (("catalogo.example.com",), "outro.example.com", 400),
            (("*",), "anything.example", 200),
        ],
    )
    def test_a_deployment_lists_its_own_names(
        self, settings: Settings, allowed: tuple[str, ...], host: str, status: int
    ) -> None:
        app = create_app(dataclasses.replace(settings, allowed_hosts=allowed))
        with TestClient(app) as client:
            assert client.get("/produtos", headers={"host": host}).status_code == status


GET_HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
# The headers and 10 bytes of a 100-byte form: what an idle upload sends before it waits.
STALLED = (
    b"POST /produtos HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nproduto.no"
)
BODY_TIMEOUT_S = 0.4


def _upload(size: int) -> bytes:
    return (
        b"POST /produtos HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: %d\r\n\r\n" % size
    )


@ONLY_SQLITE
class TestOverTheWire:
    """What only a real server shows: bodies that arrive slowly or never end, broken framing,
    a client that hangs up, Host as HTTP/1.0 and 1.1 clients send it."""

    @pytest.fixture
    def server(self, database: str, tmp_path: Path) -> Iterator[str]:
        env = {"CATALOGO_BODY_TIMEOUT_MS": str(int(BODY_TIMEOUT_S * 1000))}
        with serving(database, tmp_path, env=env) as (base, _):
            yield base

    @pytest.fixture(autouse=True)
    def no_error_logged(self, tmp_path: Path) -> Iterator[None]:
        """None of this is the server's fault: it logs no error and no trace."""
        yield
        assert errors_logged(tmp_path / "serve.log") == []

    def test_a_body_that_stops_arriving_is_408_and_the_connection_closed(
        self, server: str, db: Database
    ) -> None:
        answer = exchange(server, STALLED, 5.0)
        assert answer.status == 408
        assert "devagar demais" in answer.body and "Nada foi gravado" in answer.body
        assert answer.seconds >= BODY_TIMEOUT_S and answer.closed
        assert count_products(db) == 0

    def test_a_body_trickling_under_the_minimum_rate_is_408(
        self, server: str, db: Database
    ) -> None:
        trickle: list[bytes | float] = [part for _ in range(40) for part in (b"produto.no", 0.05)]
        answer = exchange(server, _upload(400), *trickle)
        assert answer.status == 408
        assert count_products(db) == 0

    def test_a_slow_body_that_keeps_the_minimum_rate_is_received(
        self, server: str, db: Database
    ) -> None:
        body = b"produto.preco=1&produto.nome=" + b"x" * 150 + b"&produto.descricao=" + b"d" * 1800
        pause = BODY_TIMEOUT_S * 0.75
        parts: list[bytes | float] = [body[:1000], pause, body[1000:1500], pause, body[1500:]]
        answer = exchange(server, _upload(len(body)), *parts)
        assert answer.status == 303 and answer.seconds > BODY_TIMEOUT_S
        assert stored_names(db) == ["x" * 150]

    def test_no_body_may_take_longer_than_six_timeouts_however_fast_it_trickles(
        self, server: str, db: Database
    ) -> None:
        parts: list[bytes | float] = [
            part for _ in range(60) for part in (b"d" * 1000, BODY_TIMEOUT_S / 4)
        ]
        answer = exchange(server, _upload(60_000), *parts)
        assert answer.status == 408
        assert 6 * BODY_TIMEOUT_S <= answer.seconds < 15 * BODY_TIMEOUT_S
        assert count_products(db) == 0

    def test_writes_one_after_another_on_one_connection_are_each_answered(
        self, server: str, db: Database
    ) -> None:
        """A body read by its Content-Length leaves the connection ready for the next request,
        with or without a body of its own."""
        host, port = address(server)
        connection = http.client.HTTPConnection(host, port, timeout=10)
        try:
            for nome in ("Caneca", "Caneta", "Lápis"):
                body = urllib.parse.urlencode({"produto.nome": nome, "produto.preco": "2,50"})
                connection.request("POST", "/produtos", body, URLENCODED)
                answer = connection.getresponse()
                answer.read()
                assert answer.status == 303
            connection.request("GET", "/produtos", headers=JSON)
            listed = connection.getresponse()
            assert [p["nome"] for p in json.loads(listed.read())["produtos"]] == [
                "Lápis",
                "Caneta",
                "Caneca",
            ]
        finally:
            connection.close()

    def test_broken_chunked_framing_is_400_and_writes_nothing(
        self, server: str, db: Database
    ) -> None:
        head = b"POST /produtos HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        answer = exchange(
            server, head + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
        )
        assert answer.status == 400
        assert "malformado (chunked)" in answer.body
        assert count_products(db) == 0

    def test_a_client_that_hangs_up_mid_body_is_not_a_server_error(
        self, server: str, db: Database
    ) -> None:
        for _ in range(20):
            with socket.create_connection(address(server)) as connection:
                connection.sendall(STALLED)
        assert exchange(server, GET_HEALTHZ).status == 200
        assert count_products(db) == 0

    @pytest.mark.parametrize(
        ("request_line", "status"),
        [(b"GET /healthz HTTP/1.0\r\n\r\n", 200), (b"GET /healthz HTTP/1.1\r\n\r\n", 400)],
    )
    def test_only_http_1_0_may_leave_host_out(
        self, server: str, request_line: bytes, status: int
    ) -> None:
        answer = exchange(server, request_line)
        assert answer.status == status
        if status == 400:
            assert "Falta o cabeçalho Host" in answer.body

    def test_an_empty_host_is_400_as_a_missing_one(self, server: str) -> None:
        answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost:\r\n\r\n")
        assert answer.status == 400

    def test_two_host_headers_are_400_over_the_wire(self, server: str) -> None:
        twice = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: 127.0.0.1\r\n\r\n"
        assert exchange(server, twice).status == 400
