"""What a browser is shown of a product: the edit and new-product pages, the edit page again
after someone else saved (a conflict), and after a write the 303 to the list with a one-time
notice, kept in a cookie so that reloading the list never repeats the write."""

import urllib.parse
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo import pages
from catalogo.identity import Visitante
from catalogo.listing import Listing
from catalogo.produtos import (
    CAMPOS,
    Produto,
    base_de,
    campos_mudados,
    formatar_preco,
    ler_id,
    preco_no_campo,
)
from catalogo.resources import VARY, services, write_cookie

NOTICE_COOKIE = "aviso"
_NOTICES = {
    "adicionado": "Produto «{}» adicionado.",
    "atualizado": "Produto «{}» atualizado.",
    "removido": "Produto «{}» removido.",
    "restaurado": "Produto «{}» restaurado.",
}


def to_the_list(request: Request, kind: str, produto: Produto, listing: Listing) -> Response:
    """The browser's answer to a write: the list page it came from, with a notice of what was
    done."""
    response = Response(status_code=303, headers={"Location": listing.url, **VARY})
    value = urllib.parse.quote(f"{kind}:{produto.id}:{produto.nome}", safe="")
    https = services(request).gate.over_https(request)
    write_cookie(response, NOTICE_COOKIE, value, https=https, max_age=60)
    return response


@dataclass(frozen=True)
class Aviso:
    """The notice after a write, and the product a removal's "Desfazer" brings back."""

    texto: str
    desfazer: int | None


def notice(request: Request) -> Aviso | None:
    value = urllib.parse.unquote(request.cookies.get(NOTICE_COOKIE, ""))
    kind, _, rest = value.partition(":")
    number, _, nome = rest.partition(":")
    id = ler_id(number)
    if kind not in _NOTICES or not nome or id is None:
        return None
    return Aviso(_NOTICES[kind].format(nome), id if kind == "removido" else None)


def edit_page(
    who: Visitante | None,
    produto: Produto,
    values: dict[str, Any],
    problems: dict[str, str],
    listing: Listing,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    conflito: list[tuple[str, str, str]] | None = None,
    mantidos: list[str] | None = None,
    remocao_recusada: bool = False,
) -> Response:
    return pages.load().render(
        "produtos/editar.html",
        status_code,
        headers or {"Cache-Control": "no-cache", **VARY},
        produto=produto,
        valores=values,
        erros=problems,
        lista=listing.query,
        volta=listing.url,
        edicao=listing.carried(f"/produtos/{produto.id}"),
        conflito=conflito,
        mantidos=mantidos,
        remocao_recusada=remocao_recusada,
        quem=who,
    )


def new_page(
    who: Visitante | None,
    listing: Listing,
    values: dict[str, Any],
    problems: dict[str, str],
    status_code: int = 200,
) -> Response:
    return pages.load().render(
        "produtos/novo.html",
        status_code,
        VARY,
        valores=values,
        erros=problems,
        lista=listing.query,
        volta=listing.url,
        quem=who,
    )


def form_values(produto: Produto) -> dict[str, Any]:
    return {
        "nome": produto.nome,
        "descricao": produto.descricao,
        "preco": preco_no_campo(produto.preco),
        "versao": produto.versao,
        "base": base_de(produto),
    }


def conflict_page(
    who: Visitante | None,
    current: Produto,
    typed: Produto,
    fields: dict[str, Any],
    base: str | None,
    listing: Listing,
) -> Response:
    """The edit form again after someone else saved: a field this person left alone takes the
    saved value, so Salvar never puts back what the other person replaced; the fields both
    changed, to different values, are shown side by side. Without a base (a form not from our
    page) every field counts as changed by both."""
    mine = campos_mudados(base, typed) if base else frozenset(CAMPOS)
    theirs = campos_mudados(base, current) if base else frozenset(CAMPOS)
    saved = form_values(current)
    values = {
        **{c: str(fields.get(c, "")) if c in mine else saved[c] for c in CAMPOS},
        "versao": current.versao,
        "base": saved["base"],
    }
    both = [c for c in CAMPOS if c in mine & theirs and getattr(typed, c) != getattr(current, c)]
    rows = [(c, _shown(current, c), _shown(typed, c)) for c in both]
    kept = [c for c in CAMPOS if c in theirs - mine]
    return edit_page(who, current, values, {}, listing, 409, conflito=rows, mantidos=kept)


def _shown(produto: Produto, field: str) -> str:
    value = getattr(produto, field)
    return formatar_preco(value) if field == "preco" else str(value)
