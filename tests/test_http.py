"""What runs before routing: body limit, strict form decoding, method override, guards, headers."""

import asyncio
import logging
import time
import urllib.parse
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from catalogo.app import create_app
from catalogo.settings import Settings
from tests.databases import Database
from tests.helpers import (
    LOCK_TIMEOUT_MS,
    FailingStorage,
    Stored,
    count_products,
    create_via_form,
    storage_replaced,
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


class TestBodies:
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

    @pytest.mark.parametrize(
        "body",
        [b"produto.nome=%FF&produto.preco=1", b"produto.nome=\xff&produto.preco=1", b"%C3=1"],
    )
    def test_a_form_that_is_not_utf8_is_400(
        self, client: TestClient, db: Database, body: bytes
    ) -> None:
        response = client.post("/produtos", content=body, headers=URLENCODED)
        assert response.status_code == 400
        assert "não é UTF-8 válido" in response.text
        assert count_products(db) == 0

    def test_a_multipart_field_that_is_not_utf8_is_400(
        self, client: TestClient, db: Database
    ) -> None:
        response = client.post(
            "/produtos", files={"produto.nome": (None, b"\xff\xfe"), "produto.preco": (None, "1")}
        )
        assert response.status_code == 400
        assert count_products(db) == 0

    def test_a_broken_multipart_body_is_400(self, client: TestClient) -> None:
        response = client.post(
            "/produtos",
            content=b"--XX\r\nContent-Disposition: form-data\r\n\r\nabc",
            headers={"content-type": "multipart/form-data"},
        )
        assert response.status_code == 400
        assert "Formulário malformado" in response.text

    def test_a_file_upload_is_refused(self, client: TestClient, db: Database) -> None:
        response = client.post(
            "/produtos",
            data=FORM_BODY,
            files={"produto.descricao": ("a.txt", b"texto", "text/plain")},
        )
        assert response.status_code == 400
        assert "não aceita arquivos" in response.text
        assert count_products(db) == 0

    @pytest.mark.parametrize(
        "content_type",
        [
            "application/xml",
            "text/plain",
            "application/x-www-form-urlencoded; charset=latin-1",
            "application/json; charset=latin-1",
        ],
    )
    def test_a_body_that_is_neither_utf8_form_data_nor_json_is_415(
        self, client: TestClient, db: Database, content_type: str
    ) -> None:
        response = client.post(
            "/produtos",
            content=b"produto.nome=x&produto.preco=1",
            headers={"content-type": content_type},
        )
        assert response.status_code == 415
        assert count_products(db) == 0

    def test_a_post_with_no_body_at_all_is_415(self, client: TestClient) -> None:
        assert client.post("/produtos").status_code == 415

    @pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\x85"])
    def test_control_characters_are_422_and_name_the_character(
        self, client: TestClient, db: Database, char: str
    ) -> None:
        response = client.post(
            "/produtos", data={"produto.nome": f"a{char}b", "produto.preco": "1"}
        )
        assert response.status_code == 422
        assert f"U+{ord(char):04X}" in response.text
        assert count_products(db) == 0

    def test_too_many_fields_is_400(self, client: TestClient) -> None:
        body = "&".join(f"f{n}=1" for n in range(1001)).encode()
        assert client.post("/produtos", content=body, headers=URLENCODED).status_code == 400


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


class TestServerFailures:
    def test_an_unexpected_error_is_a_500_page_with_a_code_that_is_in_the_log(
        self, settings: Settings, caplog: pytest.LogCaptureFixture
    ) -> None:
        app = create_app(settings)
        with (
            TestClient(app, raise_server_exceptions=False) as client,
            storage_replaced(app, FailingStorage(RuntimeError("secret detail"))),
            caplog.at_level(logging.ERROR, logger="catalogo"),
        ):
            response = client.get("/produtos/1")
        assert response.status_code == 500
        assert "secret detail" not in response.text and "Traceback" not in response.text
        code = response.text.split("<code>")[1].split("</code>")[0]
        assert code in caplog.text and "secret detail" in caplog.text
        assert response.headers["x-content-type-options"] == "nosniff"

    def test_a_locked_database_is_a_503_with_retry_after(
        self, client: TestClient, db: Database
    ) -> None:
        with db.locked():  # another process holding the write lock past the app's lock timeout
            started = time.monotonic()
            response = client.post("/produtos", data=FORM_BODY)
            waited = time.monotonic() - started
        assert response.status_code == 503
        assert response.headers["retry-after"] == "5"
        # It waited for the lock as long as the settings say (not the 5 s default), then gave up.
        assert LOCK_TIMEOUT_MS / 1000 <= waited < 5
        assert count_products(db) == 0
        assert client.get("/produtos").status_code == 200
        assert client.post("/produtos", data=FORM_BODY).status_code == 303


def multipart(parts: list[tuple[str, bytes]], nameless: bool) -> bytes:
    """A multipart body with boundary XX, sometimes with a part that lacks its name."""
    body = b"".join(
        b'--XX\r\nContent-Disposition: form-data; name="'
        + name.encode()
        + b'"\r\n\r\n'
        + value
        + b"\r\n"
        for name, value in parts
    )
    if nameless:
        body += b"--XX\r\nContent-Disposition: form-data\r\n\r\nx\r\n"
    return body + b"--XX--\r\n"


class TestNoInputGetsA500:
    """Whatever a client sends, the answer is a page with a status below 500."""

    PATHS = ("/", "/produtos", "/produtos/novo", "/produtos/1", "/produtos/0", "/x")
    TYPES = (
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=utf-8",
        "multipart/form-data",
        "multipart/form-data; boundary=XX",
        "multipart/form-data; boundary=",
        "application/json",
        "text/plain; charset=\xff",
        "",
    )
    FIELDS = ("_method", "produto.nome", "produto.descricao", "produto.preco", "produto.id")
    ODD_HEADER_VALUES = (
        "http://[",
        "null",
        "http://testserver",
        "same-origin",
        "cross-site",
        "aviso=removido%3Ax",
        "aviso=%FF%FE",
        "aviso=adicionado:",
        "²",
        "-1",
        "99999999999999999999",
        "testserver:99999",
    )

    @hypothesis_settings(
        max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]),
        path=st.one_of(
            st.sampled_from(PATHS),
            st.text(max_size=30).map(lambda t: "/produtos/" + urllib.parse.quote(t)),
        ),
        content_type=st.sampled_from(TYPES),
        extra=st.dictionaries(
            st.sampled_from(["origin", "sec-fetch-site", "cookie", "host", "content-length"]),
            st.one_of(st.sampled_from(ODD_HEADER_VALUES), st.text(max_size=20)),
        ),
        body=st.one_of(
            st.binary(max_size=300),
            st.dictionaries(st.sampled_from(FIELDS), st.text(max_size=40)).map(
                lambda d: urllib.parse.urlencode(d).encode()
            ),
            st.builds(
                multipart,
                st.lists(st.tuples(st.sampled_from(FIELDS), st.binary(max_size=20)), max_size=4),
                st.booleans(),
            ),
        ),
    )
    def test_random_requests_never_get_a_server_error(
        self,
        client: TestClient,
        method: str,
        path: str,
        content_type: str,
        extra: dict[str, str],
        body: bytes,
    ) -> None:
        headers = {k.encode(): v.encode("utf-8", "replace") for k, v in extra.items()}
        if content_type:
            headers[b"content-type"] = content_type.encode("latin-1")
        response = client.request(method, path, content=body, headers=headers)
        assert response.status_code < 500, response.text
