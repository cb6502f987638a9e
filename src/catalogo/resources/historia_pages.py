"""What a browser is shown of what happened: a product's history, one row per event ("quando ·
quem · o quê", old → new, prices in R$), and the trash, each removed product with a restore
button."""

from dataclasses import dataclass
from decimal import Decimal

from starlette.requests import Request
from starlette.responses import Response

from catalogo import pages
from catalogo.historia import Evento, autor
from catalogo.identity import Visitante, visitor
from catalogo.listing import Listing
from catalogo.produtos import CAMPOS, ROTULOS, Produto, formatar_preco, preco_no_campo
from catalogo.resources.produto_pages import with_notice
from catalogo.storage import Page, Removal

_ACOES = {
    "criado": "Criou",
    "alterado": "Alterou",
    "removido": "Removeu",
    "restaurado": "Restaurou",
}
_ORIGENS = {
    "web": "nas páginas",
    "api": "pela API",
    "cli": "pela linha de comando",
    "importacao": "por importação",
    "lote": "numa alteração em lote",
}


@dataclass(frozen=True)
class Linha:
    """One event as the history page shows it. `restaurar`: the form fields that bring its
    version back, when that version is not what is saved now."""

    evento: Evento
    acao: str
    quem: str
    origem: str
    mudancas: list[tuple[str, str | None, str | None]]
    restaurar: dict[str, str] | None


def history_page(
    who: Visitante | None,
    produto: Produto | None,
    removal: Removal | None,
    page: Page[Evento],
    links: dict[str, str],
    headers: dict[str, str],
) -> Response:
    """`produto` is the live product, or None when it is removed (`removal`)."""
    shown = produto or (removal.produto if removal else None)
    assert shown is not None  # noqa: S101 - the resource found one or the other
    return pages.load().render(
        "produtos/historico.html",
        headers=headers,
        produto=shown,
        removido=removal,
        linhas=[_linha(e, produto) for e in page.items],
        links=links,
        quem=who,
    )


def trash_page(
    request: Request,
    page: Page[Removal],
    links: dict[str, str],
    listing: Listing,
    days: int,
    headers: dict[str, str],
) -> Response:
    return with_notice(
        request,
        "produtos/removidos.html",
        headers,
        pagina=page,
        links=links,
        primeira_pagina=not listing.query,
        lixeira=listing.query,
        dias=days,
        quem=visitor(request),
    )


def _linha(evento: Evento, live: Produto | None) -> Linha:
    quem = autor(evento) + (f" (token «{evento.token}»)" if evento.token else "")
    antes, depois = evento.antes or {}, evento.depois or {}
    if evento.tipo == "alterado":
        mudancas = [
            (ROTULOS[c], _shown(c, antes.get(c)), _shown(c, depois.get(c)))
            for c in CAMPOS
            if antes.get(c) != depois.get(c) and not _same_price(c, antes, depois)
        ]
    elif evento.tipo == "criado":
        mudancas = [(ROTULOS[c], None, _shown(c, depois.get(c))) for c in CAMPOS]
    else:
        mudancas = []
    restaurar = None
    if live is not None and evento.depois is not None and not _is(live, evento.depois):
        restaurar = {
            **{c: evento.depois[c] for c in ("nome", "descricao")},
            "preco": preco_no_campo(Decimal(evento.depois["preco"])),
            "versao": str(live.versao),
        }
    return Linha(evento, _ACOES[evento.tipo], quem, _ORIGENS[evento.origem], mudancas, restaurar)


def _shown(campo: str, value: str | None) -> str | None:
    if value is None or campo != "preco":
        return value
    return formatar_preco(Decimal(value))


def _same_price(campo: str, antes: dict[str, str], depois: dict[str, str]) -> bool:
    return campo == "preco" and Decimal(antes["preco"]) == Decimal(depois["preco"])


def _is(produto: Produto, fields: dict[str, str]) -> bool:
    return (
        produto.nome == fields["nome"]
        and produto.descricao == fields["descricao"]
        and produto.preco == Decimal(fields["preco"])
    )
