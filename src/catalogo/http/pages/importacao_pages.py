"""What a browser and a program are shown of imports: the import page (the form, the
template, the recent imports), an import's report a page at a time, and its JSON."""

import time
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import planilhas
from catalogo.domain.planilhas import COLUMNS
from catalogo.domain.produtos import format_field
from catalogo.domain.text import as_datetime
from catalogo.http import templating
from catalogo.http.identity import visitor
from catalogo.http.middleware.guard import IMPORT_PATH
from catalogo.http.pages.historico_pages import event_lines
from catalogo.http.pages.notices import import_undone_notice, shown
from catalogo.http.shared import shared_of
from catalogo.services import importacoes, previa
from catalogo.services.importacoes import ReportPage
from catalogo.services.previa import LABELS
from catalogo.storage import Importacao, Storage

NO_STORE = {"Cache-Control": "no-store", "Vary": "Accept, Cookie"}
_ESTADOS = {
    "preparada": "Prévia, esperando confirmação",
    "aplicada": "Aplicada",
    "desfeita": "Desfeita",
    "expirada": "Prévia expirada, nada gravado",
}


def state_said(importacao: Importacao, now: float) -> str:
    """The import's state as a clerk reads it: a dry run that cannot be confirmed says why."""
    estado = importacoes.estado(importacao, now)
    if estado == "preparada" and importacao.resumo["erros"]:
        return "Prévia com erros, não pode ser confirmada"
    if estado == "preparada" and not importacoes.confirmable(importacao, now):
        return "Prévia sem mudanças, nada a confirmar"
    return _ESTADOS[estado]


def path_of(importacao: Importacao) -> str:
    return f"{IMPORT_PATH}/{importacao.id}"


def links(importacao: Importacao, now: float, page: ReportPage | None = None) -> dict[str, str]:
    """Where to go from an import: the pages of its report, and its next step."""
    path = path_of(importacao)
    found: dict[str, str] = {}
    if page is not None and page.pagina > 1:
        found["prev"] = f"{path}?pagina={min(page.pagina, page.paginas + 1) - 1}"
    if page is not None and page.pagina < page.paginas:
        found["next"] = f"{path}?pagina={page.pagina + 1}"
    if importacoes.confirmable(importacao, now):
        found["confirmacao"] = f"{path}/confirmacao"
    if importacao.estado == "aplicada":
        found["reversao"] = f"{path}/reversao"
    return found


def representation(
    importacao: Importacao, now: float, page: ReportPage | None = None
) -> dict[str, Any]:
    """An import as JSON clients see it; with `page`, a page of its report, each error also
    said as the page says it ("linha 17, preço: …")."""
    i = importacao
    shown_at = {
        "criada_em": i.criada_em,
        "expira_em": i.expira_em,
        "aplicada_em": i.aplicada_em,
        "desfeita_em": i.desfeita_em,
    }
    found: dict[str, Any] = {
        "id": i.id,
        "arquivo": i.arquivo,
        "codificacao": i.codificacao,
        "estado": importacoes.estado(i, now),
        "quem": i.quem,
        "token": i.token,
        **{k: None if v is None else as_datetime(v) for k, v in shown_at.items()},
        "aplicada_por": i.aplicada_por,
        "desfeita_por": i.desfeita_por,
        "resumo": {"restaurados": 0, **i.resumo},  # none in imports staged before restores
    }
    if page is not None:
        found["relatorio"] = {
            "pagina": page.pagina,
            "paginas": page.paginas,
            "erros": [{**e, "texto": str(previa.RowError(**e))} for e in page.erros],
            "alterados": page.alterados,
            "novos": page.novos,
        }
    found["links"] = links(importacao, now, page)
    return found


def imports_page(
    request: Request,
    recent: list[Importacao],
    erro: str | None = None,
    codificacao: str = "utf-8",
    status_code: int = 200,
) -> Response:
    """The form to send a file, what a file may hold, and the latest imports."""
    return templating.load().render(
        "produtos/importacoes.html",
        status_code,
        NO_STORE,
        quem=visitor(request),
        recentes=[(i, state_said(i, time.time())) for i in recent],
        erro=erro,
        codificacao=codificacao,
        colunas=COLUMNS,
        vazio=planilhas.CLEAR,
        linhas=f"{planilhas.ROWS_MAXIMUM:,}".replace(",", "."),
        limite=f"{shared_of(request).settings.import_max_bytes / 2**20:.0f} MiB",
    )


async def import_page(
    request: Request,
    storage: Storage,
    importacao: Importacao,
    page: ReportPage,
    erro: str | None = None,
    status_code: int = 200,
    changed: list[int] | None = None,
) -> Response:
    """An import's report (a page of it), and what may be done with it now: confirm a dry run
    without errors, undo an applied import. Applied, it lists the events it wrote instead."""
    now = time.time()
    events = []
    if importacao.estado != "preparada":
        offset = (page.pagina - 1) * importacoes.REPORT_PAGE
        events = event_lines(
            await storage.batch_events(importacao.id, offset, importacoes.REPORT_PAGE)
        )
    aviso = import_undone_notice(request)
    response = templating.load().render(
        "produtos/importacao.html",
        status_code,
        NO_STORE,
        quem=visitor(request),
        importacao=importacao,
        estado=importacoes.estado(importacao, now),
        rotulo_estado=state_said(importacao, now),
        pagina=page,
        novos=[
            {**n, "preco": format_field("preco", Decimal(n["produto"]["preco"]))}
            for n in page.novos
        ],
        links=links(importacao, now, page),
        eventos=events,
        rotulos=LABELS,
        erro=erro,
        mudaram=changed or [],
        aviso=aviso,
        vazio=planilhas.CLEAR,
    )
    return shown(request, response, aviso)
