"""Changing many products at once, each step written once for the pages and the JSON API (the
service layer's part for batches; domain/lotes.py has the rules). Django admin's actions are the
anchor: choose products, choose an action, read what it would do, confirm.

1. **Plan** (`selected`, then `plan`): the products chosen by id, or every product a list's
   search finds (the list's own query, so "all N" is exactly what its count said), each with
   what it would become. Nothing is written; the plan carries each product's id and version
   (`lotes.selection`) and the batch's id, for the confirmation.
2. **Confirm** (`confirm`): every product of the selection or none, in one transaction, only if
   each is still at the version the plan showed (else `BatchMoved`, nothing written). Each gets an
   event, `origem` lote and the batch's id in `lote`; a batch whose id has events is done
   already, and confirming it again writes nothing (a double click, a retry).
3. **Undo** (`undo`): Storage.undo_batch, as an import's undo.
"""

import asyncio
import dataclasses
import hashlib
import urllib.parse
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple

from catalogo.domain import lotes
from catalogo.domain.busca import Query, parse_pairs
from catalogo.domain.errors import Conflict, NotFound
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.lotes import BatchRefused, BatchUndone, LoteInvalido, Pedido
from catalogo.domain.produtos import Produto
from catalogo.services.produtos import live
from catalogo.storage import Storage, VersionConflict, Write


@dataclass(frozen=True)
class Item:
    """A product of the plan, and the price it would get (None: it is removed, or it is left
    out of the plan)."""

    produto: Produto
    depois: Decimal | None


@dataclass(frozen=True)
class Plan:
    pedido: Pedido
    itens: list[Item]  # what confirming writes
    recusados: list[Item]  # left out: their new price would not be a price
    lote: str

    @property
    def seen(self) -> list[tuple[int, int]]:
        return [(i.produto.id or 0, i.produto.versao or 0) for i in self.itens]

    @property
    def selecao(self) -> str:
        return lotes.selection(self.seen)


class BatchMoved(Conflict):
    """Products of the batch changed (or went) since it was shown (`ids`): nothing written;
    the message says so, as the fresh confirmation shows it."""

    def __init__(self, ids: list[int]) -> None:
        named = f" ({', '.join(map(str, ids[:20]))})" if ids else ""
        super().__init__(
            f"Produtos do lote mudaram ou foram removidos desde a confirmação{named}, e nada foi "
            "gravado. Esta é a confirmação refeita agora: confira e confirme de novo."
        )
        self.ids = ids


@dataclass(frozen=True)
class Asked:
    """A batch as a form or a program asks for it: what to do (`pedido`), and which products:
    a confirmation's selection (`selecao`), or ids (with the versions a program saw them at,
    `versoes`), or every product of a list's search (`busca`, its query string)."""

    pedido: Pedido
    ids: list[int] = field(default_factory=list)
    versoes: dict[int, int] = field(default_factory=dict)
    busca: str | None = None
    selecao: str | None = None

    @property
    def named(self) -> str:
        """Which products a keyed request names, as written: its selection, ids or search."""
        if self.selecao:
            return self.selecao
        return f"{sorted(self.ids)} {self.busca or ''}"


class Confirmed(NamedTuple):
    """A batch written: its id, how many products it wrote, and whether this request wrote
    them (`now`; False for a replay of one that already had)."""

    lote: str
    total: int
    now: bool


async def preview(storage: Storage, asked: Asked, asker: str, most: int) -> Plan:
    """What the batch would do (nothing written): the confirmation's content. Raises
    LoteInvalido."""
    produtos = await selected(storage, asked.ids or None, asked.busca, most)
    return await asyncio.to_thread(plan, asked.pedido, produtos, asker)


async def confirm_asked(
    storage: Storage, asked: Asked, asker: str, keyed: bool, autoria: Autoria, most: int
) -> Confirmed:
    """The batch written (`confirm`): the confirmation's selection, or for a program that
    confirms at once, what the plan of its ids or search would change. A request with an
    Idempotency-Key (`keyed`) names its batch by what it asks, so that its retry is a replay
    even when the products it named have changed since. Raises BatchMoved or LoteInvalido."""
    keyed_id = batch_id(asker, asked.pedido, asked.named) if keyed else None
    if keyed_id and await applied(storage, keyed_id):
        return Confirmed(keyed_id, await written(storage, keyed_id, most), False)
    seen = await _seen(storage, asked, most)
    lote = keyed_id or batch_id(asker, asked.pedido, lotes.selection(seen))
    count, now = await confirm(storage, asked.pedido, seen, lote, autoria)
    return Confirmed(lote, count, now)


