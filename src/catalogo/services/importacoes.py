"""Importing a spreadsheet, each step written once for the page, the JSON API and the CLI (the
service layer's part for imports; domain/planilhas.py reads the file, and storage keeps it).

1. **Stage** (`stage`): the dry run (services/previa.py) reads every row with the form's rules
   against the products it names, and the database keeps the file and the report for
   STAGED_FOR_S, so that any instance can show it or confirm it. Nothing is written to products.
2. **Confirm** (`confirm`): every row or none, in one transaction, only if no product it
   changes moved on since the dry run; otherwise the dry run is made again from the kept file
   (`ImportMoved`, with the fresh report) and nothing is written. Confirming twice applies once.
3. **Undo** (`undo`): the import's batch undone (Storage.undo_batch), if none of its products
   changed since.

The slow parts (reading the file, checking 50,000 rows) run off the event loop, so other
requests keep being answered while an import is read.
"""

import dataclasses
import math
import uuid
from dataclasses import dataclass
from typing import Any

from catalogo.domain import planilhas
from catalogo.domain.errors import (
    CodigoTaken,
    Conflict,
    Gone,
    ImportExpired,
    ImportHasErrors,
    ImportNotApplied,
    ImportUnchanging,
    ImportUndone,
    NotFound,
)
from catalogo.domain.historico import Autoria
from catalogo.services.previa import ImportReport, dry_run, write_of
from catalogo.storage import Importacao, ImportClosed, Storage, VersionConflict
from catalogo.storage.port import LineKind

STAGED_FOR_S = 3600  # how long a dry run may be confirmed
REPORT_PAGE = 100  # lines of each kind on a page of the report
RECENT = 20  # imports on the import page's list


async def stage(
    storage: Storage,
    data: bytes,
    codificacao: planilhas.Codificacao,
    arquivo: str,
    autoria: Autoria,
    now: float,
) -> tuple[Importacao, ImportReport]:
    """The dry run, kept for STAGED_FOR_S under a new id. Raises ImportRefused."""
    report = await dry_run(storage, data, codificacao)
    importacao = Importacao(
        uuid.uuid4().hex,
        arquivo,
        codificacao,
        autoria.quem,
        autoria.token,
        now,
        now + STAGED_FOR_S,
        "preparada",
        report.resumo(),
    )
    await storage.stage_import(importacao, data, report.lines)
    return importacao, report


def expired(importacao: Importacao, now: float) -> bool:
    return importacao.estado == "preparada" and importacao.expira_em <= now


def estado(importacao: Importacao, now: float) -> str:
    """What became of it, as pages and JSON say: `expirada` for a dry run past its hour."""
    return "expirada" if expired(importacao, now) else importacao.estado


class ImportMoved(Conflict):
    """Products the import changes moved on since its dry run: nothing was written, and the
    dry run was made again (`importacao`, its fresh report)."""

    def __init__(self, importacao: Importacao) -> None:
        super().__init__(
            "Produtos desta importação mudaram desde a prévia, e nada foi gravado. O relatório "
            "foi refeito agora: confira e confirme de novo."
        )
        self.importacao = importacao


def changed(resumo: dict[str, Any]) -> int:
    """The products an import changes that it does not create: those it alters and those it
    brings back from Removidos (none in imports staged before restores)."""
    return int(resumo["alterados"]) + int(resumo.get("restaurados", 0))


def confirmable(importacao: Importacao, now: float) -> bool:
    """Whether confirming it would write: a dry run within its hour, no row in error, and
    something to write."""
    resumo = importacao.resumo
    writes = resumo["novos"] + changed(resumo)
    return estado(importacao, now) == "preparada" and not resumo["erros"] and writes > 0


