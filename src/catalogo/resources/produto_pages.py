"""What a browser is shown of a product: the list, the edit and new-product pages, and the
edit page again after someone else saved (a conflict). The 303 after a write, and the notice
it leaves, are notices.py's."""

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from catalogo import history, templating
from catalogo.identity import Visitor, visitor
from catalogo.listing import LIST_PATH, Listing, ListingError
from catalogo.precos import format_preco, preco_for_input
from catalogo.produtos import CAMPOS, Produto, every_value, format_field, format_moment
from catalogo.resources import VARY, notices, shared_of
from catalogo.search import END, Ordem, Position
from catalogo.services import MergeConflict
from catalogo.storage.paging import COUNT_CAP, Cursor, Page


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
EMPTY_FORM = dict.fromkeys(CAMPOS, "")  # the new form, and the fields a body left out


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
        )
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
    who = visitor(request)
    most = min(shared_of(request).settings.batch_max, COUNT_CAP)  # "todos os N": one batch
    retorno, lista = listing.carried(""), listing.encoded
    return notices.with_notice(
        request,
        "produtos/lista.html",
        headers or {},
        titulo=shown if first or not where else f"{shown}, {where}",
        cabecalho=shown,
        problema=None,
        campo_com_erro=None,
        filtrada=listing.query.filtered,
        busca={
            "q": listing.q,
            "preco_min": _price_field(listing.query.preco_min),
            "preco_max": _price_field(listing.query.preco_max),
            "ordem": "" if ordem == "-id" else ordem,
        },
        ordens=_ORDER_CHOICES,
        ordem_padrao=listing.with_order("-id").url,
        exportar=f"{LIST_PATH}?{listing.search}&" if listing.search else f"{LIST_PATH}?",
        ids=listing.query.ids,
        codigos=listing.query.codigos,
        pagina=page,
        linhas=_rows(page, retorno, lista, who is None or who.pode_editar),
        posicao=where,
        todos=_counted(page.total) if page.total is not None and page.total <= most else None,
        busca_do_lote=listing.search,
        links=links,
        colunas=[_header(listing, column) for column in _COLUMNS],
        primeira_pagina=first,
        inicio=listing.at(None).url,
        lista=lista,
        retorno=retorno,
        quem=who,
    )


# A list page's rows, by all they show: most of a list page's cost is rendering them, and most
# list pages shown are shown again (page 1, unchanged since).
_ROWS = templating.Memo()