async def replan(storage: Storage, asked: Asked, asker: str, most: int, moved: BatchMoved) -> Plan:
    """After BatchMoved: the confirmation made again, of the same search or of the same
    products (those that are left). Raises BatchRefused when none is left."""
    if asked.selecao and not asked.busca:
        ids = [id for id, _ in lotes.parse_selection(asked.selecao, most)]
        asked = dataclasses.replace(asked, ids=ids)
    try:
        return await preview(storage, asked, asker, most)
    except LoteInvalido as gone:
        raise BatchRefused(f"{moved.message} {gone}") from None


async def _seen(storage: Storage, asked: Asked, most: int) -> list[tuple[int, int]]:
    """Each product to write, and the version it must still be at: the confirmation's
    selection, or (a program confirming at once) what the plan of the ids or the search it
    sent would change, at the versions it sent or else as they are now."""
    if asked.selecao:
        return lotes.parse_selection(asked.selecao, most)
    produtos = await selected(storage, asked.ids or None, asked.busca, most)
    planned = plan(asked.pedido, produtos, "")
    return [
        (i.produto.id or 0, asked.versoes.get(i.produto.id or 0, i.produto.versao or 0))
        for i in planned.itens
    ]


def batch_id(asker: str, pedido: Pedido, which: str) -> str:
    """A batch's id, made of who asks (their scope, and their Idempotency-Key if any), what,
    and which products (a confirmation's selection, or the ids or search a keyed request
    names): the same request sent twice (a double click, a retry) names the same batch, which
    is written once; anything else, another batch. No id a client sends is taken, so none can
    name another's batch or an import."""
    made = f"{asker}\n{pedido}\n{which}"
    return hashlib.sha256(made.encode()).hexdigest()[:32]


async def written(storage: Storage, lote: str, most: int) -> int:
    """How many products the batch `lote` wrote (up to `most`)."""
    return len(await storage.batch_events(lote, 0, most))


async def selected(
    storage: Storage, ids: list[int] | None, busca: str | None, most: int
) -> list[Produto]:
    """The live products chosen: `ids` (an unknown or removed one is named), or every one the
    list's query string `busca` finds, in its order, as of one moment. Raises LoteInvalido."""
    if busca is not None:
        query = _query_of(busca)
        found: list[Produto] = []
        chunks = storage.export(query)
        try:
            async for chunk in chunks:
                found += chunk
                if len(found) > most:
                    raise LoteInvalido(_too_many(most, busca=True))
        finally:
            await chunks.aclose()
        if not found:
            raise LoteInvalido("Nenhum produto nesta busca.")
        return found
    if not ids:
        raise LoteInvalido(
            "Selecione ao menos um produto: marque a caixa ao lado de cada um na lista.", "id"
        )
    if len(set(ids)) > most:
        raise LoteInvalido(_too_many(most))
    by_id = await live(storage, "ids", set(ids))
    missing = sorted(set(ids) - set(by_id))
    if missing:
        raise LoteInvalido(
            f"Não há {'o produto' if len(missing) == 1 else 'os produtos'} "
            f"{', '.join(map(str, missing[:20]))} no catálogo (ou foram removidos)."
        )
    return [by_id[id] for id in dict.fromkeys(ids)]


def _too_many(most: int, busca: bool = False) -> str:
    limit = f"{most:,}".replace(",", ".")
    if busca:
        return f"A busca tem mais de {limit} produtos: um lote leva até {limit}. Refine a busca."
    return f"Um lote leva até {limit} produtos."


def _query_of(busca: str) -> Query:
    try:
        pairs = urllib.parse.parse_qsl(busca, keep_blank_values=True, strict_parsing=False)
        return parse_pairs(pairs).query
    except ValueError as error:  # ListingError is one
        raise LoteInvalido(f"busca: {error}") from None


def plan(pedido: Pedido, produtos: list[Produto], asker: str) -> Plan:
    itens: list[Item] = []
    recusados: list[Item] = []
    for produto in produtos:
        if pedido.acao == "remover":
            itens.append(Item(produto, None))
            continue
        depois = lotes.new_price(pedido, produto.preco)
        if depois is None:
            recusados.append(Item(produto, None))
        elif depois != produto.preco:
            itens.append(Item(produto, depois))
    seen = [(i.produto.id or 0, i.produto.versao or 0) for i in itens]
    return Plan(pedido, itens, recusados, batch_id(asker, pedido, lotes.selection(seen)))


