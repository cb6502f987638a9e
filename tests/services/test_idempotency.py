"""Safe retries of creation with Idempotency-Key: the first answer again, never a second product."""

import time
from collections.abc import Callable

import httpx2
import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import all_at_once, count_products

JSON = {"accept": "application/json"}
CANECA = {"nome": "Caneca", "preco": "10"}


def post(client: TestClient, key: str, **campos: str) -> httpx2.Response:
    return client.post(
        "/produtos", json={**CANECA, **campos}, headers={**JSON, "idempotency-key": key}
    )


def test_a_retry_with_the_same_key_and_body_returns_the_first_answer_and_creates_nothing(
    client: TestClient, db: Database
) -> None:
    headers = {**JSON, "idempotency-key": '"8e03978e-40d5"'}
    first = client.post("/produtos", json=CANECA, headers=headers)
    again = client.post("/produtos", json=CANECA, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again.headers["location"] == first.headers["location"]
    assert again.headers["idempotent-replayed"] == "true"
    assert count_products(db) == 1


def test_the_same_key_with_another_body_is_422(client: TestClient, db: Database) -> None:
    headers = {**JSON, "idempotency-key": "k1"}
    assert client.post("/produtos", json=CANECA, headers=headers).status_code == 201
    other = client.post("/produtos", json={**CANECA, "preco": "11"}, headers=headers)
    assert other.status_code == 422
    assert other.headers["content-type"] == "application/problem+json"
    assert count_products(db) == 1


def test_equal_values_written_differently_are_the_same_request(
    client: TestClient, db: Database
) -> None:
    headers = {**JSON, "idempotency-key": "k2"}
    client.post("/produtos", json={"nome": "Caf\u00e9", "preco": 10}, headers=headers)
    again = client.post(
        "/produtos", json={"preco": "10,00", "nome": " Cafe\u0301\u200b"}, headers=headers
    )
    assert again.status_code == 201
    assert count_products(db) == 1


def test_a_retry_while_the_first_is_still_running_is_409(client: TestClient, db: Database) -> None:
    client.post("/produtos", json=CANECA, headers={**JSON, "idempotency-key": "k3"})
    db.execute("UPDATE idempotency_keys SET produto_id = NULL, created_at = ?", (time.time(),))
    response = client.post("/produtos", json=CANECA, headers={**JSON, "idempotency-key": "k3"})
    assert response.status_code == 409
    assert "em andamento" in response.json()["detail"]
    assert count_products(db) == 1


def test_a_claim_left_by_a_crashed_request_is_taken_over_after_a_minute(
    client: TestClient, db: Database
) -> None:
    db.execute(
        "INSERT INTO idempotency_keys (key, fingerprint, created_at) VALUES ('k4', 'x', ?)",
        (time.time() - 61,),
    )
    response = client.post("/produtos", json=CANECA, headers={**JSON, "idempotency-key": "k4"})
    assert response.status_code == 201
    assert count_products(db) == 1


def test_keys_are_kept_24_hours(client: TestClient, db: Database) -> None:
    post(client, "velha")
    post(client, "quase")
    db.execute("UPDATE idempotency_keys SET created_at = created_at - 86401 WHERE key = 'velha'")
    db.execute("UPDATE idempotency_keys SET created_at = created_at - 82800 WHERE key = 'quase'")
    assert post(client, "quase").headers["idempotent-replayed"] == "true"  # 23 hours: kept
    assert sorted(r[0] for r in db.execute("SELECT key FROM idempotency_keys")) == ["quase"]
    assert "idempotent-replayed" not in post(client, "velha").headers  # 24 hours: gone
    assert count_products(db) == 3


def test_the_same_key_asking_for_another_format_is_another_request(
    client: TestClient, db: Database
) -> None:
    assert post(client, "k8").status_code == 201
    form = client.post(
        "/produtos",
        data={"produto.nome": "Caneca", "produto.preco": "10"},
        headers={"idempotency-key": "k8"},
    )
    assert form.status_code == 422
    assert count_products(db) == 1


def test_two_keys_in_one_request_are_400(client: TestClient, db: Database) -> None:
    response = client.post(
        "/produtos",
        json=CANECA,
        headers=[
            ("accept", "application/json"),
            ("idempotency-key", "a"),
            ("idempotency-key", "b"),
        ],
    )
    assert response.status_code == 400
    assert count_products(db) == 0


def test_without_the_header_every_post_adds_a_product(client: TestClient, db: Database) -> None:
    for _ in range(3):
        client.post("/produtos", json=CANECA, headers=JSON)
    assert count_products(db) == 3


@pytest.mark.parametrize("key", ["", " ", "a b", "á", "x" * 256, '"', 'a"b', '""', "a\\b"])
def test_a_malformed_key_is_400(client: TestClient, db: Database, key: str) -> None:
    response = client.post(
        "/produtos",
        json=CANECA,
        headers={b"accept": b"application/json", b"idempotency-key": key.encode()},
    )
    assert response.status_code == 400
    assert count_products(db) == 0


def test_an_invalid_body_does_not_use_up_the_key(client: TestClient, db: Database) -> None:
    headers = {**JSON, "idempotency-key": "k5"}
    assert client.post("/produtos", json={"nome": ""}, headers=headers).status_code == 422
    assert client.post("/produtos", json=CANECA, headers=headers).status_code == 201


def test_a_browser_form_with_a_key_gets_its_303_again(client: TestClient, db: Database) -> None:
    form = {"produto.nome": "Caneca", "produto.preco": "10"}
    first = client.post("/produtos", data=form, headers={"idempotency-key": "k6"})
    again = client.post("/produtos", data=form, headers={"idempotency-key": "k6"})
    assert first.status_code == again.status_code == 303
    assert again.headers["location"] == "/produtos"
    assert count_products(db) == 1


def test_simultaneous_retries_create_exactly_one_product(client: TestClient, db: Database) -> None:
    def retry(_: int, start: Callable[[], None]) -> int:
        start()
        return post(client, "k7").status_code

    statuses = all_at_once(10, retry)
    assert set(statuses) <= {201, 409} and 201 in statuses
    assert count_products(db) == 1


def before_each_insert(db: Database, statement: str) -> None:
    """Runs `statement` (SQL that both databases read alike) before the app inserts a product:
    a way to make the write fail, or to change the key's row, between its steps."""
    if db.backend == "sqlite":
        db.execute(f"CREATE TRIGGER meanwhile BEFORE INSERT ON produtos BEGIN {statement}; END")
        return
    db.execute(
        "CREATE FUNCTION meanwhile() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$ BEGIN {statement}; RETURN NEW; END $$"
    )
    db.execute(
        "CREATE TRIGGER meanwhile BEFORE INSERT ON produtos "
        "FOR EACH ROW EXECUTE FUNCTION meanwhile()"
    )


def test_a_creation_that_fails_releases_its_key_so_a_retry_runs_at_once(
    settings: Settings, db: Database
) -> None:
    refuse = (
        "SELECT RAISE(ABORT, 'refused')" if db.backend == "sqlite" else "RAISE EXCEPTION 'refused'"
    )
    before_each_insert(db, refuse)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        assert post(client, "k9").status_code == 500
        assert db.execute("SELECT count(*) FROM idempotency_keys").fetchone() == (0,)
        db.execute("DROP TRIGGER meanwhile" + ("" if db.backend == "sqlite" else " ON produtos"))
        retry = post(client, "k9")
    assert retry.status_code == 201 and "idempotent-replayed" not in retry.headers
    assert count_products(db) == 1


def test_a_claim_taken_over_while_creating_is_409_and_creates_nothing(
    client: TestClient, db: Database
) -> None:
    before_each_insert(db, "UPDATE idempotency_keys SET created_at = created_at + 1")
    response = post(client, "k10")
    assert response.status_code == 409
    assert "em andamento" in response.json()["detail"]
    assert count_products(db) == 0


def test_a_browser_reusing_a_key_with_other_values_gets_the_error_page(
    client: TestClient, db: Database
) -> None:
    form = {"produto.nome": "Caneca", "produto.preco": "10"}
    assert client.post("/produtos", data=form, headers={"idempotency-key": "k"}).status_code == 303
    other = client.post(
        "/produtos", data={**form, "produto.preco": "11"}, headers={"idempotency-key": "k"}
    )
    assert other.status_code == 422
    assert other.headers["content-type"] == "text/html; charset=utf-8"
    assert "<h1>Chave de idempotência já usada</h1>" in other.text
    assert count_products(db) == 1
