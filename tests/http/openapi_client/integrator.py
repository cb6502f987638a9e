"""What an integrator does with a client generated from catalogo's /openapi.json, using that
client alone: no header of its own but the token, no URL taken apart. Run by
tests/http/test_openapi_client.py against a served catalog, after `mypy --strict` has checked it
against the client generated for the same mode.

    python integrator.py BASE_URL [TOKEN]

Without a token it runs as anyone on a fresh install (`off`, no user yet), asking for JSON by
`Accept` as a program without a token must: `ANONYMOUS`, which mypy is told with
--always-true or --always-false, so that each client is checked as its mode types it.
Exits 1 with what went wrong.
"""

import sys
from http import HTTPStatus
from typing import NoReturn

from catalogo_client import AuthenticatedClient, Client
from catalogo_client.api.historico import eventos, historico_do_produto
from catalogo_client.api.produtos import (
    atualizar_produto,
    criar_produto,
    listar_produtos,
    obter_produto,
    remover_produto,
    restaurar_produto,
)
from catalogo_client.models import (
    Cursor,
    CursorDaLista,
    EventoTipo,
    ListarProdutosOrdem,
    Problem,
    Produto,
    ProdutoComVersao,
    ProdutoEntrada,
)
from catalogo_client.types import UNSET, Unset

ANONYMOUS = len(sys.argv) < 3
if ANONYMOUS:  # noqa: SIM108 - a type alias, of which mypy reads one branch
    Connection = Client  # what every operation takes on an open catalog
else:
    Connection = AuthenticatedClient  # what writes take once tokens are needed
NAMES = ["Caneca azul", "Abajur", "Mesa de pinho", "Caneca verde", "Banco alto"]


def fail(what: str) -> NoReturn:
    sys.exit(f"integrator: {what}")


def product(parsed: object, what: str) -> Produto:
    if not isinstance(parsed, Produto):
        fail(f"{what}: expected a product, got {parsed!r}")
    return parsed


def main() -> None:
    base = sys.argv[1]
    if ANONYMOUS:  # no token to say it is a program: it asks for JSON
        client = Client(base_url=base, headers={"Accept": "application/json"})
    else:
        client = AuthenticatedClient(base_url=base, token=sys.argv[2])
    with client:
        ids = create(client)
        page_through(client, ids)
        search(client, ids)
        first = ids[0]
        etag = conditional_get(client, first)
        etag = update(client, first, etag)
        remove_and_restore(client, first, etag)
        history(client, first)
        feed(client, len(ids) + 3)  # an update, a removal, a restore


def create(client: Connection) -> list[int]:
    ids = []
    for number, name in enumerate(NAMES, start=1):
        body = ProdutoEntrada(nome=name, preco="R$ 1.234,5" if number == 1 else 10 + number)
        made = criar_produto.sync_detailed(client=client, body=body, idempotency_key=f"n{number}")
        if made.status_code != HTTPStatus.CREATED or "etag" not in made.headers:
            fail(f"create {name}: {made.status_code} {made.content!r}")
        ids.append(product(made.parsed, "create").id)
    if product(obter_produto.sync(ids[0], client=client), "get").preco != "1234.50":
        fail("the price typed as people type it was not read")
    return ids


def page_through(client: Connection, ids: list[int]) -> None:
    """Every product once, page by page, newest first and by name: the server pages by 2."""
    for ordem, expected in (
        (ListarProdutosOrdem.ID_DESC, sorted(ids, reverse=True)),
        (ListarProdutosOrdem.NOME, [i for _, i in sorted(zip(NAMES, ids, strict=True))]),
    ):
        seen: list[int] = []
        cursor: CursorDaLista | Unset = UNSET
        while True:
            page = listar_produtos.sync(client=client, ordem=ordem, cursor=cursor)
            if page is None or isinstance(page, Problem):
                fail(f"a page in order {ordem}: {page!r}")
            seen += [p.id for p in page.produtos]
            if isinstance(page.cursores.next_, Unset):
                break
            cursor = page.cursores.next_
        if seen != expected:
            fail(f"order {ordem}: {seen}, expected {expected}")


