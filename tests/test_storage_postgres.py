"""The PostgreSQL store: a server that stops, or a database removed, means a 503 at once, never
a hang or a 500, and the service comes back with the server, without a restart."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from catalogo import migrations
from catalogo.settings import Settings
from catalogo.storage import Storage, StorageUnavailable
from tests.databases import Database
from tests.helpers import JSON
from tests.processes import OwnPostgreSQL, free_port, http_client, serving
from tests.test_storage import run

pytestmark = pytest.mark.postgresql

FORM_BODY = {"produto.nome": "Caneca", "produto.preco": "29,90"}


@pytest.fixture
def own_database(own_postgresql: OwnPostgreSQL) -> Iterator[str]:
    """A migrated database on the server that tests may stop."""
    server = own_postgresql.server()
    url = server.create()
    migrations.upgrade(Settings(database_url=url))
    yield url
    server.drop(url)


def test_with_the_server_stopped_every_request_is_a_503_and_it_comes_back_by_itself(
    own_postgresql: OwnPostgreSQL, own_database: str, tmp_path: Path
) -> None:
    with (
        serving(own_database, tmp_path) as (base, _),
        http_client(base, timeout=20) as client,  # a hang fails the test
    ):
        assert client.post("/produtos", data=FORM_BODY).status_code == 303
        own_postgresql.stop()
        try:
            answers = [
                client.get("/produtos"),
                client.get("/produtos/1", headers=JSON),
                client.post("/produtos", data=FORM_BODY),
                client.put("/produtos/1", json={"nome": "X", "preco": "1"}, headers=JSON),
                client.post("/produtos/1", data={"_method": "DELETE"}),
                client.get("/readyz"),
            ]
            health = client.get("/healthz")
        finally:
            own_postgresql.start()
        for answer in answers:
            assert (answer.status_code, answer.headers.get("retry-after")) == (503, "5")
        assert "Serviço indisponível" in answers[0].text
        assert answers[1].headers["content-type"] == "application/problem+json"
        assert health.status_code == 200

        assert client.get("/readyz").status_code == 200
        assert client.post("/produtos", data=FORM_BODY).status_code == 303
        assert client.get("/produtos/2").status_code == 200
    db = Database(own_database)
    assert db.execute("SELECT nome FROM produtos ORDER BY id").fetchall() == [("Caneca",)] * 2
    db.close()


def test_a_database_removed_under_the_service_is_a_503_not_an_error(
    own_postgresql: OwnPostgreSQL, own_database: str, tmp_path: Path
) -> None:
    with (
        serving(own_database, tmp_path) as (base, _),
        http_client(base, timeout=20) as client,
    ):
        assert client.get("/produtos").status_code == 200
        own_postgresql.server().drop(own_database)  # its sessions are ended, then it is gone
        answers = [
            client.get("/produtos"),
            client.get("/readyz"),
            client.post("/produtos", data=FORM_BODY),
        ]
    assert [(a.status_code, a.headers.get("retry-after")) for a in answers] == [(503, "5")] * 3


def test_a_server_that_is_not_there_is_unavailable_not_an_error() -> None:
    async def test(storage: Storage) -> None:
        with pytest.raises(StorageUnavailable, match=r"ConnectionRefused|Connect call failed"):
            await storage.get(1)

    run(f"postgresql://postgres@127.0.0.1:{free_port()}/catalogo", test)
