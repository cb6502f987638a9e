"""Health checks for load balancers: /healthz (the process) and /readyz (the database too)."""

from starlette.testclient import TestClient

from tests.databases import Database


def test_healthz_answers_without_the_database(client: TestClient, db: Database) -> None:
    db.execute("DROP TABLE alembic_version")
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers["cache-control"] == "no-store"


def test_readyz_is_200_on_a_current_schema(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "schema": "0003"}


def test_readyz_is_503_on_an_outdated_schema_and_says_what_to_do(
    client: TestClient, db: Database
) -> None:
    db.execute("UPDATE alembic_version SET version_num = '0001'")
    response = client.get("/readyz", headers={"accept": "application/json"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert "catalogo migrate" in response.json()["detail"]


def test_readyz_is_503_on_a_database_never_migrated(client: TestClient, db: Database) -> None:
    db.execute("DROP TABLE alembic_version")
    response = client.get("/readyz", headers={"accept": "application/json"})
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert "está vazio" in response.json()["detail"]
    assert "catalogo migrate" in response.json()["detail"]
