"""What the tests share: acting as a browser or a script would, reading what was stored, and
starting threads together. Any httpx2 client will do: the in-process `TestClient` (a subclass)
or one talking to a real `catalogo serve` over a socket."""

import asyncio
import dataclasses
import html.parser
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, NamedTuple, TypeVar

import httpx2
import pytest

from catalogo.domain import contas
from catalogo.domain.contas import Papel
from catalogo.domain.historico import CLI
from catalogo.domain.produtos import Produto
from catalogo.domain.senhas import Passwords
from catalogo.http.app import Catalogo
from catalogo.runtime.settings import Settings
from catalogo.storage import Storage, open_storage
from tests.databases import Database

T = TypeVar("T")

JSON = {"accept": "application/json"}

# How long the app waits for another session's write lock before answering 503 (the `settings`
# fixture): short, so that the tests holding a lock (`db.locked()`) take milliseconds; long
# enough that the app's own writes, which hold a row for one statement, never wait that long
# on a busy machine.
LOCK_TIMEOUT_MS = 100

# Only one backend for a test that is about that backend; each keeps its mark, so that
# `-m "not postgresql"` leaves the PostgreSQL case out.
ONLY_SQLITE = pytest.mark.parametrize("backend", ["sqlite"])
ONLY_POSTGRESQL = pytest.mark.parametrize(
    "backend", [pytest.param("postgresql", marks=pytest.mark.postgresql)]
)


SENHA = "uma senha longa o bastante"


def add_user(database: str, nome: str = "maria", papel: Papel = "admin", senha: str = SENHA) -> int:
    """Creates a user as `catalogo usuarios criar` does, through a store of the test's own."""

    async def create() -> int:
        storage = await open_storage(Settings(database_url=database))
        try:
            hashed = await Passwords().hash(senha)
            return (await storage.create_user(nome, papel, hashed, time.time())).id
        finally:
            await storage.close()

    return asyncio.run(create())


def add_token(
    database: str, usuario_id: int, papel: Papel = "editor", expires_at: float | None = None
) -> str:
    """Creates a token as `catalogo tokens criar` does, and returns its secret."""
    secret = contas.new_token()

    async def create() -> None:
        storage = await open_storage(Settings(database_url=database))
        try:
            digest = contas.digest(secret)
            new = contas.NewToken(usuario_id, "testes", papel, digest, time.time(), expires_at)
            await storage.create_token(new)
        finally:
            await storage.close()

    asyncio.run(create())
    return secret


def bearer(secret: str) -> dict[str, str]:
    return {"authorization": f"Bearer {secret}", **JSON}


def sign_in(
    client: httpx2.Client, nome: str = "maria", senha: str = SENHA, proximo: str = ""
) -> httpx2.Response:
    """Signs in through /entrar as a browser does; the client keeps the cookie."""
    return client.post("/entrar", data={"nome": nome, "senha": senha, "proximo": proximo})


def post_form(client: httpx2.Client, nome: str = "Caneta", preco: str = "2,50") -> httpx2.Response:
    """Posts the new-product form as a browser does; the caller checks the answer."""
    return client.post("/produtos", data={"produto.nome": nome, "produto.preco": preco})


def create_via_form(
    client: httpx2.Client, db: Database, nome: str = "Caneta", preco: str = "2,50"
) -> int:
    """Adds a product through the form, as a browser does, and returns its id."""
    response = post_form(client, nome, preco)
    assert response.status_code == 303, response.text
    return int(db.execute("SELECT max(id) FROM produtos").fetchone()[0])


def create_via_json(
    client: httpx2.Client, product: Mapping[str, object], **changes: object
) -> dict[str, object]:
    """Adds `product` (with `changes`) as a script does, and returns the representation."""
    response = client.post("/produtos", json={**product, **changes}, headers=JSON)
    assert response.status_code == 201, response.text
    body: dict[str, object] = response.json()
    return body


class Stored(NamedTuple):
    """A product as the database holds it; the price in cents."""

    nome: str
    descricao: str
    centavos: int
    versao: int


def stored(db: Database, id: int) -> Stored | None:
    """What the database holds for live product `id`, or None: none, or removed."""
    row = db.execute(
        f"SELECT nome, descricao, {db.centavos}, versao FROM produtos "
        "WHERE id = ? AND removido_em IS NULL",
        (id,),
    ).fetchone()
    return None if row is None else Stored(*row)


def removed(db: Database, id: int) -> Stored | None:
    """What the database keeps of removed product `id`, or None if it is not removed."""
    row = db.execute(
        f"SELECT nome, descricao, {db.centavos}, versao FROM produtos "
        "WHERE id = ? AND removido_em IS NOT NULL",
        (id,),
    ).fetchone()
    return None if row is None else Stored(*row)


def stored_names(db: Database) -> list[str]:
    """The names of every live product, oldest first."""
    return [
        row[0]
        for row in db.execute("SELECT nome FROM produtos WHERE removido_em IS NULL ORDER BY id")
    ]