def search(client: Connection, ids: list[int]) -> None:
    found = listar_produtos.sync(client=client, q="caneca", ordem=ListarProdutosOrdem.ID)
    if found is None or isinstance(found, Problem):
        fail(f"search: {found!r}")
    if [p.id for p in found.produtos] != [ids[0], ids[3]]:
        fail(f"search for caneca: {[p.nome for p in found.produtos]}")


def conditional_get(client: Connection, id: int) -> str:
    read = obter_produto.sync_detailed(id, client=client)
    etag = read.headers.get("etag")
    if read.status_code != HTTPStatus.OK or etag is None:
        fail(f"get: {read.status_code} {read.content!r}")
    again = obter_produto.sync_detailed(id, client=client, if_none_match=etag)
    if again.status_code != HTTPStatus.NOT_MODIFIED or again.headers.get("etag") != etag:
        fail(f"conditional get: {again.status_code}")
    return etag


def update(client: Connection, id: int, etag: str) -> str:
    body = ProdutoComVersao(nome="Caneca azul 300 ml", preco="39.90")
    saved = atualizar_produto.sync_detailed(id, client=client, body=body, if_match=etag)
    new_etag = saved.headers.get("etag")
    if saved.status_code != HTTPStatus.OK or new_etag is None or new_etag == etag:
        fail(f"update with its ETag: {saved.status_code} {saved.content!r}")
    stale = atualizar_produto.sync_detailed(id, client=client, body=body, if_match=etag)
    if stale.status_code != HTTPStatus.PRECONDITION_FAILED or not isinstance(stale.parsed, Problem):
        fail(f"a stale update: {stale.status_code} {stale.content!r}")
    return new_etag


def remove_and_restore(client: Connection, id: int, etag: str) -> None:
    removed = remover_produto.sync_detailed(id, client=client, if_match=etag)
    if removed.status_code != HTTPStatus.NO_CONTENT:
        fail(f"remove: {removed.status_code} {removed.content!r}")
    gone = obter_produto.sync_detailed(id, client=client)
    if gone.status_code != HTTPStatus.NOT_FOUND or not isinstance(gone.parsed, Problem):
        fail(f"a removed product: {gone.status_code}")
    restored = restaurar_produto.sync_detailed(id, client=client)
    if restored.status_code != HTTPStatus.OK or "etag" not in restored.headers:
        fail(f"restore: {restored.status_code} {restored.content!r}")
    if product(restored.parsed, "restore").nome != "Caneca azul 300 ml":
        fail("the restored product is not the one removed")


def history(client: Connection, id: int) -> None:
    """Its four events, newest first, one page of 2 at a time."""
    kinds: list[EventoTipo] = []
    cursor: Cursor | Unset = UNSET
    while True:
        page = historico_do_produto.sync(id, client=client, cursor=cursor)
        if page is None or isinstance(page, Problem):
            fail(f"history: {page!r}")
        kinds += [evento.tipo for evento in page.eventos]
        if isinstance(page.cursores.next_, Unset):
            break
        cursor = page.cursores.next_
    expected = [EventoTipo.RESTAURADO, EventoTipo.REMOVIDO, EventoTipo.ALTERADO, EventoTipo.CRIADO]
    if kinds != expected:
        fail(f"history: {kinds}")


def feed(client: Connection, count: int) -> None:
    """Every event once, in order, three at a time, then an empty page that says where to
    wait."""
    seen: list[int] = []
    after = 0
    while True:
        page = eventos.sync(client=client, depois=after, limite=3)
        if page is None or isinstance(page, Problem):
            fail(f"feed: {page!r}")
        seen += [evento.id for evento in page.eventos]
        if not page.eventos:
            break
        after = page.cursores.next_.depois
    if seen != sorted(seen) or len(seen) != count or page.cursores.next_.depois != seen[-1]:
        fail(f"feed: {seen}, {count} expected")


if __name__ == "__main__":
    main()
