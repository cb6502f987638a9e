"""Importing a spreadsheet, each step written once for the page, the JSON API and the CLI (the
service layer's part for imports; domain/planilhas.py reads the file, and storage keeps it).

1. **Stage** (`stage`): the dry run reads every row with the form's rules against the products
   it names, and the database keeps the file and the report for STAGED_FOR_S, so that any
   instance can show it or confirm it. Nothing is written to products.
2. **Confirm** (`confirm`): every row or none, in one transaction, only if no product it
   changes moved on since the dry run; otherwise the dry run is made again from the kept file
   (`ImportMoved`, with the fresh report) and nothing is written. Confirming twice applies once.
3. **Undo** (`undo`): the import's batch undone (Storage.revert), if none of its products
   changed since.

The slow parts (reading the file, checking 50,000 rows) run off the event loop, so other
requests keep being answered while an import is read.
"""

import asyncio
import dataclasses
import itertools
import math
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple, TypeVar

import orjson

from catalogo.domain import planilhas
from catalogo.domain.busca import codigo_key
from catalogo.domain.errors import (
    CodigoTaken,
    Conflict,
    ImportHasErrors,
    ImportRefused,
    ImportUnchanging,
    NotFound,
)
from catalogo.domain.historico import Autoria
from catalogo.domain.produtos import CAMPOS, ROTULOS, Produto, format_field, validate
from catalogo.services.produtos import live
from catalogo.storage import Importacao, ImportClosed, StagedLine, Storage, VersionConflict, Write
from catalogo.storage.port import LineKind

T = TypeVar("T")
STAGED_FOR_S = 3600  # how long a dry run may be confirmed
REPORT_PAGE = 100  # lines of each kind on a page of the report
RECENT = 20  # imports on the import page's list
LABELS = {"id": "id", "versao": "versão", **{c: r.lower() for c, r in ROTULOS.items()}}


class RowError(NamedTuple):
    """What is wrong with a cell: its line in the file, its column, and the form's message."""

    linha: int
    campo: str
    mensagem: str

    def __str__(self) -> str:
        return f"linha {self.linha}, {LABELS[self.campo]}: {self.mensagem}"


@dataclass(frozen=True)
class Planned:
    """A row that would change the catalog: a new product (`produto_id` None) or the fields
    that would change, each (field, before, after) as pages show them; `write`, what applying
    it writes (an update only if the product is still at the version the dry run saw)."""

    line: int
    produto_id: int | None
    nome: str
    changes: list[tuple[str, str, str]]
    write: Write


@dataclass
class ImportReport:
    """What importing a file would do, before anything is written (a dry run): each line of
    the report as the database keeps it (JSON text: the least memory a 50,000-row file can
    take), in the file's order, and the counts."""

    ignoradas: tuple[str, ...] = ()
    inalterados: int = 0
    lines: list[StagedLine] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_KINDS, 0))

    def resumo(self) -> dict[str, Any]:
        """The counts, as the database keeps them and JSON shows them."""
        return {
            "novos": self.counts["novo"],
            "alterados": self.counts["alterado"],
            "inalterados": self.inalterados,
            "erros": self.counts["erro"],
            "colunas_ignoradas": list(self.ignoradas),
        }

    def of(self, tipo: LineKind) -> list[dict[str, Any]]:
        return [orjson.loads(line.dados) for line in self.lines if line.tipo == tipo]

    @property
    def erros(self) -> list[RowError]:
        return [RowError(**line) for line in self.of("erro")]

    def add(self, tipo: LineKind, dados: dict[str, Any]) -> None:
        self.lines.append(StagedLine(tipo, orjson.dumps(dados).decode()))
        self.counts[tipo] += 1


_KINDS: tuple[LineKind, ...] = ("novo", "alterado", "erro")
ROWS_READ = 1000  # rows read, looked up and checked at a time


def _planned_line(planned: Planned) -> dict[str, Any]:
    produto = planned.write.produto
    return {
        "linha": planned.line,
        "id": planned.produto_id,
        "versao": planned.write.versao,
        "nome": planned.nome,
        "alteracoes": [{"campo": c, "antes": a, "depois": d} for c, a, d in planned.changes],
        "produto": {
            c: None if c == "codigo" and v is None else str(v)
            for c, v in ((c, getattr(produto, c)) for c in CAMPOS)
        },
    }


