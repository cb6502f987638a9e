"""What a browser is shown of what happened: a product's history, one row per event, said as a
sentence ("24/11/2026 05:10 · Alterado por maria pelo site (versão 3)": what, by whom, by which
way, then old → new, prices in R$), and the trash, each removed product with a restore
button."""

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain.historico import Evento, produto_of
from catalogo.domain.produtos import CAMPOS, ROTULOS, Produto, format_field
from catalogo.http import templating
from catalogo.http.identity import Visitor, visitor
from catalogo.http.listing import Paging, trash_way_back
from catalogo.http.pages.notices import with_notice
from catalogo.http.pages.produto_pages import form_values
from catalogo.storage import Removal
from catalogo.storage.paging import Page

# Each row reads "<Alterado> [por <quem>] <pelo site>[, com o token «…»] (versão N)": the
# product is what was changed, so the participle agrees with it; an anonymous change (a
# catalog without users, the command line) names nobody rather than "anônimo".
_ACOES = {
    "criado": "Criado",
    "alterado": "Alterado",
    "removido": "Removido",
    "restaurado": "Restaurado",
}
_ORIGENS = {
    "web": "pelo site",
    "api": "pela API",
    "cli": "pela linha de comando",
    "importacao": "numa importação",
    "lote": "em lote",
}


@dataclass(frozen=True)
class HistoryLine:
    """One event as the history page shows it. `quem`: the user, None when anonymous.
    `restaurar`: the form fields that bring its version back, when that version is not what is
    saved now."""

    evento: Evento
    acao: str
    quem: str | None
    origem: str
    mudancas: list[tuple[str, str | None, str | None]]
    restaurar: dict[str, Any] | None


def history_page(
    who: Visitor | None,
    produto: Produto | None,
    removal: Removal | None,
    page: Page[Evento, int],
    links: dict[str, str],
    headers: dict[str, str],
) -> Response:
    """`produto` is the live product, or None when it is removed (`removal`)."""
    shown = produto or (removal.produto if removal else None)
    assert shown is not None  # noqa: S101 - the resource found one or the other
    return templating.load().render(
        "produtos/historico.html",
        headers=headers,
        produto=shown,
        removido=removal,
        linhas=[_line(e, produto) for e in page.items],
        links=links,
        quem=who,
    )


def trash_page(
    request: Request,
    page: Page[Removal, int],
    links: dict[str, str],
    paging: Paging,
    days: int,
    headers: dict[str, str],
    q: str = "",
) -> Response:
    return with_notice(
        request,
        "produtos/removidos.html",
        headers,
        q=q,
        pagina=page,
        links=links,
        primeira_pagina=paging.first,
        pagina_dos_removidos=trash_way_back(paging, q),
        dias=days,
        quem=visitor(request),
    )


def event_lines(events: list[Evento]) -> list[HistoryLine]:
    """A batch's events (an import's), each said as the history page says it."""
    return [_line(evento, None) for evento in events]


def _line(evento: Evento, live: Produto | None) -> HistoryLine:
    antes = None if evento.antes is None else produto_of(evento.antes)
    depois = None if evento.depois is None else produto_of(evento.depois)
    # An event from before codes says nothing of the code: restoring it keeps today's.
    known = [c for c in CAMPOS if evento.depois is not None and c in evento.depois]
    mudancas: list[tuple[str, str | None, str | None]] = []
    if evento.tipo in ("alterado", "restaurado") and antes is not None and depois is not None:
        # a restore with new values (an import's row naming a removed product's code)
        mudancas = [
            (ROTULOS[c], _shown(antes, c), _shown(depois, c))
            for c in CAMPOS
            if getattr(antes, c) != getattr(depois, c)
        ]
    elif evento.tipo == "criado" and depois is not None:
        given = [c for c in known if getattr(depois, c) is not None]  # a code, if it had one
        mudancas = [(ROTULOS[c], None, _shown(depois, c)) for c in given]
    restaurar = None
    if (
        live is not None
        and depois is not None
        and any(getattr(live, c) != getattr(depois, c) for c in known)
    ):
        values = form_values(depois)
        restaurar = {**{c: values[c] for c in known}, "versao": live.versao}
    acao, origem = _ACOES[evento.tipo], _ORIGENS[evento.origem]
    return HistoryLine(evento, acao, evento.quem, origem, mudancas, restaurar)


def _shown(produto: Produto, campo: str) -> str:
    """Only a description (or a code) can be empty: said in words, not left a blank cell."""
    return format_field(campo, getattr(produto, campo)) or "(sem descrição)"
