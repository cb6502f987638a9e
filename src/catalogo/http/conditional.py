"""Conditional requests (RFC 9110 §13): ETags of a product's version, If-Match, If-None-Match.

An ETag is strong and names everything its representation was made from, so that a browser's
copy made for one visitor is never confirmed (304) to another: the version, the media type
(`json`, or for the edit page `h<templates>`, which also changes when the templates do), and
who was looking (identity.audience: nothing on the spec's open catalog, `-a` for anyone not
signed in once accounts are on, `-u7e` for user 7 as an editor). `"3-json"`,
`"3-h0123456789-u7e"`. A page cache, if one is added, keys its pages by the same tag.

A write names the versions it accepts (If-Match's tags, or the `versao` its body was based on):
only the version counts there, whoever's tag it is. Storage checks them in the same statement
as the write, so the check here is only the early answer.
"""

import re
from collections.abc import Collection

from starlette.requests import Request

from catalogo.domain.errors import PreconditionFailed
from catalogo.domain.produtos import ID_PATTERN, Produto
from catalogo.http import negotiation
from catalogo.http.identity import AUDIENCE_PATTERN, audience
from catalogo.http.negotiation import HTML
from catalogo.services.produtos import Expected

_OUR_ETAG = re.compile(
    rf'"({ID_PATTERN})-(?:json|h[0-9a-f]{{10}})(?:{AUDIENCE_PATTERN})"', re.ASCII
)


def etag(request: Request, produto: Produto, media: str, templates: str) -> str:
    """The one place a validator is made. `templates` is the fingerprint of the pages'
    templates, for the HTML representation."""
    made_as = templates if media == HTML else "json"
    return f'"{produto.versao}-{made_as}{audience(request)}"'


def not_modified(request: Request, current: str) -> bool:
    """If-None-Match on a GET, compared weakly as RFC 9110 §13.1.2 says."""
    header = negotiation.header(request, b"if-none-match")
    if header is None:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or current in tags


def has_preconditions(request: Request) -> bool:
    return (
        negotiation.header(request, b"if-match") is not None
        or negotiation.header(request, b"if-none-match") is not None
    )


def check(request: Request, current: Produto | None) -> None:
    """RFC 9110 §13.2.2: a failed If-Match, or on a write a matching If-None-Match, is 412,
    before anything else about the request is looked at. (A GET's If-None-Match is a 304.) An
    If-Match of tags this service never gives says so, and shows the format."""
    if_match = negotiation.header(request, b"if-match")
    if if_match is not None:
        accepted = accepted_versions(request)
        if accepted is not None and not accepted:
            raise PreconditionFailed(_never_given(if_match.strip()))
        if current is None or (accepted is not None and current.versao not in accepted):
            raise PreconditionFailed()
    if_none_match = negotiation.header(request, b"if-none-match")
    if request.method in ("GET", "HEAD") or if_none_match is None or current is None:
        return
    if if_none_match.strip() == "*" or current.versao in _versions(if_none_match, weak=True):
        raise PreconditionFailed(NONE_MAY_MATCH)


def accepted_versions(request: Request) -> Collection[int] | None:
    """The versions If-Match accepts; None when any will do. Weak tags never match."""
    return _accepted(negotiation.header(request, b"if-match"))


def _accepted(header: str | None) -> Collection[int] | None:
    if header is None or header.strip() == "*":
        return None
    return _versions(header, weak=False)


def expected(request: Request, based_on: int | None = None) -> Expected:
    """The versions a write may find: If-Match's, the body's `versao`, or both at once (the
    header read once: a write's every lookup shows in bench/instructions.py)."""
    sent = negotiation.header(request, b"if-match")
    return Expected(sent is not None, _accepted(sent), based_on)


def _versions(header: str, weak: bool) -> set[int]:
    """The product versions that a list of our ETags names; other tags name none."""
    tags = (tag.strip() for tag in header.split(","))
    return {
        int(match.group(1))
        for tag in tags
        if (match := _OUR_ETAG.fullmatch(tag.removeprefix("W/") if weak else tag))
    }


NONE_MAY_MATCH = (
    "If-None-Match pede que nenhuma versão indicada seja a atual, e o produto está numa delas: "
    "nada foi gravado."
)


def _never_given(sent: str) -> str:
    """Why an If-Match that names no tag this service gives fails: it can match no version,
    and the client is told the format rather than that the product changed."""
    shown = sent if len(sent) <= 80 else sent[:80] + "…"
    weak = " Etiquetas fracas (W/…) nunca valem em If-Match." if "W/" in sent else ""
    return (
        f"If-Match traz {shown}, que não é uma ETag que este serviço dá; nada foi gravado."
        f"{weak} Mande a ETag recebida ao ler o produto como veio, com as aspas: "
        '"3-json" (versão 3, em JSON).'
    )
