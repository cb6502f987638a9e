"""Errors: a bug is a 500 with a code and no trace, a locked database a 503, and every error
reaches a JSON client as problem details."""

import json
import logging
import time

import httpx2
import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import (
    JSON,
    LOCK_TIMEOUT_MS,
    FailingStorage,
    count_products,
    storage_replaced,
)

CANECA = {"nome": "Caneca", "descricao": "Azul\nGrande", "preco": "29.90"}
FORM_BODY = {"produto.nome": "Caneca", "produto.preco": "30"}


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
        self, client: TestClient, db: Database, caplog: pytest.LogCaptureFixture
    ) -> None:
        with (
            db.locked(),  # another process holding the write lock past the app's lock timeout
            caplog.at_level(logging.WARNING, logger="catalogo"),
        ):
            started = time.monotonic()
            response = client.post("/produtos", data=FORM_BODY)
            waited = time.monotonic() - started
        assert response.status_code == 503
        assert response.headers["retry-after"] == "5"
        # The log names the database's own error, for the operator to look up.
        assert ("SQLITE_BUSY" if db.backend == "sqlite" else "LockNotAvailable") in caplog.text
        # It waited for the lock as long as the settings say (not the 5 s default), then gave up.
        assert LOCK_TIMEOUT_MS / 1000 <= waited < 5
        assert count_products(db) == 0
        assert client.get("/produtos").status_code == 200
        assert client.post("/produtos", data=FORM_BODY).status_code == 303


class TestProblems:
    def assert_problem(self, response: httpx2.Response, status: int) -> dict[str, object]:
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == "application/problem+json"
        body: dict[str, object] = response.json()
        assert body["status"] == status
        assert body["type"] == "about:blank"
        assert isinstance(body["title"], str) and body["title"]
        assert isinstance(body["detail"], str) and body["detail"]
        return body

    def test_invalid_fields_are_422_keyed_by_field(self, client: TestClient, db: Database) -> None:
        response = client.post(
            "/produtos", json={"nome": "", "descricao": 5, "preco": "1.234"}, headers=JSON
        )
        body = self.assert_problem(response, 422)
        errors = body["errors"]
        assert isinstance(errors, dict)
        assert set(errors) == {"produto.nome", "produto.descricao", "produto.preco"}
        assert "ambíguo" in errors["produto.preco"]
        assert count_products(db) == 0

    @pytest.mark.parametrize(
        ("body", "detail"),
        [
            (b"{", "JSON malformado"),
            (b"[1, 2]", "objeto JSON"),
            (b'{"nome": "a", "nome": "b", "preco": "1"}', "mais de uma vez"),
            (b'{"nome": "a", "preco": NaN}', "JSON malformado"),
            (b'{"nome": "\xff", "preco": "1"}', "UTF-8"),
            (b'{"nome": "a", "preco": "1", "versao": true}', "versão"),
            (b'{"nome": "a", "preco": "1", "versao": "1.5"}', "versão"),
            (b'{"nome": "a", "preco": "1", "versao": "' + b"9" * 5000 + b'"}', "versão"),
            (b'{"nome": "a", "preco": 1' + b"0" * 5000 + b"}", "JSON malformado"),
            (b'{"nome": "a", "preco": 0.5e1}', "expoente"),
            (b'{"nome": "a", "preco": 1.0E+1000000000000000000}', "expoente"),
        ],
    )
    def test_a_malformed_body_is_400(
        self, client: TestClient, db: Database, body: bytes, detail: str
    ) -> None:
        response = client.post(
            "/produtos", content=body, headers={**JSON, "content-type": "application/json"}
        )
        assert detail in str(self.assert_problem(response, 400)["detail"])
        assert count_products(db) == 0

    @pytest.mark.parametrize("nome", ["a\u0000b", "a\u001bb"])  # "\ud800": test_bodies.py
    def test_control_characters_in_json_strings_are_422(
        self, client: TestClient, nome: str
    ) -> None:
        body = json.dumps({"nome": nome, "preco": "1"}).encode()  # escaped as \u0000 etc.
        response = client.post(
            "/produtos", content=body, headers={**JSON, "content-type": "application/json"}
        )
        errors = self.assert_problem(response, 422)["errors"]
        assert isinstance(errors, dict) and "U+" in errors["produto.nome"]

    @pytest.mark.parametrize(
        ("method", "path", "headers", "content", "status"),
        [
            ("GET", "/produtos/999", {}, b"", 404),
            ("GET", "/nada", {}, b"", 404),
            ("POST", "/produtos/novo", {}, b"", 405),
            ("POST", "/produtos", {"content-type": "text/plain"}, b"x", 415),
            ("POST", "/produtos", {"sec-fetch-site": "cross-site"}, b"", 403),
            ("POST", "/produtos", {"content-type": "application/json"}, b"{" * 2_000_000, 413),
            ("GET", "/produtos?depois=x", {}, b"", 400),
            ("GET", "/produtos?depois=" + "9" * 5000, {}, b"", 400),
            ("PUT", "/produtos/1", {"if-match": '"9-json"'}, b"", 412),
            ("POST", "/produtos", {"content-type": "application/json"}, b'{"nome": ""}', 422),
        ],
    )
    def test_every_error_is_a_problem_for_json_clients(
        self,
        client: TestClient,
        method: str,
        path: str,
        headers: dict[str, str],
        content: bytes,
        status: int,
    ) -> None:
        client.post("/produtos", json=CANECA, headers=JSON)  # product 1, for the 412
        response = client.request(method, path, headers={**JSON, **headers}, content=content)
        body = self.assert_problem(response, status)
        assert body["instance"] == path.split("?")[0]
        assert response.headers["vary"] == "Accept"
        if status == 405:
            assert response.headers["allow"] == "GET, HEAD, OPTIONS"

    def test_a_client_that_accepts_neither_format_gets_the_406_page_not_a_problem(
        self, client: TestClient
    ) -> None:
        response = client.get("/produtos/novo", headers={"accept": "text/plain"})
        assert response.status_code == 406
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert response.headers["vary"] == "Accept"
        assert "<h1>Formato não disponível</h1>" in response.text
        assert "Formatos disponíveis: text/html." in response.text  # the form is a page only

    def test_a_locked_database_is_a_503_problem(self, client: TestClient, db: Database) -> None:
        with db.locked():
            started = time.monotonic()
            response = client.post("/produtos", json=CANECA, headers=JSON)
            waited = time.monotonic() - started
        self.assert_problem(response, 503)
        assert response.headers["retry-after"] == "5"
        # It waited for the lock as long as the settings say (not the 5 s default), then gave up.
        assert LOCK_TIMEOUT_MS / 1000 <= waited < 5
        assert count_products(db) == 0
        assert client.post("/produtos", json=CANECA, headers=JSON).status_code == 201
