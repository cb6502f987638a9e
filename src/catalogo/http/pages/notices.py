"""The one-time notice after a browser's write ("Produto «Caneca» adicionado.", "Senha
alterada."): a flash, as Rails and Django call it, one mechanism for every page.

The write's 303 carries it in a cookie of a minute's life, HttpOnly and SameSite=Lax, never in
the URL (where a reload, a bookmark or a shared link would show it again, and a product's name
would sit in the history and the logs). The page it leads to shows it once, clears the cookie,
and is never stored while it shows one. The cookie holds a kind and what it names (a
product's id and name; an account page's kind), read back against the kinds below: a value
it does not know shows nothing.
"""

import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import lotes
from catalogo.domain.contas import PAPEIS, ContaInvalida, parse_nome
from catalogo.domain.produtos import CAMPOS, ROTULOS, Produto, parse_id
from catalogo.http import templating
from catalogo.http.fast import Prepared, raw, write_cookie
from catalogo.http.listing import Listing
from catalogo.http.negotiation import VARY
from catalogo.http.shared import shared_of
from catalogo.services.produtos import Updated

COOKIE = "aviso"
LIFETIME_S = 60


def redirect(request: Request, location: str, value: str, headers: dict[str, str]) -> Response:
    """303 to `location`, leaving `value` for the page there."""
    response = Prepared(303, raw({"Location": location, **headers}))
    https = shared_of(request).access.over_https(request)
    write_cookie(
        response, COOKIE, urllib.parse.quote(value, safe=""), https=https, max_age=LIFETIME_S
    )
    return response


def left(request: Request) -> str:
    """The notice left for this page, as it was left ("" if none)."""
    return urllib.parse.unquote(request.cookies.get(COOKIE, ""))


def shown(request: Request, response: Response, notice: object) -> Response:
    """`response`, a page that showed `notice` (None: none): never stored if it did, and the
    cookie cleared either way, so a reload does not show it again."""
    if notice is not None:
        response.headers["Cache-Control"] = "no-store"
    if COOKIE in request.cookies:
        response.delete_cookie(COOKIE, httponly=True, samesite="lax")
    return response


_PRODUCT_NOTICES = {
    "adicionado": "Produto «{}» adicionado.",
    "atualizado": "Produto «{}» atualizado.",
    "inalterado": "Nada mudou em «{}»: o que você enviou já era o que estava salvo.",
    "removido": "Produto «{}» removido.",
    "restaurado": "Produto «{}» restaurado.",
    "mesclado": "Produto «{}» atualizado.",
}
_NAMED = 3  # people a merge's notice names; more are "e outras pessoas"


def to_the_list(
    request: Request,
    kind: str,
    produto: Produto,
    listing: Listing,
    back: str | None = None,
) -> Response:
    """The browser's answer to a write: the list page it came from (or `back`, another page of
    ours), with a notice of what was done."""
    return redirect(request, back or listing.url, f"{kind}:{produto.id}:{produto.nome}", VARY)


def after_update(request: Request, updated: Updated, listing: Listing) -> Response:
    """to_the_list after an edit: whether it changed anything, and for a merged edit, which
    fields came from whom."""
    kind = "atualizado" if updated.changed else "inalterado"
    if updated.theirs and updated.changed:
        kind = f"mesclado:{','.join(updated.theirs)}:{','.join(updated.autores[: _NAMED + 1])}"
    return to_the_list(request, kind, updated.produto, listing)


@dataclass(frozen=True)
class Notice:
    """The notice after a write, and the product a removal's "Desfazer" brings back, or the
    import an import's "Desfazer importação" undoes."""

    texto: str
    desfazer: int | None
    importacao: str | None = None
    lote: str | None = None


def product_notice(request: Request) -> Notice | None:
    """The notice a product's write left, if it is one (its kind, id and name read back)."""
    kind, _, rest = left(request).partition(":")
    if kind == "importacao":
        return _import_notice(rest)
    if kind in ("lote", "lote-desfeito"):
        return _batch_notice(kind, rest)
    fields: list[str] = []
    authors: list[str] = []
    if kind == "mesclado":
        named, _, rest = rest.partition(":")
        who, _, rest = rest.partition(":")
        fields, authors = named.split(","), who.split(",")
        if not set(fields) <= set(CAMPOS) or not all(authors):
            return None
    number, _, nome = rest.partition(":")
    id = parse_id(number)
    if kind not in _PRODUCT_NOTICES or not nome or id is None:
        return None
    texto = _PRODUCT_NOTICES[kind].format(shortened(nome))
    if fields:
        campos = _listed([ROTULOS[c].lower() for c in fields])
        texto += f" Mantido também o que {people(authors)} mudou enquanto você editava: {campos}."
    return Notice(texto, id if kind == "removido" else None)


_IMPORT_ID = re.compile(r"[0-9a-f]{32}")


def after_import(
    request: Request, id: str, novos: int, alterados: int, restaurados: int
) -> Response:
    """The browser's answer to a confirmed import: the list, with what it did and its undo."""
    counts = f"{novos}:{alterados}:{restaurados}"
    return redirect(request, "/produtos", f"importacao:{id}:{counts}", VARY)


def _count(text: str) -> int | None:
    """A count a notice carries, as the cookie has it: up to nine ASCII digits. A client may
    send anything here: "²" passes str.isdigit and 5,000 digits pass int()'s nothing."""
    return int(text) if _COUNT.fullmatch(text) else None


_COUNT = re.compile(r"[0-9]{1,9}")


