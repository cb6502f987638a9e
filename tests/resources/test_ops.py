"""Health checks for load balancers: /healthz (the process) and /readyz (the database too)."""

import httpx2
from starlette.testclient import TestClient

from catalogo.app import create_app
from catalogo.settings import Settings
from catalogo.storage import StorageUnavailable
from tests.databases import Database
from tests.helpers import FailingStorage, storage_replaced


def assert_healthy(response: httpx2.Response) -> None:
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers["cache-control"] == "no-store"


def test_healthz_answers_without_the_database(settings: Settings, db: Database) -> None:
    """With the schema gone, then with a database that answers nothing at all (every storage
    call fails, as when the server is down): /readyz says so each time, and /healthz is 200."""
    app = create_app(settings)
    with TestClient(app) as client:
        db.execute("DROP TABLE alembic_version")
        assert client.get("/readyz").status_code == 503
        assert_healthy(client.get("/healthz"))
        down = FailingStorage(StorageUnavailable("the database does not answer"))
        with storage_replaced(app, down):
            assert client.get("/readyz").status_code == 503
            assert client.get("/produtos").status_code == 503
            assert_healthy(client.get("/healthz"))


def test_readyz_is_200_on_a_current_schema(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "schema": "0008"}


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
