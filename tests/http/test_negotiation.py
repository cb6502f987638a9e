"""Negotiation: Accept, and the body's own type, choose HTML or JSON on every URI."""

import pytest
from starlette.testclient import TestClient

from tests.databases import Database
from tests.helpers import add_token, add_user, create_via_form

PROBLEM = "application/problem+json"

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

    @pytest.mark.parametrize(
        ("accept", "expected"),
        [
            (None, "application/json"),
            ("*/*", "application/json"),
            ("application/json", "application/json"),
            ("text/html", "text/html"),
            ("text/html, */*;q=0.8", "text/html"),
        ],
    )
    def test_a_request_with_a_bearer_token_is_a_program_answered_json_unless_it_names_html(
        self, client: TestClient, database: str, db: Database, accept: str | None, expected: str
    ) -> None:
        id = create_via_form(client, db)  # before the first user: the catalog is open
        token = add_token(database, add_user(database))
        headers = {"authorization": f"Bearer {token}"}
        if accept is not None:
            headers["accept"] = accept
        for response in (
            client.get("/produtos", headers=headers),
            client.get(f"/produtos/{id}", headers=headers),
            client.get("/produtos/999", headers=headers),
        ):
            media = response.headers["content-type"].split(";")[0]
            program = expected == "application/json"
            assert media == (PROBLEM if response.status_code == 404 and program else expected)
        removed = client.delete(f"/produtos/{id}", headers=headers)
        assert removed.status_code == (204 if expected == "application/json" else 303)

    def test_a_bad_token_with_no_accept_gets_its_401_as_a_problem(self, client: TestClient) -> None:
        response = client.get("/produtos", headers={"authorization": "Bearer cat_nope"})
        assert response.status_code == 401
        assert response.headers["content-type"] == PROBLEM

    @pytest.mark.parametrize("accept", ["image/png", "text/html;q=0, application/json;q=0"])
    def test_an_accept_that_rules_out_both_is_406(self, client: TestClient, accept: str) -> None:
        response = client.get("/produtos", headers={"accept": accept})
        assert response.status_code == 406
        assert "text/html, application/json" in response.text

    def test_a_406_for_a_problem_reader_is_a_problem(self, client: TestClient) -> None:
        response = client.get("/produtos", headers={"accept": "application/problem+json"})
        assert response.status_code == 406
        assert response.headers["content-type"] == "application/problem+json"