def _import_notice(rest: str) -> Notice | None:
    id, _, counts = rest.partition(":")
    numbers = [_count(number) for number in counts.split(":")]
    if not (_IMPORT_ID.fullmatch(id) and 2 <= len(numbers) <= 3) or None in numbers:
        return None
    n, a, r = (*numbers, 0)[:3]
    assert n is not None and a is not None and r is not None  # noqa: S101 - checked above
    said = [
        f"{n} {'produto novo' if n == 1 else 'produtos novos'}",
        f"{a} {'alterado' if a == 1 else 'alterados'}",
    ]
    if r:
        said.append(f"{r} {'restaurado' if r == 1 else 'restaurados'} de Removidos")
    return Notice(f"Importação aplicada: {', '.join(said[:-1])} e {said[-1]}.", None, id)


def after_batch(
    request: Request, listing: Listing, id: str, pedido: lotes.Pedido, count: int
) -> Response:
    """The browser's answer to a confirmed batch: the list it came from, with what it did (by
    how much), a link to it and its undo."""
    amount = pedido.percentual if pedido.percentual is not None else pedido.preco
    said = f"{pedido.acao}:{count}" + ("" if amount is None else f":{amount}")
    return redirect(request, listing.url, f"lote:{id}:{said}", VARY)


def after_batch_undone(request: Request, listing: Listing, count: int) -> Response:
    return redirect(request, listing.url, f"lote-desfeito:{count}", VARY)


def _batch_notice(kind: str, rest: str) -> Notice | None:
    if kind == "lote-desfeito":
        n = _count(rest)
        if n is None:
            return None
        voltou = "produto voltou ao que era" if n == 1 else "produtos voltaram ao que eram"
        return Notice(f"Lote desfeito: {n} {voltou}.", None)
    id, _, rest = rest.partition(":")
    acao, _, rest = rest.partition(":")
    said, _, amount = rest.partition(":")
    count = _count(said)
    if not (_IMPORT_ID.fullmatch(id) and acao in lotes.ACOES) or count is None:
        return None
    try:
        pedido = lotes.parse_pedido(acao, amount, amount)
    except lotes.LoteInvalido:  # a notice left before amounts were: what it did, in short
        return Notice(lotes.Pedido(acao).done(count), None, lote=id)  # type: ignore[arg-type]
    if pedido.acao == "remover":
        return Notice(pedido.done(count), None, lote=id)
    return Notice(f"{pedido.said()} em {lotes.products(count)}.", None, lote=id)


def after_undo(request: Request, path: str, undone: int) -> Response:
    return redirect(request, path, f"importacao-desfeita:{undone}", {})


def import_undone_notice(request: Request) -> str | None:
    kind, _, count = left(request).partition(":")
    n = _count(count)
    if kind != "importacao-desfeita" or n is None:
        return None
    voltaram = "produto voltou" if n == 1 else "produtos voltaram"
    return f"Importação desfeita: {n} {voltaram} ao que {'era' if n == 1 else 'eram'} antes dela."


def shortened(nome: str, most: int = 80) -> str:
    """A product's name as a notice quotes it: whole, or its first words and an ellipsis."""
    if len(nome) <= most:
        return nome
    cut = nome[: most - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[most // 2 :] else cut).rstrip(" ,.;:-") + "…"


def people(names: list[str]) -> str:
    if len(names) > _NAMED:
        return ", ".join(names[:_NAMED]) + " e outras pessoas"
    return _listed(names)


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " e " + items[-1]


def with_notice(
    request: Request, template: str, headers: dict[str, str], **context: Any
) -> Response:
    """A page that shows the one-time notice of the write before it (a list, the trash): never
    stored while it shows one, and the cookie cleared, so a reload does not show it again."""
    aviso = product_notice(request)
    response = templating.load().render(template, headers=headers, aviso=aviso, **context)
    return shown(request, response, aviso)


_ACCOUNT_NOTICES = {
    "senha": "Senha alterada. As suas outras sessões foram encerradas.",
    "sessao": "Sessão encerrada.",
    "criado": "Usuário criado.",
    "alterado": "Usuário alterado. Se foi desativado, as sessões dele foram encerradas.",
    "revogado": "Token revogado: ele parou de valer agora mesmo.",
    "webhook-removido": "Webhook removido: ele não recebe mais eventos.",
    "webhook-reenviado": "Webhook ligado: os eventos a partir do escolhido vão de novo.",
}


def back_to_account_page(request: Request, path: str, kind: str) -> Response:
    """The 303 after an account page's write (`kind`, one of _ACCOUNT_NOTICES), to `path`."""
    return redirect(request, path, f"conta:{kind}", {})


def account_notice(request: Request) -> str | None:
    kind, _, notice = left(request).partition(":")
    if kind != "conta":
        return None
    notice, _, about = notice.partition(":")
    nome, _, rest = about.partition(":")
    papel, _, ativo = rest.partition(":")
    if papel in PAPEIS and _user_name(nome):  # who, and what they are now
        if notice == "criado":
            return f"Usuário «{nome}» criado, com o papel {papel}."
        if notice == "alterado" and ativo in ("sim", "nao"):
            if ativo == "nao":
                return f"Usuário «{nome}» desativado: as sessões dele foram encerradas."
            return f"Usuário «{nome}» alterado: agora é {papel}, ativo."
    return _ACCOUNT_NOTICES.get(notice)


def _user_name(nome: str) -> bool:
    try:
        return parse_nome(nome) == nome
    except ContaInvalida:
        return False
