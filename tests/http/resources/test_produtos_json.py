"""The product's URIs in JSON: representations, writes, and their answers."""

import re

import pytest
from starlette.testclient import TestClient

from tests.databases import Database
from tests.helpers import (
    JSON,
    Stored,
    count_products,
    create_via_form,
    create_via_json,
    stored,
)

CANECA = {"nome": "Caneca", "descricao": "Azul\nGrande", "preco": "29.90"}


class TestRepresentations:
    def test_a_product_is_json_with_an_exact_price_and_its_version(
        self, client: TestClient
    ) -> None:
        created = create_via_json(client, CANECA)
        response = client.get(f"/produtos/{created['id']}", headers=JSON)
        assert response.status_code == 200
        assert response.json() == {
            "id": created["id"],
            "codigo": None,
            "nome": "Caneca",
            "descricao": "Azul\nGrande",
            "preco": "29.90",
            "versao": 1,
            "criado_em": created["criado_em"],
            "atualizado_em": created["criado_em"],
        }
        assert re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z", str(created["criado_em"])
        )
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
        empty: dict[str, object] = {"produtos": [], "links": {}, "cursores": {}}
        assert client.get("/produtos", headers=JSON).json() == empty


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


class TestNamesThatLie:
    @pytest.mark.parametrize(
        ("nome", "mensagem"),
        [
            ("\u200b\u3164\u2800\u0301", "Preencha este campo."),
            ("Caneca \u200fazul", "muda a direção do texto (código U+200F)"),
            ("Caneca\u2029azul", "tem uma quebra de linha (código U+2029)"),
        ],
    )
    def test_a_name_that_lies_is_a_problem_keyed_by_the_field(
        self, client: TestClient, db: Database, nome: str, mensagem: str
    ) -> None:
        response = client.post("/produtos", json={**CANECA, "nome": nome}, headers=JSON)
        assert response.status_code == 422
        assert response.headers["content-type"] == "application/problem+json"
        errors = response.json()["errors"]
        assert list(errors) == ["produto.nome"] and mensagem in errors["produto.nome"]
        assert count_products(db) == 0

    def test_text_is_stored_and_answered_in_one_spelling(
        self, client: TestClient, db: Database
    ) -> None:
        created = create_via_json(
            client, CANECA, nome="Cafe\u0301\u2060", descricao="Pa\u0303o\u2028quente"
        )
        assert (created["nome"], created["descricao"]) == ("Caf\u00e9", "P\u00e3o\nquente")
        assert stored(db, int(str(created["id"]))) == Stored(
            "Caf\u00e9", "P\u00e3o\nquente", 2990, 1
        )


class TestCodigo:
    """The shop's own code: set, changed, kept, cleared, unique, and looked up by."""

    def test_a_code_is_set_kept_when_not_named_and_cleared_by_null(
        self, client: TestClient
    ) -> None:
        created = create_via_json(client, CANECA, codigo="  CAN-AZ-300 ")
        assert created["codigo"] == "CAN-AZ-300"
        url = f"/produtos/{created['id']}"
        kept = client.put(url, json={**CANECA, "nome": "Caneca nova"}, headers=JSON).json()
        assert (kept["nome"], kept["codigo"]) == ("Caneca nova", "CAN-AZ-300")
        changed = client.put(url, json={**CANECA, "codigo": "CAN-AZ-301"}, headers=JSON).json()
        assert changed["codigo"] == "CAN-AZ-301"
        cleared = client.put(url, json={**CANECA, "codigo": None}, headers=JSON).json()
        assert cleared["codigo"] is None
        assert client.get(url, headers=JSON).json()["codigo"] is None

    @pytest.mark.parametrize(
        ("codigo", "mensagem"),
        [
            ("x" * 61, "no máximo 60 caracteres"),
            ("CAN\nAZ", "numa linha só"),
            ("CAN\u202eAZ", "muda a direção do texto"),
            ("\u200b\u2060", "só tem caracteres invisíveis"),
            (300, "Deve ser texto."),
        ],
    )
    def test_a_code_that_breaks_a_rule_is_a_422_naming_the_field(
        self, client: TestClient, db: Database, codigo: object, mensagem: str
    ) -> None:
        response = client.post("/produtos", json={**CANECA, "codigo": codigo}, headers=JSON)
        assert response.status_code == 422
        errors = response.json()["errors"]
        assert list(errors) == ["produto.codigo"] and mensagem in errors["produto.codigo"]
        assert count_products(db) == 0

    def test_a_code_another_product_holds_is_a_422_that_names_it(
        self, client: TestClient, db: Database
    ) -> None:
        holder = create_via_json(client, CANECA, codigo="CAN-AZ-300")
        taken = client.post("/produtos", json={**CANECA, "codigo": "can-az-300"}, headers=JSON)
        assert taken.status_code == 422
        assert f"já é do produto {holder['id']}" in taken.json()["errors"]["produto.codigo"]
        client.delete(f"/produtos/{holder['id']}", headers=JSON)
        kept = client.post("/produtos", json={**CANECA, "codigo": "Can-Az-300"}, headers=JSON)
        message = kept.json()["errors"]["produto.codigo"]
        assert kept.status_code == 422 and "que está em Removidos" in message
        assert f"é do produto nº {holder['id']}" in message  # its restore: POST …/restauracao
        assert count_products(db) == 0
        restored = client.post(f"/produtos/{holder['id']}/restauracao", headers=JSON)
        assert restored.status_code == 200 and restored.json()["codigo"] == "CAN-AZ-300"

    def test_the_list_finds_products_by_code_exactly_and_blind_to_case(
        self, client: TestClient
    ) -> None:
        a = create_via_json(client, CANECA, codigo="CAN-AZ-300")
        b = create_via_json(client, CANECA, codigo="CAD-01")
        create_via_json(client, CANECA, codigo="CAN-AZ-3000")
        found = client.get("/produtos?codigo=can-az-300&codigo=CAD-01", headers=JSON).json()
        assert [p["id"] for p in found["produtos"]] == [b["id"], a["id"]]
        by_word = client.get("/produtos?q=cad-01", headers=JSON).json()
        assert [p["id"] for p in by_word["produtos"]] == [b["id"]]

    @pytest.mark.parametrize(
        "query",
        ["codigo=" + "&codigo=".join(f"C{n}" for n in range(101)), "codigo=", "codigo=a%0Ab"],
    )
    def test_a_malformed_code_in_the_list_is_a_400(self, client: TestClient, query: str) -> None:
        response = client.get(f"/produtos?{query}", headers=JSON)
        assert response.status_code == 400
        assert "codigo" in response.json()["detail"]