@dataclass(frozen=True)
class Told:
    """A batch as its page tells it: what it did, in words, and its undo's first event (when
    and by whom it was undone), if it was."""

    said: str
    undone: Evento | None


async def told(storage: Storage, lote: str, events: list[Evento], most: int) -> Told:
    """`events`: a page of the batch's, which say what it did (domain/lotes.described)."""
    total = await written(storage, lote, most)
    undo = await storage.batch_events(f"{lote}:desfeita", 0, 1)
    return Told(lotes.described(events, total), undo[0] if undo else None)


async def applied(storage: Storage, lote: str) -> bool:
    """Whether the batch `lote` was written: it has events, and they are a batch's (an
    import's id is never a batch's)."""
    first = await storage.batch_events(lote, 0, 1)
    return bool(first) and first[0].origem == "lote"


async def confirm(
    storage: Storage,
    pedido: Pedido,
    seen: list[tuple[int, int]],
    lote: str,
    autoria: Autoria,
) -> tuple[int, bool]:
    """Writes the batch `lote` (each product as `pedido` makes it, from the version in
    `seen`), and says how many products it wrote and whether this call wrote them (False: an
    earlier one did). Raises BatchMoved or LoteInvalido (a price that no longer fits)."""
    if await applied(storage, lote):
        return len(seen), False
    if not seen:
        raise LoteInvalido("Nenhum produto mudaria.")
    current = await live(storage, "ids", {id for id, _ in seen})
    moved = [id for id, versao in seen if id not in current or current[id].versao != versao]
    try:
        if moved:
            raise BatchMoved(moved)
        writes = await asyncio.to_thread(_writes, pedido, seen, current)
        try:
            await storage.write_many(writes, autoria._replace(origem="lote", lote=lote))
        except VersionConflict as conflict:
            raise BatchMoved([conflict.current.id or 0]) from None
        except NotFound:
            raise BatchMoved([]) from None
    except BatchMoved:
        # Its twin (a double click a balancer sent to another instance, a retry) may have
        # written these very products since this call first looked: then this is a replay.
        if await applied(storage, lote):
            return len(seen), False
        raise
    return len(writes), True


def _writes(
    pedido: Pedido, seen: list[tuple[int, int]], current: dict[int, Produto]
) -> list[Write]:
    """What confirming writes (off the event loop: 10,000 products take tens of ms)."""
    writes = []
    for id, versao in seen:
        produto = current[id]
        if pedido.acao == "remover":
            writes.append(Write(id, versao, produto, removed=True))
            continue
        depois = lotes.new_price(pedido, produto.preco)
        if depois is None:
            raise LoteInvalido(f"O novo preço do produto {id} ficaria fora do permitido.")
        writes.append(Write(id, versao, produto.model_copy(update={"preco": depois})))
    return writes


async def undo(storage: Storage, lote: str, autoria: Autoria) -> int:
    """The batch `lote` undone as a batch of its own (`lote` + ":desfeita"): how many products
    it gave back. Raises NotFound, BatchUndone or ChangedSince."""
    if not await applied(storage, lote):
        raise NotFound()
    if await applied(storage, f"{lote}:desfeita"):
        raise BatchUndone()
    return await storage.undo_batch(lote, autoria._replace(origem="lote", lote=f"{lote}:desfeita"))


def representation(plan: Plan) -> dict[str, Any]:
    """A plan as JSON clients see it: what to send back to confirm it."""

    def item(i: Item) -> dict[str, Any]:
        p = i.produto
        antes = str(p.preco)
        return {
            "id": p.id,
            "versao": p.versao,
            "nome": p.nome,
            "antes": antes,
            "depois": None if i.depois is None else str(i.depois),
        }

    return {
        "acao": plan.pedido.acao,
        "percentual": None
        if plan.pedido.percentual is None
        else f"{plan.pedido.percentual.normalize():f}",
        "preco": None if plan.pedido.preco is None else str(plan.pedido.preco),
        "total": len(plan.itens),
        "itens": [item(i) for i in plan.itens],
        "recusados": [item(i) for i in plan.recusados],
        "selecao": plan.selecao,
        "lote": plan.lote,
    }