def write_of(dados: str) -> Write:
    """What confirming writes for a line of the report (`_planned_line`)."""
    line = orjson.loads(dados)
    fields = dict(line["produto"])
    fields["preco"] = Decimal(fields["preco"])
    return Write(line["id"], line["versao"], Produto.model_validate(fields))


async def dry_run(
    storage: Storage, data: bytes, codificacao: planilhas.Codificacao = "utf-8"
) -> ImportReport:
    """Each row read with the form's rules against the products it names (by `id`, else by
    `codigo`, else new), ROWS_READ rows at a time: read and checked off the event loop, their
    products looked up in between, and only the report kept. Raises ImportRefused
    for a file that cannot be read as a whole."""
    head, rows = await _in_thread(lambda: _opened(data, codificacao))
    report = ImportReport(ignoradas=head.unknown)
    lines_of: dict[tuple[str, object], int] = {}
    try:
        while batch := await _in_thread(lambda: list(itertools.islice(rows, ROWS_READ))):
            by_id = await live(storage, "ids", {row.id for row in batch if row.id is not None})
            named = (
                planilhas.code_key(str(r.fields["codigo"])) for r in batch if r.fields.get("codigo")
            )
            codes = {key for key in named if key is not None}
            known = Known(
                by_id,
                await live(storage, "codigos", codes),
                await storage.removed_codes(codes),
            )
            await asyncio.to_thread(_report, report, head, batch, known, lines_of)
    finally:
        rows.close()
    return report


async def _in_thread(work: Callable[[], T]) -> T:
    """`work` in a thread, awaited to its end even when the request is cancelled meanwhile
    (its client hung up): the file's reader it advances is closed only once it has stopped."""
    running = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        await asyncio.wait((running,))
        raise
    finally:  # an error's traceback holds this frame: not the future that holds the error
        del running


def _opened(
    data: bytes, codificacao: planilhas.Codificacao
) -> tuple[planilhas.Header, Generator[planilhas.Row, None, None]]:
    cells = planilhas.lines(data, codificacao)
    first = next(cells, None)
    if first is None:
        raise ImportRefused("O arquivo está vazio.")
    head = planilhas.header(first)
    return head, planilhas.rows(head, cells)


class Known(NamedTuple):
    """What the database holds of a stretch of rows: the live products they name, by id and
    by codigo_key, and the codes removed products keep (their ids, by key)."""

    by_id: dict[Any, Produto]
    by_code: dict[Any, Produto]
    removed: dict[str, int]


def _report(
    report: ImportReport,
    head: planilhas.Header,
    rows: list[planilhas.Row],
    known: Known,
    lines_of: dict[tuple[str, object], int],
) -> None:
    for row in rows:
        planned, problems = _planned(row, head, known, lines_of)
        for campo, mensagem in problems.items():
            report.add("erro", RowError(row.line, campo, mensagem)._asdict())
        if problems or planned is None:
            report.inalterados += not problems
        else:
            report.add("novo" if planned.produto_id is None else "alterado", _planned_line(planned))


