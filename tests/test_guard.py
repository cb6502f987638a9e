"""The guard, before routing: method override, the body limit, cross-site writes, security
headers."""

import asyncio
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from catalogo.app import create_app
from catalogo.settings import Settings
from tests.databases import Database
from tests.helpers import (
    Stored,
    count_products,
    create_via_form,
    stored,
)

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

        scope = {
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
                (b"content-length", b"2000000"),
                (b"content-type", b"application/x-www-form-urlencoded"),
            ],
        }
        asyncio.run(create_app(settings)(scope, receive, send))  # type: ignore[arg-type]
        assert sent[0]["status"] == 413
        assert received == []

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
