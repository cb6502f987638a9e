"""What a browser is shown of the catalog: the list page, with its search form, its columns
and its pages, each product a row."""

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from catalogo.domain.busca import END, Ordem, Position
from catalogo.domain.errors import ListingError
from catalogo.domain.precos import format_preco, preco_for_input
from catalogo.domain.produtos import Produto
from catalogo.http import templating
from catalogo.http.identity import Visitor, visitor
from catalogo.http.listing import LIST_PATH, Listing
from catalogo.http.negotiation import VARY
from catalogo.http.pages import notices
from catalogo.http.shared import shared_of
from catalogo.runtime.kept import Kept
from catalogo.storage.paging import COUNT_CAP, Cursor, Page


@dataclass(frozen=True)
class BulkForm:
    """The list's "Alterar vários" form sent back with a mistake (point 3 of docs/batches.md's
    "In a browser"): what was chosen and typed, kept, and the message beside its field."""

    acao: str
    percentual: str
    preco: str
    ids: frozenset[int]
    campo: str | None
    erro: str


@dataclass(frozen=True)
class Found:
    """A list page's products and where its links lead."""

    listing: Listing
    page: Page[Produto, Position]
    links: dict[str, str]


_ORDERS: dict[str, str] = {
    "id": "mais antigos primeiro",
    "nome": "por nome, de A a Z",
    "-nome": "por nome, de Z a A",
    "preco": "do menor preço ao maior",
    "-preco": "do maior preço ao menor",
    "-atualizado_em": "da alteração mais recente à mais antiga",
    "atualizado_em": "da alteração mais antiga à mais recente",
}
# The order box of the search form, the default ("") first.
_ORDER_CHOICES = (
    ("", "Mais recentes primeiro"),
    ("id", "Mais antigos primeiro"),
    ("nome", "Nome, de A a Z"),
    ("-nome", "Nome, de Z a A"),
    ("preco", "Menor preço primeiro"),
    ("-preco", "Maior preço primeiro"),
    ("-atualizado_em", "Alteração mais recente primeiro"),
    ("atualizado_em", "Alteração mais antiga primeiro"),
)


@dataclass(frozen=True)
class _Column:
    """A column header: its label, its orders if it sorts (the first when it is clicked; the
    other when the list is already in the first), and its CSS class."""

    rotulo: str
    first: Ordem | None
    then: Ordem | None
    classe: str


_COLUMNS = (
    _Column("Nº", "-id", "id", "numero num"),
    _Column("Código", None, None, "codigo"),
    _Column("Nome", "nome", "-nome", "nome"),
    _Column("Preço", "preco", "-preco", "num preco"),
    _Column("Alterado em", "-atualizado_em", "atualizado_em", "alterado"),
)
_EN_DASH = "\u2013"  # between the first and the last number of a range, as print sets it
_DIRECTION = {"ascending": "crescente", "descending": "decrescente"}
_TYPED = ("q", "preco_min", "preco_max", "ordem")


def typed(parameters: Mapping[str, str]) -> dict[str, str]:
    """The search form's fields as they were sent, to show them back beside what was wrong."""
    return {name: parameters.get(name, "")[:200] for name in _TYPED}


