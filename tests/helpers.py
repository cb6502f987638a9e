"""Small helpers the tests share: acting as a browser would, and reading what was stored."""

from starlette.testclient import TestClient

from tests.databases import Database


def criar(client: TestClient, db: Database, nome: str = "Caneta", preco: str = "2,50") -> int:
    """Adds a product through the form, as a browser does, and returns its id."""
    response = client.post("/produtos", data={"produto.nome": nome, "produto.preco": preco})
    assert response.status_code == 303, response.text
    return int(db.execute("SELECT max(id) FROM produtos").fetchone()[0])


def contar(db: Database) -> int:
    return int(db.execute("SELECT count(*) FROM produtos").fetchone()[0])