def count_products(db: Database) -> int:
    """Live products: removed ones are kept, but out of the catalog."""
    return int(db.execute("SELECT count(*) FROM produtos WHERE removido_em IS NULL").fetchone()[0])


def all_at_once(
    n: int, work: Callable[[int, Callable[[], None]], T], timeout: float = 60
) -> list[T]:
    """Runs `work(i, start)` for each i in range(n), each in a thread of its own, and returns
    what each returned, in the order of i. `start()` returns once all n threads have called it,
    so what each does next, they do together. An error in any thread is raised here (and frees
    the others from waiting); no thread outlives the call."""
    barrier = threading.Barrier(n)
    results: dict[int, T] = {}
    errors: list[BaseException] = []

    def start() -> None:
        barrier.wait(timeout)

    def run(i: int) -> None:
        try:
            results[i] = work(i, start)
        except BaseException as error:
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:  # the first that is not only another thread's abort of the barrier
        raise next(
            (e for e in errors if not isinstance(e, threading.BrokenBarrierError)), errors[0]
        )
    return [results[i] for i in range(n)]


def eventually(condition: Callable[[], bool], seconds: float = 30) -> None:
    """Waits for something a server, HAProxy or a pool does on its own schedule (HAProxy checks
    every second): a bounded poll of the condition itself, never a fixed wait."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


async def eventually_in_loop(condition: Callable[[], bool], seconds: float = 30) -> None:
    """As `eventually`, inside an event loop: polls without holding it up, so that the tasks
    that make the condition true go on meanwhile."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.01)


class FailingStorage:
    """Stands in for a storage whose every call fails with `error`: a database that does not
    answer (StorageUnavailable), or a bug (any other error), to reach the error handlers."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> object:
        async def fail(*args: object, **kwargs: object) -> None:
            raise self.error

        return fail


@contextmanager
def storage_replaced(app: Catalogo, stand_in: Any) -> Iterator[None]:
    """Within the block, the started `app` uses `stand_in` as its storage (a stand-in that
    answers what the test asks of storage, not all of it); then its own again (which the app
    closes when it stops)."""
    real = app.shared
    app.shared = dataclasses.replace(real, storage=stand_in)
    try:
        yield
    finally:
        app.shared = real


class _FormReader(html.parser.HTMLParser):
    """The fields the first matching form on a page would send, as a browser reads them off
    the page: a radio button only when checked."""

    def __init__(self, action: str, kind: str | None) -> None:
        super().__init__()
        self.action, self.kind, self.inside, self.done = action, kind, False, False
        self.fields = dict[str, str]()
        self.textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {k: v or "" for k, v in attrs}
        if tag == "form" and not self.done:
            self.inside = (
                named.get("action") == self.action
                and named.get("method") == "post"
                and (self.kind is None or self.kind in named.get("class", "").split())
            )
        elif self.inside and tag == "input" and "name" in named:
            if named.get("type") in ("radio", "checkbox") and "checked" not in named:
                return
            self.fields[named["name"]] = named.get("value", "")
        elif self.inside and tag == "textarea":
            self.textarea = named["name"]
            self.fields[self.textarea] = ""

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.fields[self.textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.inside:
            self.inside, self.done = False, True
        elif tag == "textarea":
            self.textarea = None


def form_on(page: str, action: str, kind: str | None = None) -> dict[str, str]:
    """The fields of the page's first POST form to `action` (of class `kind`, if given), as a
    browser would send them unchanged."""
    reader = _FormReader(action, kind)
    reader.feed(page)
    assert reader.fields, f"no POST form to {action} on the page"
    return reader.fields


# Every product of a big catalog holds each of these words, too short for any index to find:
# a list of them reads the whole catalog, however it is ordered; with a word no product holds,
# it finds nothing there. (The search the issue measured, at 200,000 products.)
EVERYWHERE = (
    "pr ro od du ut to de ex xe em mp pl lo nº ge er ra ad do po or ca at ta al og go se ee ed"
)
BIG = 20_000
BUDGET_MS = 10  # a CATALOGO_QUERY_TIMEOUT_MS that a list of EVERYWHERE in BIG runs past


def big_catalog(database: str, db: Database) -> None:
    """BIG products, each holding every word of EVERYWHERE; the planner's statistics taken."""

    async def seed() -> None:
        storage = await open_storage(Settings(database_url=database))
        produtos = (
            Produto(
                nome=f"Produto de exemplo nº {i}",
                descricao="Gerado por catalogo seed",
                preco=Decimal(i % 1000 + 1),
            )
            for i in range(BIG)
        )
        try:
            await storage.create_many(produtos, CLI)
        finally:
            await storage.close()

    asyncio.run(seed())
    db.execute("ANALYZE")


def with_storage(database: str, test: Callable[[Storage, Passwords], Awaitable[None]]) -> None:
    """`test` run on a store of `database` opened for it, closed after."""

    async def opened() -> None:
        storage = await open_storage(Settings(database_url=database))
        try:
            await test(storage, Passwords())
        finally:
            await storage.close()

    asyncio.run(opened())
