"""`catalogo exportar`, `importar` and `desfazer`: the catalog out to a file and in from one,
as the site does it (services/), and an import undone."""

import argparse
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from catalogo.domain import historico
from catalogo.domain.busca import parse_pairs
from catalogo.domain.errors import (
    ChangedSince,
    ImportExpired,
    ImportNotApplied,
    ImportUndone,
    NotFound,
)
from catalogo.domain.produtos import ROTULOS
from catalogo.services import importacoes, previa
from catalogo.services.exportacoes import csv_export, xlsx_export
from catalogo.storage import Storage

# How a command reaches the store: cli._with, bound to the settings.
Run = Callable[[Callable[[Storage], Awaitable[Any]]], Any]

# The list's parameters (domain/busca.py reads them, as it reads a URL's).
LIST_OPTIONS = {
    "q": "só os produtos com estas palavras",
    "ordem": "a ordem, como na lista (padrão: -id)",
    "preco_min": "só deste preço para cima",
    "preco_max": "só deste preço para baixo",
}


def sentence(message: str) -> str:
    """A refusal as the pages word it, as a line of the terminal says it: "não há usuário
    «ana»" for "Não há usuário «ana».", so that both read from one source."""
    return message[0].lower() + message[1:].removesuffix(".")


def plural(count: int, one: str, more: str) -> str:
    return one if count == 1 else more


def export(args: argparse.Namespace, run: Run) -> None:
    """The list's export, to `--saida` or the standard output, as the site sends it."""
    asked = [(name, getattr(args, name)) for name in LIST_OPTIONS if getattr(args, name)]
    query = parse_pairs(asked + [("codigo", c) for c in args.codigo]).query
    with contextlib.ExitStack() as closing:
        out = closing.enter_context(open(args.saida, "wb")) if args.saida else sys.stdout.buffer

        async def write(storage: Storage) -> None:
            if args.formato != "xlsx":
                async for piece in csv_export(storage, query, args.formato):
                    out.write(piece)
                return
            path = await xlsx_export(storage, query)
            try:
                with open(path, "rb") as made:
                    shutil.copyfileobj(made, out)
            finally:
                os.unlink(path)

        run(write)


def import_file(args: argparse.Namespace, run: Run) -> None:
    """What the file would change, row by row (status 1 when a row is in error, and then
    nothing is written); with --confirmar, written in one transaction."""
    with open(args.arquivo, "rb") as file:
        data = file.read()

    async def dry_run_then_apply(storage: Storage) -> tuple[previa.ImportReport, str | None]:
        if not args.confirmar:
            return await previa.dry_run(storage, data, args.codificacao), None
        name = os.path.basename(args.arquivo)
        importacao, report = await importacoes.stage(
            storage, data, args.codificacao, name, historico.CLI, time.time()
        )
        if report.counts["erro"] or not report.counts["novo"] + report.counts["alterado"]:
            return report, None  # nothing written: errors, or nothing to write
        await importacoes.confirm(storage, importacao.id, historico.CLI, None, time.time())
        return report, importacao.id

    report, lote = run(dry_run_then_apply)
    resumo = report.resumo()
    said = [
        f"{resumo['novos']} {plural(resumo['novos'], 'novo', 'novos')}",
        f"{resumo['alterados']} {plural(resumo['alterados'], 'alterado', 'alterados')}",
    ]
    if resumo["restaurados"]:
        r = resumo["restaurados"]
        said.append(f"{r} {plural(r, 'restaurado', 'restaurados')} de Removidos")
    said.append(f"{report.inalterados} {plural(report.inalterados, 'inalterado', 'inalterados')}")
    said.append(f"{resumo['erros']} {plural(resumo['erros'], 'erro', 'erros')}")
    counts = ", ".join(said)
    print(
        f"catalogo: {counts} ({'importação ' + lote + ' gravada' if lote else 'nada foi gravado'})"
    )
    for line in report.lines:
        said = orjson.loads(line.dados)
        if line.tipo == "novo":
            print(f"  linha {said['linha']}: novo, «{said['nome']}»")
        elif line.tipo == "alterado":
            what = "; ".join(
                f"{ROTULOS[m['campo']].lower()} {m['antes']} → {m['depois']}"
                for m in said["alteracoes"]
            )
            print(f"  linha {said['linha']}: produto {said['id']}, {what}")
        else:
            print(f"  {previa.RowError(**said)}")
    if report.ignoradas:
        print(f"  colunas ignoradas: {', '.join(report.ignoradas)}")
    if resumo["erros"]:
        sys.exit(1)


def undo(args: argparse.Namespace, run: Run) -> None:
    """An import undone as one batch, or nothing undone and why."""
    try:
        _, undone = run(
            lambda storage: importacoes.undo(storage, args.lote, historico.CLI, time.time())
        )
    except NotFound:
        sys.exit(f"catalogo: não há importação {args.lote}")
    except ChangedSince as moved:
        sys.exit(f"catalogo: {sentence(moved.message)}")
    except (ImportNotApplied, ImportUndone, ImportExpired) as closed:
        sys.exit(f"catalogo: nada foi desfeito: {sentence(closed.message)}")
    print(
        f"catalogo: importação {args.lote} desfeita: {undone} "
        f"{plural(undone, 'produto voltou', 'produtos voltaram')} ao que eram antes dela"
    )
