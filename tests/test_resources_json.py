"""JSON on the same URIs as the pages: negotiation, representations, problem details."""

import json
import time

import httpx2
import pytest
from starlette.testclient import TestClient

from tests.databases import Database
from tests.helpers import (
    JSON,
    LOCK_TIMEOUT_MS,
    Stored,
    count_products,
    create_via_form,
    create_via_json,
    stored,
)

CANECA = {"nome": "Caneca", "descricao": "Azul\nGrande", "preco": "29.90"}


class TestNegotiation:
    @pytest.mark.parametrize(
        ("accept", "expected"),
        [
            (None, "text/html"),
            ("*/*", "text/html"),
            ("text/html", "text/html"),
            ("application/json", "application/json"),
            ("application/*", "application/json"),
            ("application/json;q=0.5, text/html", "text/html"),
            ("text/html;q=0.4, application/json;q=0.8", "application/json"),
            ("text/html;q=0, */*", "application/json"),
            ("text/*;q=0.3, */*;q=0.2", "text/html"),
            ("application/json;q=abc, text/html;q=0.1", "text/html"),
        ],
    )
    def test_accept_chooses_the_representation(
        self, client: TestClient, accept: str | None, expected: str
    ) -> None:
        headers = {"accept": accept} if accept is not None else {}
        response = client.get("/produtos", headers=headers)
        assert response.status_code == 200
        assert response.headers["content-type"].split(";")[0] == expected
        assert response.headers["vary"] == "Accept"

    def test_a_client_that_sends_json_gets_json_back_without_asking(
        self, client: TestClient
    ) -> None:
        response = client.post("/produtos", json=CANECA, headers={"accept": "*/*"})
        assert response.status_code == 201
        assert response.json()["nome"] == "Caneca"

    @pytest.mark.parametrize("accept", ["image/png", "text/html;q=0, application/json;q=0"])
    def test_an_accept_that_rules_out_both_is_406(self, client: TestClient, accept: str) -> None:
        response = client.get("/produtos", headers={"accept": accept})
        assert response.status_code == 406
        assert "text/html, application/json" in response.text

    def test_a_406_for_a_problem_reader_is_a_problem(self, client: TestClient) -> None:
        response = client.get("/produtos", headers={"accept": "application/problem+json"})
        assert response.status_code == 406
        assert response.headers["content-type"] == "application/problem+json"


class TestRepresentations:
    def test_a_product_is_json_with_an_exact_price_and_its_version(
        self, client: TestClient
    ) -> None:
        created = create_via_json(client, CANECA)
        response = client.get(f"/produtos/{created['id']}", headers=JSON)
        assert response.status_code == 200
        assert response.json() == {
            "id": created["id"],
            "nome": "Caneca",
            "descricao": "Azul\nGrande",
            "preco": "29.90",
            "versao": 1,
        }
        assert response.headers["etag"] == '"1-json"'

    def test_the_list_has_the_products_and_the_paging_links(self, client: TestClient) -> None:
        ids = [create_via_json(client, CANECA, nome=f"P{n}")["id"] for n in range(5)]
        response = client.get("/produtos", headers=JSON)
        body = response.json()
        assert [p["id"] for p in body["produtos"]] == ids[::-1][:3]
        assert body["links"] == {"next": f"/produtos?depois={ids[2]}"}
        assert response.headers["link"] == f'</produtos?depois={ids[2]}>; rel="next"'
        seguinte = client.get(body["links"]["next"], headers=JSON).json()
        assert [p["id"] for p in seguinte["produtos"]] == ids[1::-1]
        assert seguinte["links"] == {"prev": "/produtos"}

    def test_an_empty_list_is_an_empty_array(self, client: TestClient) -> None:
        assert client.get("/produtos", headers=JSON).json() == {"produtos": [], "links": {}}


class TestWrites:
    def test_create_answers_201_with_location_etag_and_the_product(
        self, client: TestClient, db: Database
    ) -> None:
        response = client.post("/produtos", json=CANECA, headers=JSON)
        assert response.status_code == 201
        body = response.json()
        assert response.headers["location"] == f"/produtos/{body['id']}"
        assert response.headers["etag"] == '"1-json"'
        assert body["preco"] == "29.90"
        assert db.execute(f"SELECT nome, {db.centavos} FROM produtos").fetchall() == [
            ("Caneca", 2990)
        ]

    @pytest.mark.parametrize(
        ("preco", "gravado"),
        [(19.99, "19.99"), (0.1, "0.10"), (12, "12.00"), ("1.234,56", "1234.56"), (1e2, "100.00")],
    )
    def test_a_price_may_be_a_number_or_text_and_stays_exact(
        self, client: TestClient, preco: object, gravado: str
    ) -> None:
        assert create_via_json(client, CANECA, preco=preco)["preco"] == gravado

    def test_update_answers_200_with_the_new_version(self, client: TestClient) -> None:
        created = create_via_json(client, CANECA)
        response = client.put(
            f"/produtos/{created['id']}", json={**CANECA, "nome": "Caneca nova"}, headers=JSON
        )
        assert response.status_code == 200
        assert response.json()["nome"] == "Caneca nova"
        assert response.json()["versao"] == 2
        assert response.headers["etag"] == '"2-json"'

    def test_delete_answers_204(self, client: TestClient, db: Database) -> None:
        created = create_via_json(client, CANECA)
        response = client.delete(f"/produtos/{created['id']}", headers=JSON)
        assert response.status_code == 204
        assert response.content == b""
        assert count_products(db) == 0

    def test_an_id_in_a_json_body_is_ignored(self, client: TestClient, db: Database) -> None:
        other = create_via_form(client, db, "Outro")
        created = create_via_json(client, CANECA)
        body = {**CANECA, "nome": "Caneca nova", "id": other}
        response = client.put(f"/produtos/{created['id']}", json=body, headers=JSON)
        assert response.status_code == 200
        assert response.json()["id"] == created["id"]
        assert db.execute("SELECT nome FROM produtos WHERE id = ?", (other,)).fetchone() == (
            "Outro",
        )
        assert stored(db, other) == Stored("Outro", "", 250, 1)
        assert stored(db, int(str(created["id"]))) == Stored("Caneca nova", "Azul\nGrande", 2990, 2)

    def test_options_lists_the_methods(self, client: TestClient) -> None:
        response = client.options("/produtos")
        assert response.status_code == 204
        assert response.headers["allow"] == "GET, HEAD, POST, OPTIONS"


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

    @pytest.mark.parametrize("nome", ["a\u0000b", "\ud800", "a\u001bb"])
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