def _planned(
    row: planilhas.Row,
    head: planilhas.Header,
    known: Known,
    lines_of: dict[tuple[str, object], int],
) -> tuple[Planned | None, dict[str, str]]:
    """What one row would do (None: nothing), or what is wrong with it."""
    by_id, by_code = known.by_id, known.by_code
    problems = dict(row.errors)
    codigo = row.fields.get("codigo")
    current: Produto | None = None
    if row.id is not None:
        current = by_id.get(row.id)
        if current is None and "id" not in problems:
            problems["id"] = f"Não há produto {row.id} no catálogo (ou ele foi removido)."
    elif codigo:
        current = by_code.get(planilhas.code_key(codigo))
    keys = {"id": row.id, "codigo": planilhas.code_key(codigo) if codigo else None}
    for name, key in keys.items():
        if key is None:
            continue
        if (name, key) in lines_of:
            earlier = lines_of[name, key]
            problems[name] = f"Repetido: a linha {earlier} já traz este {LABELS[name]}."
        lines_of[name, key] = row.line
    if current is not None and row.versao is not None and row.versao != current.versao:
        problems["versao"] = (
            f"O produto {current.id} mudou desde a versão {row.versao} (está na "
            f"{current.versao}): exporte de novo e refaça a alteração."
        )
    if current is None and not {"nome", "preco"} <= set(head.positions):
        problems["nome"] = "Um produto novo precisa das colunas nome e preço."
    if problems:
        return None, problems
    base: dict[str, Any] = {} if current is None else {c: getattr(current, c) for c in CAMPOS}
    given = {c: ("" if v is None else v) for c, v in row.fields.items()}
    if (
        current is not None
        and current.codigo
        and codigo
        and codigo_key(codigo) == codigo_key(current.codigo)
    ):
        del given["codigo"]  # the key it was found by, written otherwise: the stored spelling stays
    produto, invalid = validate({**base, **given})
    if produto is None:
        return None, invalid
    if produto.codigo:
        key = codigo_key(produto.codigo)
        holder = by_code.get(key)
        if holder is not None and current is not None and holder.id != current.id:
            return None, {"codigo": f"O código «{produto.codigo}» já é do produto {holder.id}."}
        kept = known.removed.get(key)
        if kept is not None and (current is None or kept != current.id):
            return None, {"codigo": CodigoTaken(produto.codigo, kept, removed=True).message}
    if current is None:
        return Planned(row.line, None, produto.nome, [], Write(None, None, produto)), {}
    changes = [
        (c, format_field(c, getattr(current, c)), format_field(c, getattr(produto, c)))
        for c in CAMPOS
        if getattr(current, c) != getattr(produto, c)
    ]
    if not changes:
        return None, {}
    if ("produto", current.id) in lines_of:  # one product, named two ways on two rows
        earlier = lines_of["produto", current.id]
        field = "id" if row.id is not None else "codigo"
        return None, {field: f"Repetido: a linha {earlier} já altera o produto {current.id}."}
    lines_of["produto", current.id] = row.line
    write = Write(current.id, current.versao, produto)
    return Planned(row.line, current.id, produto.nome, changes, write), {}


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


def confirmable(importacao: Importacao, now: float) -> bool:
    """Whether confirming it would write: a dry run within its hour, no row in error, and
    something to write."""
    resumo = importacao.resumo
    writes = resumo["novos"] + resumo["alterados"]
    return estado(importacao, now) == "preparada" and not resumo["erros"] and writes > 0


async def confirm(
    storage: Storage, id: str, autoria: Autoria, chave: str | None, now: float
) -> tuple[Importacao, bool]:
    """Applies the import `id` as one batch, and says whether this request applied it (False:
    an earlier one did; confirming twice applies once). Raises NotFound, ImportClosed (undone,
    or expired), ImportHasErrors, ImportUnchanging or ImportMoved; then nothing is written."""
    importacao = await _found(storage, id)
    if importacao.estado == "aplicada":
        return importacao, False
    if importacao.estado != "preparada" or expired(importacao, now):
        raise ImportClosed(importacao)
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
        raise
    except (VersionConflict, NotFound, CodigoTaken):
        raise ImportMoved(await _staged_again(storage, importacao, now)) from None
    return await _found(storage, id), True


async def _staged_again(storage: Storage, importacao: Importacao, now: float) -> Importacao:
    """The dry run made again from the kept file, under the same id, for another hour."""
    data = await storage.import_file(importacao.id)
    if data is None:
        raise ImportClosed(importacao)
    codificacao: planilhas.Codificacao = (
        "windows-1252" if importacao.codificacao == "windows-1252" else "utf-8"
    )
    report = await dry_run(storage, data, codificacao)
    fresh = dataclasses.replace(importacao, expira_em=now + STAGED_FOR_S, resumo=report.resumo())
    await storage.stage_import(fresh, data, report.lines)
    return fresh


async def undo(storage: Storage, id: str, autoria: Autoria, now: float) -> tuple[Importacao, int]:
    """The import `id` undone, all of it or nothing, as a batch of its own (`id` +
    ":desfeita"), and how many products it gave back. Raises NotFound, ImportClosed (not
    applied, or undone already) or ChangedSince."""
    await _found(storage, id)
    batch = autoria._replace(origem="importacao", lote=f"{id}:desfeita")
    undone = await storage.undo_import(id, batch, now)
    return await _found(storage, id), undone


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
        longest = max(resumo["erros"], resumo["novos"], resumo["alterados"])
    else:  # its events are shown instead, one per product it wrote
        longest = resumo["novos"] + resumo["alterados"]
    paginas = max(1, math.ceil(longest / REPORT_PAGE))
    offset = (pagina - 1) * REPORT_PAGE

    async def lines(tipo: LineKind) -> list[dict[str, Any]]:
        return await storage.import_lines(importacao.id, tipo, offset, REPORT_PAGE) if kept else []

    return ReportPage(
        pagina, paginas, await lines("erro"), await lines("alterado"), await lines("novo")
    )
