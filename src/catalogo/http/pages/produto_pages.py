"""What a browser is shown of a product: the edit and new-product pages, and the edit page
again after someone else saved (a conflict). The list is http/pages/list_pages.py's; the 303 after a
write, and the notice it leaves, are http/pages/notices.py's."""

from collections.abc import Hashable
from types import SimpleNamespace
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from catalogo.domain import historico
from catalogo.domain.precos import preco_for_input
from catalogo.domain.produtos import CAMPOS, Produto, every_value, format_field
from catalogo.domain.text import format_moment
from catalogo.http import templating
from catalogo.http.identity import Visitor, visitor
from catalogo.http.listing import Listing
from catalogo.http.negotiation import VARY
from catalogo.http.pages import notices
from catalogo.runtime.kept import Kept
from catalogo.services.produtos import MergeConflict

EMPTY_FORM = dict.fromkeys(CAMPOS, "")  # the new form, and the fields a body left out


# Pages as a GET shows them, whole (templating.Pages): a worker keeps 48 MiB of them, room for
# every edit page of a 10,000-product catalog (about 3.8 KiB each, with its key and overhead).
_PAGES = templating.Pages(48 * 1024 * 1024)
# The edit page rendered once per shape (templating.Skeleton): who is looking, the list to
# return to and which dates it shows; a product's page is its shape's skeleton filled with the
# product's values, at a third of a render's cost. Every write makes a new version, whose page
# is not kept yet. Bounded: emptied when full (the list is the client's to vary).
_SKELETONS: Kept[Hashable, templating.Skeleton] = Kept(1_000)
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
        skeleton = _SKELETONS.keep(shape, _edit_skeleton(request, who, criado, atualizado))
    return skeleton.fill(
        {
            "id": str(produto.id),
            "versao": str(produto.versao),
            "codigo": produto.codigo or "",
            "nome": produto.nome,
            "nome_curto": notices.shortened(produto.nome),
            "descricao": produto.descricao,
            "preco": preco_for_input(produto.preco),
            "criado": criado or "",
            "atualizado": atualizado or "",
            "aqui": who.aqui if who is not None else "",
        }
    )


def _seen_by(who: Visitor | None) -> Hashable:
    """Who a skeleton is for: the visitor but for the page they are on, which is a slot."""
    return None if who is None else who._replace(aqui="")


def _edit_skeleton(
    request: Request, who: Visitor | None, criado: str | None, atualizado: str | None
) -> templating.Skeleton:
    if who is not None and who.aqui:
        who = who._replace(aqui=templating.slot("aqui"))
    context = _editing(
        who, _PRODUTO_SLOTS, _VALORES_SLOTS, {}, Listing.returning_to(request.query_params)
    )
    context["criado"] = criado and templating.slot("criado")
    context["atualizado"] = atualizado and templating.slot("atualizado")
    context["nome_curto"] = templating.slot("nome_curto")
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
        "nome_curto": notices.shortened(str(produto.nome)),  # the page's title quotes it
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
    first); every other field holds the merge (domain/merge.py). Saving is an edit of the version
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


def changes_between(base: historico.Fields | None, current: Produto) -> list[tuple[str, str, str]]:
    """Each field that differs between a stored version (an event's fields) and `current`."""
    if base is None:
        return []
    then = historico.produto_of(base)
    return [
        (c, format_field(c, getattr(then, c)), format_field(c, getattr(current, c)))
        for c in CAMPOS
        if getattr(then, c) != getattr(current, c)
    ]
