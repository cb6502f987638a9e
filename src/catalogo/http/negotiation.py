"""Which representation a client gets: Accept (RFC 9110 §12.5.1) and the body's own type.

Pure decisions with no error of their own: `preferred` says None when the client's Accept rules
out everything offered, and the caller answers 406 (`resources.negotiate`).
"""

import functools
import math
from collections.abc import Sequence

from python_multipart.multipart import parse_options_header
from starlette.requests import Request

HTML = "text/html"
JSON = "application/json"
PROBLEM = "application/problem+json"
VARY = {"Vary": "Accept"}  # every answer that depends on Accept says so
FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


_HEADERS = "catalogo.headers"
_MEDIA_TYPE = "catalogo.media_type"


def header(request: Request, name: bytes) -> str | None:
    """The first value of the header `name` (lower-case), as Starlette's `request.headers`
    gives it, from a dict made once per request: a request's path asks for five to ten of
    them, and Starlette's Headers looked through every header for each."""
    scope = request.scope
    found: dict[bytes, bytes] | None = scope.get(_HEADERS)
    if found is None:
        found = scope[_HEADERS] = dict(reversed(scope["headers"]))
    value = found.get(name)
    return None if value is None else value.decode("latin-1")


def media_type(request: Request) -> tuple[str, dict[bytes, bytes]]:
    """The request body's media type, lower-cased, and its parameters: read once a request."""
    known: tuple[str, dict[bytes, bytes]] | None = request.scope.get(_MEDIA_TYPE)
    if known is None:
        media, options = parse_options_header(header(request, b"content-type") or "")
        known = request.scope[_MEDIA_TYPE] = (media.decode("latin-1").lower(), options)
    return known


def body_is_json(request: Request) -> bool:
    return header(request, b"content-type") is not None and media_type(request)[0] == JSON


def preferred(request: Request, offered: Sequence[str]) -> str | None:
    """The offered type the client's Accept prefers, or None when it accepts none of them.

    On a tie, and with no Accept at all, the first offered wins, HTML by default, unless the
    client is a program: one that sends JSON, or a bearer token (no browser sends one), gets
    JSON unless its Accept names HTML above it. Generated clients send no Accept, or `*/*`.
    """
    accept = header(request, b"accept")
    best = _best(accept, offered)
    # Who the client is matters only on a tie, or with no Accept: asked first, a program that
    # names JSON (as most do) costs nothing more.
    if best != JSON and JSON in offered and _is_program(request):
        return _best(accept, _json_first(tuple(offered)))
    return best


def prefers_json(request: Request) -> bool:
    """Whether an error should go out as problem details rather than as a page."""
    offered = (JSON, HTML) if _is_program(request) else (HTML, JSON)
    return _best(header(request, b"accept"), (*offered, PROBLEM)) in (JSON, PROBLEM)


@functools.cache  # the few tuples resources offer
def _json_first(offered: tuple[str, ...]) -> tuple[str, ...]:
    return (JSON, *(media for media in offered if media != JSON))


def _is_program(request: Request) -> bool:
    if body_is_json(request):
        return True
    authorization = header(request, b"authorization")
    return authorization is not None and authorization[:7].lower() == "bearer "


def _best(accept: str | None, offered: Sequence[str]) -> str | None:
    if accept is None:
        return offered[0]
    if len(accept) <= 256:  # browsers send a few Accept values over and over
        return _best_cached(accept, tuple(offered))
    return _best_parsed(accept, offered)


@functools.lru_cache(maxsize=128)
def _best_cached(accept: str, offered: tuple[str, ...]) -> str | None:
    return _best_parsed(accept, offered)


def _best_parsed(accept: str, offered: Sequence[str]) -> str | None:
    ranges = _accept_ranges(accept)
    best, best_q = None, 0.0
    for media in offered:
        q = _quality(media, ranges)
        if q > best_q:
            best, best_q = media, q
    return best


def _accept_ranges(accept: str) -> list[tuple[str, str, float]]:
    ranges = []
    for item in accept.split(","):
        media, *params = item.split(";")
        kind, _, subtype = media.strip().lower().partition("/")
        q = 1.0
        for param in params:
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = math.nan
        if kind and subtype and 0 <= q <= 1:  # a malformed range is ignored, not guessed at
            ranges.append((kind, subtype, q))
    return ranges


def _quality(media: str, ranges: list[tuple[str, str, float]]) -> float:
    """The q of the most specific range that matches `media`; 0 when none does."""
    kind, _, subtype = media.partition("/")
    specificity, q = -1, 0.0
    for range_kind, range_subtype, range_q in ranges:
        if (range_kind, range_subtype) == (kind, subtype):
            rank = 2
        elif range_kind == kind and range_subtype == "*":
            rank = 1
        elif (range_kind, range_subtype) == ("*", "*"):
            rank = 0
        else:
            continue
        if rank > specificity:
            specificity, q = rank, range_q
    return q
