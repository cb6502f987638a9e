"""How an error is answered: RFC 9457 problem details for clients that prefer JSON, the site's
error page for everyone else, and the exception handlers the app installs. What is said is
http/errors.py's.

Either answer shows the request's id (http/middleware/outermost.py): the page as "Código da
requisição", the problem as `request_id`; so does every error log line.
"""

import logging
from collections.abc import Callable, Coroutine
from http import HTTPStatus
from typing import Any

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain.produtos import JSON_OPTIONS
from catalogo.http import identity
from catalogo.http.errors import (
    DEFAULT_DETAILS,
    INVALID_FIELDS,
    PAGE_DETAILS,
    RETRY_AFTER,
    TITLES,
    VARY,
    TitledError,
)
from catalogo.http.middleware.outermost import request_id
from catalogo.http.negotiation import PROBLEM, prefers_json
from catalogo.http.pages import templating
from catalogo.runtime import logs
from catalogo.storage import StorageUnavailable

log = logging.getLogger("catalogo")
Handler = Callable[[Request, Exception], Coroutine[Any, Any, Response]]


def problem(
    status: int, detail: str, headers: dict[str, str] | None = None, **members: Any
) -> Response:
    """RFC 9457 problem details; `about:blank` types, so `title` is the status phrase."""
    body = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        **members,
    }
    return Response(orjson.dumps(body, option=JSON_OPTIONS), status, headers, media_type=PROBLEM)


def problem_for(
    request: Request, status: int, detail: str, headers: dict[str, str], **members: Any
) -> Response:
    """`problem` about this request: its path as `instance`, its request id, and `members`,
    what a program acts on (the product as it is now, a fresh report, the ids that moved)."""
    return problem(
        status,
        detail,
        headers,
        instance=request.url.path,
        request_id=request_id(request),
        **members,
    )


def invalid_fields(request: Request, errors: dict[str, str]) -> Response:
    """422 for a JSON client: one message per field, keyed as the form names it."""
    by_field = {f"produto.{field}": message for field, message in errors.items()}
    return problem_for(request, 422, INVALID_FIELDS, VARY, errors=by_field)


def detail_of(request: Request, error: HTTPException) -> str:
    """What went wrong, in Portuguese: our own messages win over Starlette's English phrases."""
    if error.detail != HTTPStatus(error.status_code).phrase:
        return error.detail
    allow = (error.headers or {}).get("Allow", "")
    template = DEFAULT_DETAILS.get(error.status_code, error.detail)
    return template.format(method=request.method, allow=allow)


def respond(request: Request, error: HTTPException) -> Response:
    """Problem details for JSON clients, the site's error page for everyone else."""
    status = error.status_code
    headers = {**(error.headers or {}), **VARY}
    detail = detail_of(request, error)
    id = request_id(request)
    if prefers_json(request):
        answer = problem_for(request, status, detail, headers)
    else:
        if isinstance(error, TitledError):
            title = error.title
        else:
            title = TITLES.get(status, HTTPStatus(status).phrase)
        answer = templating.load().render(
            "erro.html",
            status,
            headers,
            titulo=title,
            detalhe=PAGE_DETAILS.get(status, detail),
            status=status,
            request_id=id,
            quem=identity.visitor(request),  # known once access.Access has looked
        )
    identity.personal(request, answer)
    return answer


async def http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)  # noqa: S101 - Starlette's handler signature
    return respond(request, error)


async def storage_unavailable(request: Request, error: Exception) -> Response:
    log.warning(
        "database unavailable: %s", error, extra=logs.fields(request_id=request_id(request))
    )
    return respond(request, HTTPException(503, headers=RETRY_AFTER))


async def server_error(request: Request, error: Exception) -> Response:
    """500 with the request id to quote; the trace goes only to the log, under that id."""
    code = request_id(request)
    log.error(
        "request %s failed: %s %s",
        code,
        request.method,
        request.url.path,
        exc_info=error,
        extra=logs.fields(request_id=code),
    )
    return respond(request, HTTPException(500))


def handlers() -> dict[Any, Handler]:
    """The exception handlers the app installs: ours first, a bug last."""
    return {
        HTTPException: http_error,
        StorageUnavailable: storage_unavailable,
        Exception: server_error,
    }
