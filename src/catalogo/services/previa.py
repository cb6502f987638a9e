"""An import's dry run ("prévia"): every row of the file read with the form's rules against the
products it names, and what confirming would do to each (services/importacoes.py stages it,
confirms it and undoes it). The file is read and checked off the event loop, so other requests
keep being answered while 50,000 rows are read.
"""

import asyncio
import itertools
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple, TypeVar

import orjson

from catalogo.domain import planilhas
from catalogo.domain.busca import codigo_key
from catalogo.domain.errors import (
    CodigoTaken,
    ImportRefused,
)
from catalogo.domain.produtos import CAMPOS, ROTULOS, Produto, format_field, validate
from catalogo.services.produtos import live
from catalogo.storage import StagedLine, Storage, Write
from catalogo.storage.port import LineKind

T = TypeVar("T")
LABELS = {"id": "id", "versao": "versão", **{c: r.lower() for c, r in ROTULOS.items()}}


class RowError(NamedTuple):
    """What is wrong with a cell: its line in the file, its column, the form's message, and
    the cell as the file has it (None where the message quotes it, or it was empty)."""

    linha: int
    campo: str
    mensagem: str
    valor: str | None = None

    def __str__(self) -> str:
        return f"linha {self.linha}, {LABELS[self.campo]}: {self.mensagem}"


@dataclass(frozen=True)
class Planned:
    """A row that would change the catalog: a new product (`produto_id` None) or the fields
    that would change, each (field, before, after) as pages show them; `write`, what applying
    it writes (an update only if the product is still at the version the dry run saw; a
    restore, `write.restored`, when the row names a removed product's code)."""

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
    restaurados: int = 0  # of the "alterado" lines, those that bring a removed product back
    lines: list[StagedLine] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_KINDS, 0))

    def resumo(self) -> dict[str, Any]:
        """The counts, as the database keeps them and JSON shows them."""
        return {
            "novos": self.counts["novo"],
            "alterados": self.counts["alterado"] - self.restaurados,
            "restaurados": self.restaurados,
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
        self.restaurados += bool(dados.get("restaura"))


_KINDS: tuple[LineKind, ...] = ("novo", "alterado", "erro")
ROWS_READ = 1000  # rows read, looked up and checked at a time


def _planned_line(planned: Planned) -> dict[str, Any]:
    produto = planned.write.produto
    line = {
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
    if planned.write.restored:
        line["restaura"] = True
    return line


def write_of(dados: str) -> Write:
    """What confirming writes for a line of the report (`_planned_line`)."""
    line = orjson.loads(dados)
    fields = dict(line["produto"])
    fields["preco"] = Decimal(fields["preco"])
    produto = Produto.model_validate(fields)
    return Write(line["id"], line["versao"], produto, restored=line.get("restaura", False))


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
                planilhas.cell_codigo_key(str(r.fields["codigo"]))
                for r in batch
                if r.fields.get("codigo")
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
    by codigo_key, and the removed products that keep their codes (by key)."""

    by_id: dict[Any, Produto]
    by_code: dict[Any, Produto]
    removed: dict[str, Produto]


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
            valor = row.fields.get(campo)
            report.add("erro", RowError(row.line, campo, mensagem, valor)._asdict())
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
    """What one row would do (None: nothing), or what is wrong with it. A row that names by
    its code a product in Removidos (an import undone, then the sheet fixed and sent again)
    brings it back with the row's values (docs/importing.md)."""
    by_id, by_code = known.by_id, known.by_code
    problems = dict(row.errors)
    codigo = row.fields.get("codigo")
    current: Produto | None = None
    restores = False
    if row.id is not None:
        current = by_id.get(row.id)
        if current is None and "id" not in problems:
            problems["id"] = f"Não há produto {row.id} no catálogo (ou ele foi removido)."
    elif codigo:
        named = planilhas.cell_codigo_key(codigo)
        current = by_code.get(named)
        if current is None and named is not None and named in known.removed:
            current, restores = known.removed[named], True
    keys = {"id": row.id, "codigo": planilhas.cell_codigo_key(codigo) if codigo else None}
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
        if kept is not None and (current is None or kept.id != current.id):
            return None, {"codigo": CodigoTaken(produto.codigo, kept.id or 0, removed=True).message}
    if current is None:
        return Planned(row.line, None, produto.nome, [], Write(None, None, produto)), {}
    changes = [
        (c, format_field(c, getattr(current, c)), format_field(c, getattr(produto, c)))
        for c in CAMPOS
        if getattr(current, c) != getattr(produto, c)
    ]
    if not changes and not restores:
        return None, {}
    if ("produto", current.id) in lines_of:  # one product, named two ways on two rows
        earlier = lines_of["produto", current.id]
        field = "id" if row.id is not None else "codigo"
        return None, {field: f"Repetido: a linha {earlier} já altera o produto {current.id}."}
    lines_of["produto", current.id] = row.line
    write = Write(current.id, current.versao, produto, restored=restores)
    return Planned(row.line, current.id, produto.nome, changes, write), {}