def _rows(page: Page[Produto, Position], retorno: str, lista: str, editable: bool) -> Markup:
    """The rows as one piece: the page pastes it in once, not each row through the escaper."""
    made = templating.load()
    return Markup(  # noqa: S704 - each row is a fragment its template escaped
        "".join(
            _ROWS.get(
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


# Pages as a GET shows them, whole (templating.Pages): a worker keeps 32 MiB of them.
_PAGES = templating.Pages(32 * 1024 * 1024)
# The edit page rendered once per shape (templating.Skeleton): who is looking, the list to
# return to and which dates it shows; a product's page is its shape's skeleton filled with the
# product's values, at a third of a render's cost. Every write makes a new version, whose page
# is not kept yet. Bounded: emptied when full (the list is the client's to vary).
_SKELETONS: dict[Hashable, templating.Skeleton] = {}
_SKELETONS_KEPT = 1_000
_PRODUTO_SLOTS: Any = SimpleNamespace(  # what editar.html reads of a product, as slots
    id=templating.slot("id"), nome=templating.slot("nome"), versao=templating.slot("versao")
)
_VALORES_SLOTS = {campo: templating.slot(campo) for campo in (*CAMPOS, "versao")}


def product_page(request: Request, produto: Produto) -> bytes:
    """The edit page as a GET shows it, kept by every value it shows: the product's fields and
    version, the list to return to (the query string) and the visitor."""
    who = visitor(request)
    query = request.scope["query_string"]
    key = ("editar", *every_value(produto), query, who)
    return _PAGES.get(key, lambda: _filled(request, who, query, produto))


def _filled(request: Request, who: Visitor | None, query: bytes, produto: Produto) -> bytes:
    criado, atualizado = _dates(produto)
    shape = (query, _seen_by(who), criado is None, atualizado is None)
    skeleton = _SKELETONS.get(shape)
    if skeleton is None:
        if len(_SKELETONS) >= _SKELETONS_KEPT:
            _SKELETONS.clear()
        skeleton = _SKELETONS[shape] = _edit_skeleton(request, who, criado, atualizado)
    return skeleton.fill(
        {
            "id": str(produto.id),
            "versao": str(produto.versao),
            "codigo": produto.codigo or "",
            "nome": produto.nome,
            "descricao": produto.descricao,
            "preco": preco_for_input(produto.preco),
            "criado": criado or "",
            "atualizado": atualizado or "",
            "aqui": who.aqui if who is not None else "",
        }
    )


def _seen_by(who: Visitor | None) -> Hashable:
    """Who a skeleton is for: the visitor but for the page they are on, which is a slot."""
    return None if who is None else tuple(v for k, v in vars(who).items() if k != "aqui")


def _edit_skeleton(
    request: Request, who: Visitor | None, criado: str | None, atualizado: str | None
) -> templating.Skeleton:
    if who is not None and who.aqui:
        who = replace(who, aqui=templating.slot("aqui"))
    context = _editing(
        who, _PRODUTO_SLOTS, _VALORES_SLOTS, {}, Listing.returning_to(request.query_params)
    )
    context["criado"] = criado and templating.slot("criado")
    context["atualizado"] = atualizado and templating.slot("atualizado")
    return templating.load().skeleton("produtos/editar.html", **context)


def _dates(produto: Produto) -> tuple[str | None, str | None]:
    """When the product was made, and when it changed last if that shows as another minute."""
    if produto.criado_em is None or produto.atualizado_em is None:
        return None, None
    criado, atualizado = format_moment(produto.criado_em), format_moment(produto.atualizado_em)
    return criado, atualizado if atualizado != criado else None


def new_form_page(request: Request) -> Response:
    """The empty new-product form: the same for every visitor of a kind and list to return to."""
    who = visitor(request)

    def make() -> bytes:
        listing = Listing.returning_to(request.query_params)
        context = _creating(who, listing, EMPTY_FORM, {})
        return templating.load().page("produtos/novo.html", **context)

    return HTMLResponse(_PAGES.get(("novo", request.scope["query_string"], who), make), 200, VARY)


def edit_page(
    who: Visitor | None,
    produto: Produto,
    values: dict[str, Any],
    problems: dict[str, str],
    listing: Listing,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    **conflict: Any,
) -> Response:
    """The edit page as a write that was refused shows it; `conflict`, what a conflict's page
    adds (`_editing`'s last four)."""
    criado, atualizado = _dates(produto)
    return templating.load().render(
        "produtos/editar.html",
        status_code,
        headers or {"Cache-Control": "no-cache", **VARY},
        **_editing(who, produto, values, problems, listing, **conflict),
        criado=criado,
        atualizado=atualizado,
    )


def _editing(
    who: Visitor | None,
    produto: Produto,
    values: dict[str, Any],
    problems: dict[str, str],
    listing: Listing,
    escolhas: dict[str, tuple[tuple[str, str], tuple[str, str]]] | None = None,
    mantidos: list[str] | None = None,
    remocao_recusada: list[tuple[str, str, str]] | None = None,
    autores: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "produto": produto,
        "valores": values,
        "erros": problems,
        "lista": listing.encoded,
        "volta": listing.url,
        "edicao": listing.carried(f"/produtos/{produto.id}"),
        "escolhas": escolhas,
        "mantidos": mantidos,
        "remocao_recusada": remocao_recusada,
        "autores": notices.people(autores) if autores else "outra pessoa",
        "quem": who,
    }


def new_page(
    who: Visitor | None,
    listing: Listing,
    values: dict[str, Any],
    problems: dict[str, str],
    status_code: int = 200,
) -> Response:
    return templating.load().render(
        "produtos/novo.html", status_code, VARY, **_creating(who, listing, values, problems)
    )


def _creating(
    who: Visitor | None, listing: Listing, values: dict[str, Any], problems: dict[str, str]
) -> dict[str, Any]:
    return {
        "escolhas": None,
        "valores": values,
        "erros": problems,
        "lista": listing.encoded,
        "volta": listing.url,
        "quem": who,
    }


def form_values(produto: Produto) -> dict[str, Any]:
    return {
        "codigo": produto.codigo or "",
        "nome": produto.nome,
        "descricao": produto.descricao,
        "preco": preco_for_input(produto.preco),
        "versao": produto.versao,
    }


def conflict_page(who: Visitor | None, conflict: MergeConflict, listing: Listing) -> Response:
    """The edit form again after someone else saved a different value in a field this person
    changed too: those fields offer both values to choose from (this person's chosen at
    first); every other field holds the merge (merge.py). Saving is an edit of the version
    saved now, merged again if it moves on meanwhile."""
    current, merged = conflict.current, conflict.merged.produto
    values, saved = form_values(merged), form_values(current)
    choices = {
        c: (
            (values[c], format_field(c, getattr(merged, c))),
            (saved[c], format_field(c, getattr(current, c))),
        )
        for c in conflict.merged.conflicts
    }
    return edit_page(
        who,
        current,
        {**values, "versao": current.versao},
        {},
        listing,
        409,
        escolhas=choices,
        mantidos=list(conflict.merged.theirs),
        autores=conflict.autores,
    )


def removal_refused_page(
    who: Visitor | None,
    current: Produto,
    changes: list[tuple[str, str, str]],
    autores: list[str],
    listing: Listing,
) -> Response:
    """The edit page after a removal of a version the product has moved on from: nothing was
    removed, and the page says what changed since (`changes`: field, then, now) and who."""
    return edit_page(
        who,
        current,
        form_values(current),
        {},
        listing,
        409,
        remocao_recusada=changes,
        autores=autores,
    )


def changes_between(base: history.Fields | None, current: Produto) -> list[tuple[str, str, str]]:
    """Each field that differs between a stored version (an event's fields) and `current`."""
    if base is None:
        return []
    then = history.produto_of(base)
    return [
        (c, format_field(c, getattr(then, c)), format_field(c, getattr(current, c)))
        for c in CAMPOS
        if getattr(then, c) != getattr(current, c)
    ]