def list_page(
    request: Request,
    found: Found | None,
    sent: dict[str, str] | None = None,
    problem: ListingError | None = None,
    headers: dict[str, str] | None = None,
    status_code: int = 400,
    bulk: BulkForm | None = None,
) -> Response:
    """The list: what was asked (the title and the heading say it), how many, the products
    and their pages; or, when the query could not be read or answered in time (`problem`),
    the search form with what was `sent`, and the message (400, or 422 past the budget)."""
    if found is None:
        return templating.load().render(
            "produtos/lista.html",
            status_code,
            headers={"Cache-Control": "no-store", **VARY},
            titulo="Produtos",
            cabecalho="Produtos",
            busca=sent or {},
            ordens=_ORDER_CHOICES,
            problema=str(problem),
            campo_com_erro=problem and problem.field,
            aviso=None,
            filtrada=True,
            ids=(),
            codigos=(),
            links={},
            lista="",
            retorno="",
            quem=visitor(request),
            lote=None,
        )
    who = visitor(request)
    most = min(shared_of(request).settings.batch_max, COUNT_CAP)  # "todos os N": one batch
    if bulk is not None:
        context = _listed(found, who, most)
        context["linhas"] = _chosen(context["linhas"], bulk.ids)
        return templating.load().render(
            "produtos/lista.html",
            422,
            headers={"Cache-Control": "no-store", **VARY},
            aviso=None,
            **{**context, "lote": bulk},
        )
    if notices.COOKIE in request.cookies:  # a notice to show, or one to clear: not kept
        context = _listed(found, who, most)
        return notices.with_notice(request, "produtos/lista.html", headers or {}, **context)
    page = found.page
    key = (page.serial, request.scope["query_string"], who, most)

    def make() -> bytes:
        return templating.load().page(
            "produtos/lista.html", aviso=None, **_listed(found, who, most)
        )

    return HTMLResponse(_PAGES.get(key, make), headers=headers)


# Whole list pages as a visitor with no notice to see is shown them (templating.Pages), by the
# page of products they show (its serial), the query string (the listing and its links) and the
# visitor. A page of products is kept by the store while nothing changes (SQLite's:
# storage/sqlite/busca.py); the pages made of one that is gone are the first to go.
_PAGES = templating.Pages(4 * 1024 * 1024)


def _listed(found: Found, who: Visitor | None, most: int) -> dict[str, Any]:
    """What lista.html shows of a page found, but the notice."""
    listing, page = found.listing, found.page
    ordem = listing.query.ordem
    first = listing.after is None and listing.before is None
    where = _position(page, first)
    links = dict(found.links)
    if "prev" in links:
        links["first"] = listing.at(None).url
    if page.next is not None:
        links["last"] = listing.at(Cursor(page.next.limit, before=END)).url
    shown = describe(listing)
    retorno, lista = listing.carried(""), listing.encoded
    return {
        "titulo": shown if first or not where else f"{shown}, {where}",
        "cabecalho": shown,
        "problema": None,
        "campo_com_erro": None,
        "filtrada": listing.query.filtered,
        "busca": {
            "q": listing.q,
            "preco_min": _price_field(listing.query.preco_min),
            "preco_max": _price_field(listing.query.preco_max),
            "ordem": "" if ordem == "-id" else ordem,
        },
        "ordens": _ORDER_CHOICES,
        "ordem_padrao": listing.with_order("-id").url,
        "exportar": f"{LIST_PATH}?{listing.search}&" if listing.search else f"{LIST_PATH}?",
        "ids": listing.query.ids,
        "codigos": listing.query.codigos,
        "pagina": page,
        "linhas": _rows(page, retorno, lista, who is None or who.pode_editar),
        "posicao": where,
        **_all_of(page.total if page.total is not None and page.total <= most else None, listing),
        "busca_do_lote": listing.search,
        "links": links,
        "colunas": [_header(listing, column) for column in _COLUMNS],
        "primeira_pagina": first,
        "inicio": listing.at(None).url,
        "lista": lista,
        "retorno": retorno,
        "quem": who,
        "lote": None,
    }


def _all_of(total: int | None, listing: Listing) -> dict[str, str | None]:
    """The bulk form's button for every product the list finds, in words that say how many
    and which, and what "all" means."""
    if total is None:
        return {"todos": None, "todos_explica": None}
    where = "desta busca" if listing.query.filtered else "do catálogo"
    count = f"{total:,}".replace(",", ".")
    said = (
        f"Aplicar ao único produto {where}"
        if total == 1
        else f"Aplicar a todos os {count} produtos {where}"
    )
    which = "que a busca encontra" if listing.query.filtered else "do catálogo"
    return {
        "todos": said,
        "todos_explica": f"Todos os {which}, em todas as páginas, não só os marcados; "
        "você confere e confirma na página seguinte.",
    }


