"""How an error is answered: RFC 9457 problem details for clients that prefer JSON, the site's
error page for everyone else, and the exception handlers the app installs. What is said is
the exception's own (domain/errors.py); the status, the title and the headers are this
module's one table (`STATUSES`, `TITLES`).

Checked in this order: Host (400), cross-site (403), body size and time (413, 408, 400),
method override (400), routing (404, 405), credentials and role (401 or 303, 403), then in the
endpoint: 406; for PUT and DELETE the preconditions (412); the body's type and syntax (415,
400); the fields (422); the write itself (404, 409, 412). A 500 is a bug: a page or problem
with the request id, the trace only in the log, under that id.

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

from catalogo.domain.errors import (
    RETRY_AFTER_S,
    BadRequest,
    CatalogoError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotAcceptable,
    NotFound,
    PreconditionFailed,
    StorageUnavailable,
    TooLarge,
    TooManyTries,
    TooSlow,
    Unauthenticated,
    Unavailable,
    Unsupported,
)
from catalogo.domain.produtos import JSON_OPTIONS
from catalogo.http import identity, templating
from catalogo.http.identity import request_id
from catalogo.http.negotiation import PROBLEM, VARY, prefers_json
from catalogo.runtime import logs

log = logging.getLogger("catalogo")
Handler = Callable[[Request, Exception], Coroutine[Any, Any, Response]]
Refusal = HTTPException | CatalogoError

RETRY_AFTER = {"Retry-After": str(RETRY_AFTER_S)}
CHALLENGE = 'Bearer realm="catalogo"'

# Each kind of refusal (domain/errors.py) and its status; any other exception is a bug (500).
STATUSES: dict[type[CatalogoError], int] = {
    BadRequest: 400,
    Unauthenticated: 401,
    Forbidden: 403,
    NotFound: 404,
    NotAcceptable: 406,
    TooSlow: 408,
    Conflict: 409,
    Gone: 410,
    PreconditionFailed: 412,
    TooLarge: 413,
    Unsupported: 415,
    Invalid: 422,
    TooManyTries: 429,
    Unavailable: 503,
}
TITLES = {
    400: "Requisição inválida",
    401: "Entre para continuar",
    403: "Acesso negado",
    404: "Página não encontrada",
    405: "Método não permitido",
    406: "Formato não disponível",
    408: "Tempo esgotado",
    409: "Conflito de edição",
    412: "Versão desatualizada",
    413: "Conteúdo grande demais",
    415: "Formato não aceito",
    429: "Muitas tentativas",
    500: "Erro interno",
    503: "Serviço indisponível",
}
# What a person reads on the page where a program gets `DEFAULT_DETAILS`' precise words.
PAGE_DETAILS = {
    405: "Esta página não permite essa ação. Use os botões da página ou volte à lista.",
}
DEFAULT_DETAILS = {
    404: "Não há nada neste endereço. Veja a lista de produtos.",
    405: "Este endereço não aceita o método {method}. Aceita: {allow}.",
    406: "Não temos este conteúdo no formato pedido em Accept.",
    500: "Algo deu errado do nosso lado. Tente de novo; se persistir, informe o código abaixo.",
    503: "O banco de dados não respondeu a tempo. Tente de novo em instantes.",
}
INVALID_FIELDS = "Corrija os campos indicados."


def status_of(error: CatalogoError) -> int:
    """The status of the first kind `error` is of (500: none, a bug)."""
    for kind in type(error).__mro__:
        if (status := STATUSES.get(kind)) is not None:
            return status
    return 500


def headers_of(error: CatalogoError) -> dict[str, str]:
    """What HTTP adds to a refusal of this kind."""
    headers = {}
    if error.retry_after is not None:
        headers["Retry-After"] = str(error.retry_after)
    if isinstance(error, Unauthenticated):
        invalid = ', error="invalid_token"' if error.invalid_token else ""
        headers["WWW-Authenticate"] = CHALLENGE + invalid
    elif isinstance(error, TooSlow):
        headers["Connection"] = "close"  # RFC 9110 §15.5.9: the rest of the body is not awaited
    return headers


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


def invalid_fields(request: Request, errors: dict[str, str], **members: str) -> Response:
    """422 for a JSON client: one message per field, keyed as the form names it (and
    `members`, what a program can do about it)."""
    by_field = {f"produto.{field}": message for field, message in errors.items()}
    return problem_for(request, 422, INVALID_FIELDS, VARY, errors=by_field, **members)


def detail_of(request: Request, error: HTTPException) -> str:
    """What went wrong, in Portuguese: our own messages win over Starlette's English phrases."""
    if error.detail != HTTPStatus(error.status_code).phrase:
        return error.detail
    allow = (error.headers or {}).get("Allow", "")
    template = DEFAULT_DETAILS.get(error.status_code, error.detail)
    return template.format(method=request.method, allow=allow)


def respond(request: Request, error: Refusal) -> Response:
    """Problem details for JSON clients, the site's error page for everyone else."""
    if isinstance(error, CatalogoError):
        status, title = status_of(error), error.title
        headers = {**headers_of(error), **VARY}
        detail = error.message or DEFAULT_DETAILS.get(status, HTTPStatus(status).phrase)
    else:  # Starlette's own: routing's 404 and 405
        status, title = error.status_code, None
        headers = {**(error.headers or {}), **VARY}
        detail = detail_of(request, error)
    id = request_id(request)
    if prefers_json(request):
        answer = problem_for(request, status, detail, headers)
    else:
        answer = templating.load().render(
            "erro.html",
            status,
            headers,
            titulo=title or TITLES.get(status, HTTPStatus(status).phrase),
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


async def refused(request: Request, error: Exception) -> Response:
    """A refusal, answered as its kind says; one of no kind is a bug."""
    assert isinstance(error, CatalogoError)  # noqa: S101 - Starlette's handler signature
    if isinstance(error, StorageUnavailable):  # what failed is for the log, not the client
        log.warning(
            "database unavailable: %s", error, extra=logs.fields(request_id=request_id(request))
        )
        return respond(request, HTTPException(503, headers=RETRY_AFTER))
    if status_of(error) == 500:
        return await server_error(request, error)
    return respond(request, error)


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
        CatalogoError: refused,
        Exception: server_error,
    }
