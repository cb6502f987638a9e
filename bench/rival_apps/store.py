"""The data layer both Python rivals share, as a developer would write it with the standard
library: SQLite in WAL mode with `synchronous=FULL` (as durable as catalogo), one connection
per thread, the price as exact text."""

import sqlite3
import threading
from decimal import Decimal, InvalidOperation
from typing import Any

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS produtos (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "nome TEXT NOT NULL, descricao TEXT NOT NULL DEFAULT '', preco TEXT NOT NULL)"
)
PAGE = 50  # products on a page of the list, as catalogo shows them
FIELDS = ("nome", "descricao", "preco")


class Database(threading.local):
    """A connection per thread: FastAPI runs `def` handlers on a pool of them."""

    def __init__(self, path: str) -> None:
        self.connection = connect(path)


def connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute(SCHEMA)
    connection.row_factory = sqlite3.Row
    return connection


def fields_of(values: Any, prefix: str = "produto.") -> dict[str, str]:
    """The product's fields from a form (`produto.nome`, ...) or a JSON object (`nome`, ...)."""
    return {name: str(values.get(prefix + name, "") or "").strip() for name in FIELDS}


def check(fields: dict[str, str]) -> dict[str, str]:
    """What is wrong with the fields, by field (the name is required, the price positive); a
    valid price is rewritten in `fields` as it is stored, "12.50"."""
    found = {}
    if not 1 <= len(fields["nome"]) <= 200:
        found["nome"] = "Preencha o nome (até 200 caracteres)."
    try:
        preco = Decimal(fields["preco"].replace(".", "").replace(",", ".") or "x")
        if preco <= 0:
            raise InvalidOperation
        fields["preco"] = str(preco.quantize(Decimal("0.01")))
    except InvalidOperation:
        found["preco"] = "Informe um preço maior que zero, como 12,50."
    return found


def one(connection: sqlite3.Connection, id: int) -> dict[str, Any] | None:
    row = connection.execute("SELECT * FROM produtos WHERE id = ?", (id,)).fetchone()
    return None if row is None else dict(row)


def first_page(connection: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = connection.execute("SELECT * FROM produtos ORDER BY id DESC LIMIT ?", (PAGE,))
    return [dict(row) for row in rows]


def create(connection: sqlite3.Connection, fields: dict[str, str]) -> int:
    cursor = connection.execute(
        "INSERT INTO produtos (nome, descricao, preco) VALUES (?, ?, ?)",
        (fields["nome"], fields["descricao"], fields["preco"]),
    )
    return int(cursor.lastrowid or 0)


def update(connection: sqlite3.Connection, id: int, fields: dict[str, str]) -> bool:
    cursor = connection.execute(
        "UPDATE produtos SET nome = ?, descricao = ?, preco = ? WHERE id = ?",
        (fields["nome"], fields["descricao"], fields["preco"], id),
    )
    return cursor.rowcount == 1


def delete(connection: sqlite3.Connection, id: int) -> bool:
    return connection.execute("DELETE FROM produtos WHERE id = ?", (id,)).rowcount == 1
