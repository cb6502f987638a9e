"""The app factory: the URL surface in one list, the middleware around it, the error pages.

`create_app()` reads settings from the environment when given none, so any ASGI server can
serve `catalogo.app:create_app` as a factory; tests pass their own `Settings`.
"""

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from catalogo import migrations, openapi
from catalogo import pages as pages_module
from catalogo.http import (
    SECURITY_HEADERS,
    Guard,
    prefers_json,
    problem,
)
from catalogo.pages import detalhe_do_erro
from catalogo.produtos import ID_MAXIMO
from catalogo.resources import (
    DocsResource,
    HealthResource,
    InicioResource,
    NovoProdutoResource,
    OpenAPIResource,
    ProdutoResource,
    ProdutosResource,
    ReadyResource,
)
from catalogo.settings import Settings
from catalogo.storage import StorageUnavailable, open_storage

log = logging.getLogger("catalogo")


def numeros_ate(maximo: int) -> str:
    """A regex for the whole numbers 1..maximo written without leading zeros.

    Digit by digit, as one writes "less than" by hand: shorter numbers, then numbers that
    agree with `maximo` up to some digit and are smaller there, then `maximo` itself.
    """
    digitos = str(maximo)
    partes = [f"[1-9][0-9]{{0,{len(digitos) - 2}}}"]
    for i, digito in enumerate(digitos):
        menor = int(digito) - 1
        primeiro = 1 if i == 0 else 0
        if menor >= primeiro:
            resto = len(digitos) - i - 1
            partes.append(f"{digitos[:i]}[{primeiro}-{menor}][0-9]{{{resto}}}")
    partes.append(digitos)
    return "(?:" + "|".join(partes) + ")"


class ProdutoId(Convertor[int]):
    """Ids as DESIGN §2 has them: `novo`, `007`, `0`, `-1` and 2^63 never reach a resource,
    whatever the method, so all of them are 404 and `int()` never sees an overflow."""

    regex = numeros_ate(ID_MAXIMO)

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("produto_id", ProdutoId())


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings or Settings.from_env()
    pages = pages_module.load()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if settings.database == "sqlite":
            migrations.upgrade(settings)  # SQLite migrates itself, for the one-command start
        app.state.schema_head = migrations.head()
        app.state.storage = await open_storage(settings)
        try:
            await migrations.require_current(app.state.storage)
            yield
        finally:
            await app.state.storage.close()

    def error_response(request: Request, erro: HTTPException, **extra: str) -> Response:
        """Problem details for JSON clients, the site's error page for everyone else."""
        if prefers_json(request):
            headers = {**(erro.headers or {}), "Vary": "Accept"}
            detail = detalhe_do_erro(request, erro)
            return problem(erro.status_code, detail, headers, instance=request.url.path, **extra)
        return pages.error(request, erro, **extra)

    async def http_error(request: Request, erro: Exception) -> Response:
        assert isinstance(erro, HTTPException)  # noqa: S101 - Starlette's handler signature
        return error_response(request, erro)

    async def unavailable(request: Request, erro: Exception) -> Response:
        log.warning("database unavailable: %s", erro)
        return error_response(request, HTTPException(503, headers={"Retry-After": "5"}))

    async def server_error(request: Request, erro: Exception) -> Response:
        codigo = uuid.uuid4().hex[:12]
        log.error(
            "request %s failed: %s %s", codigo, request.method, request.url.path, exc_info=erro
        )
        response = error_response(request, HTTPException(500), codigo=codigo)
        response.headers.update({k.decode(): v.decode() for k, v in SECURITY_HEADERS})
        return response

    app = Starlette(
        routes=[
            Route("/produtos/{id:produto_id}", ProdutoResource),
            Route("/produtos", ProdutosResource),
            Route("/produtos/novo", NovoProdutoResource),
            Route("/", InicioResource),
            Route("/healthz", HealthResource),
            Route("/readyz", ReadyResource),
            Route("/openapi.json", OpenAPIResource),
            Route("/docs", DocsResource),
            Mount("/static", StaticFiles(packages=[("catalogo", "static")]), name="static"),
            Mount("/docs/static", StaticFiles(packages=[("swagger_ui", "static")])),
        ],
        middleware=[
            Middleware(Guard, max_bytes=settings.max_body_bytes, error_page=error_response),
        ],
        exception_handlers={
            HTTPException: http_error,
            StorageUnavailable: unavailable,
            Exception: server_error,
        },
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False  # its Location would be built from the client's Host
    app.state.settings = settings
    app.state.pages = pages
    app.state.openapi = orjson.dumps(openapi.document())
    return app