def _chosen(rows: Markup, ids: frozenset[int]) -> Markup:
    """The rows with the products in `ids` ticked, as they were when the form was sent."""
    text = str(rows)
    for id in ids:
        text = text.replace(f'value="{id}" form="lote"', f'value="{id}" form="lote" checked')
    return Markup(text)  # noqa: S704 - the rows as their template escaped them, ticks added


# A list page's rows, by all they show: most of a list page's cost is rendering them, and most
# list pages shown are shown again (page 1, unchanged since).
_ROWS: Kept[Hashable, Markup] = Kept(5_000)


def _rows(page: Page[Produto, Position], retorno: str, lista: str, editable: bool) -> Markup:
    """The rows as one piece: the page pastes it in once, not each row through the escaper."""
    made = templating.load()
    return Markup(  # noqa: S704 - each row is a fragment its template escaped
        "".join(
            _ROWS.made(
                (
                    p.id,
                    p.codigo,
                    p.nome,
                    p.preco,
                    p.versao,
                    p.atualizado_em,
                    retorno,
                    lista,
                    editable,
                ),
                lambda p=p: made.fragment(  # type: ignore[misc]
                    "produtos/linha.html",
                    produto=p,
                    retorno=retorno,
                    lista=lista,
                    editavel=editable,
                ),
            )
            for p in page.items
        )
    )


def _header(listing: Listing, column: _Column) -> dict[str, str | None]:
    """A column header's link (the other way round when the list is in its order already),
    its aria-sort, and what clicking it does, in words."""
    ordem = listing.query.ordem
    if column.first is None or column.then is None:
        return {"rotulo": column.rotulo, "classe": column.classe, "url": None, "aria": None}
    aria = None
    if ordem in (column.first, column.then):
        aria = "descending" if ordem.startswith("-") else "ascending"
    target = column.then if ordem == column.first else column.first
    return {
        "rotulo": column.rotulo,
        "classe": column.classe,
        "url": listing.with_order(target).url,
        "aria": aria,
        "dica": f"Ordenar por {column.rotulo.lower()}, "
        f"{_DIRECTION['descending' if target.startswith('-') else 'ascending']}",
    }


def _position(page: Page[Produto, Position], first: bool) -> str | None:
    """Where a page is in its list, and how many there are: "51-100 de 119 produtos" (with an
    en dash), "3 produtos", "1-50 de mais de 10.000 produtos"."""
    total = _counted(page.total)
    shown = len(page.items)
    if total is None or not shown:
        return total
    if first and page.next is None:
        return total
    if page.before is None or page.before > COUNT_CAP:
        return f"além dos {COUNT_CAP:,} primeiros de {total}".replace(",", ".")
    start, end = page.before + 1, page.before + shown
    return f"{start:,}{_EN_DASH}{end:,} de {total}".replace(",", ".")


def describe(listing: Listing) -> str:
    """What a list shows, in words: "Produtos com «caneca», até R$ 50,00, por nome"."""
    query = listing.query
    parts = []
    if listing.q:
        parts.append(f"com «{listing.q}»")
    if query.ids:
        parts.append(f"entre {len(query.ids)} escolhido{'s' if len(query.ids) > 1 else ''}")
    low, high = query.preco_min, query.preco_max
    if low is not None and high is not None:
        parts.append(f"de {format_preco(low)} a {format_preco(high)}")
    elif low is not None:
        parts.append(f"a partir de {format_preco(low)}")
    elif high is not None:
        parts.append(f"até {format_preco(high)}")
    if query.ordem in _ORDERS:
        parts.append(_ORDERS[query.ordem])
    return "Produtos " + ", ".join(parts) if parts else "Produtos"


def _counted(total: int | None) -> str | None:
    """ "1 produto", "1.234 produtos", "mais de 10.000 produtos"."""
    if total is None:
        return None
    if total > COUNT_CAP:
        return f"mais de {COUNT_CAP:,} produtos".replace(",", ".")
    return f"{total:,} produto{'' if total == 1 else 's'}".replace(",", ".")


def _price_field(preco: Decimal | None) -> str:
    return "" if preco is None else preco_for_input(preco)