async def confirm(
    storage: Storage, id: str, autoria: Autoria, chave: str | None, now: float
) -> tuple[Importacao, bool]:
    """Applies the import `id` as one batch, and says whether this request applied it (False:
    an earlier one did; confirming twice applies once). Raises NotFound, ImportExpired,
    ImportUndone, ImportHasErrors, ImportUnchanging or ImportMoved; then nothing is written."""
    importacao = await _found(storage, id)
    if importacao.estado == "aplicada":
        return importacao, False
    if importacao.estado != "preparada" or expired(importacao, now):
        raise closed_refusal(importacao, now)
    if importacao.resumo["erros"]:
        raise ImportHasErrors()
    if not confirmable(importacao, now):
        raise ImportUnchanging()
    batch = autoria._replace(origem="importacao", lote=id)
    try:
        await storage.confirm_import(id, write_of, batch, chave, now)
    except ImportClosed as closed:
        if closed.importacao.estado == "aplicada":  # another request confirmed it first
            return closed.importacao, False
        raise closed_refusal(closed.importacao, now) from None
    except (VersionConflict, NotFound, CodigoTaken):
        raise ImportMoved(await _staged_again(storage, importacao, now)) from None
    return await _found(storage, id), True


async def _staged_again(storage: Storage, importacao: Importacao, now: float) -> Importacao:
    """The dry run made again from the kept file, under the same id, for another hour."""
    data = await storage.import_file(importacao.id)
    if data is None:
        raise closed_refusal(importacao, now)
    codificacao: planilhas.Codificacao = (
        "windows-1252" if importacao.codificacao == "windows-1252" else "utf-8"
    )
    report = await dry_run(storage, data, codificacao)
    fresh = dataclasses.replace(importacao, expira_em=now + STAGED_FOR_S, resumo=report.resumo())
    await storage.stage_import(fresh, data, report.lines)
    return fresh


async def undo(storage: Storage, id: str, autoria: Autoria, now: float) -> tuple[Importacao, int]:
    """The import `id` undone, all of it or nothing, as a batch of its own (`id` +
    ":desfeita"), and how many products it gave back. Raises NotFound, ImportNotApplied,
    ImportExpired, ImportUndone or ChangedSince."""
    await _found(storage, id)
    batch = autoria._replace(origem="importacao", lote=f"{id}:desfeita")
    try:
        undone = await storage.undo_import(id, batch, now)
    except ImportClosed as closed:
        raise closed_refusal(closed.importacao, now, undoing=True) from None
    return await _found(storage, id), undone


def closed_refusal(importacao: Importacao, now: float, undoing: bool = False) -> Conflict | Gone:
    """Why an import can no longer be confirmed or undone, as the pages and the CLI say it."""
    if expired(importacao, now):
        return ImportExpired()
    if importacao.estado == "desfeita":
        return ImportUndone(undoing)
    return ImportNotApplied()


async def _found(storage: Storage, id: str) -> Importacao:
    importacao = await storage.importacao(id)
    if importacao is None:
        raise NotFound()
    return importacao


@dataclass(frozen=True)
class ReportPage:
    """One page of a staged import's report: up to REPORT_PAGE lines of each kind (none once
    it is applied: `paginas` then counts pages of its events)."""

    pagina: int
    paginas: int
    erros: list[dict[str, Any]]
    alterados: list[dict[str, Any]]
    novos: list[dict[str, Any]]


async def report_page(storage: Storage, importacao: Importacao, pagina: int) -> ReportPage:
    """Page `pagina` (from 1) of the report; past the last, an empty one."""
    resumo = importacao.resumo
    kept = importacao.estado == "preparada"  # the lines go once the import is applied
    if kept:
        longest = max(resumo["erros"], resumo["novos"], changed(resumo))
    else:  # its events are shown instead, one per product it wrote
        longest = resumo["novos"] + changed(resumo)
    paginas = max(1, math.ceil(longest / REPORT_PAGE))
    offset = (pagina - 1) * REPORT_PAGE

    async def lines(tipo: LineKind) -> list[dict[str, Any]]:
        return await storage.import_lines(importacao.id, tipo, offset, REPORT_PAGE) if kept else []

    return ReportPage(
        pagina, paginas, await lines("erro"), await lines("alterado"), await lines("novo")
    )
