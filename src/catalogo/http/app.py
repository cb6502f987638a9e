"""The app factory: the URL surface in one list, the guard around it, the error handlers.

`create_app()` reads settings from the environment when given none, so any ASGI server can
serve `catalogo.http.app:create_app` as a factory; tests pass their own `Settings`.
"""

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from catalogo.domain.keyring import Keyring
from catalogo.domain.produtos import ID_PATTERN
from catalogo.domain.senhas import Passwords
from catalogo.http import openapi, problems
from catalogo.http.access import Access
from catalogo.http.fast import Router
from catalogo.http.middleware.guard import SECURITY_HEADERS, Guard
from catalogo.http.middleware.outermost import Handlers, LastResort, Outermost
from catalogo.http.openapi.served import DocsResource, OpenAPIResource
from catalogo.http.resources.contas import (
    ContaResource,
    EntrarResource,
    SairResource,
    SenhaResource,
    SessaoResource,
    SessoesResource,
    TokenResource,
    TokensResource,
    UsuarioResource,
    UsuariosResource,
)
from catalogo.http.resources.historico import (
    EventosResource,
    HistoricoResource,
    RemovidosResource,
    RestauracaoResource,
)
from catalogo.http.resources.importacoes import (
    ConfirmacaoResource,
    ImportacaoResource,
    ImportacoesResource,
    ModeloResource,
    ReversaoResource,
)
from catalogo.http.resources.lotes import LoteItemResource, LoteResource, LoteReversaoResource
from catalogo.http.resources.ops import HealthResource, InicioResource, ReadyResource
from catalogo.http.resources.produtos import NovoProdutoResource, ProdutoResource, ProdutosResource
from catalogo.http.resources.webhooks import ReenvioResource, WebhookResource, WebhooksResource
from catalogo.http.shared import Shared
from catalogo.runtime import logs, time_zone
from catalogo.runtime.settings import Settings
from catalogo.services import delivery
from catalogo.storage import Instruments, migrations, open_storage
from catalogo.storage.migrations import HEAD
from catalogo.storage.sqlite.store import schema_version_of

GC_THRESHOLDS = (20_000, 20, 20)  # the collector's, while an app serves (the lifespan's comment)


class ProdutoId(Convertor[int]):
    """Ids as docs/behaviour.md has them: `novo`, `007`, `0`, `-1` and 2^63 never reach a resource,
    whatever the method, so all of them are 404 and `int()` never sees an overflow."""

    regex = ID_PATTERN

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


class LoteId(Convertor[str]):
    """The id of a write of many products, a batch's or an import's (the `lote` of their
    events): 32 lowercase hex digits (services/lotes.py and services/importacoes.py make them),
    nothing else."""

    regex = "[0-9a-f]{32}"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("produto_id", ProdutoId())
register_url_convertor("lote", LoteId())
register_url_convertor("id", ProdutoId())  # sessions' and tokens' ids follow the same rule


class Catalogo(Starlette):
    """Starlette with the access log (http/middleware/outermost.py) outermost, in the place of
    Starlette's ServerErrorMiddleware and ExceptionMiddleware, whose work it does: it sees every
    answer, a
    500 too, and gives each its request id first; and a request goes through two layers fewer.
    Inside it, the middleware given, then the router. `shared` is set at start-up: an
    attribute of its own, since reading one of Starlette's `app.state` fails a lookup first and
    cost a request a microsecond each of the two or three times it is read."""

    shared: Shared
    description: openapi.Description  # http/openapi/served.py serves it

    def __init__(
        self, access_log: Callable[[ASGIApp, LastResort, Handlers], ASGIApp], **options: Any
    ) -> None:
        super().__init__(**options)
        self.router = Router(options["routes"], lifespan=options["lifespan"])
        self._access_log = access_log

    def build_middleware_stack(self) -> ASGIApp:
        handlers = dict(self.exception_handlers)
        last_resort = handlers.pop(Exception)
        app: ASGIApp = self.router
        for cls, args, kwargs in reversed(self.user_middleware):
            app = cls(app, *args, **kwargs)
        return self._access_log(app, last_resort, handlers)


def create_app(settings: Settings | None = None) -> Catalogo:
    settings = settings or Settings.from_env()
    logs.configure()
    time_zone.use(settings.time_zone)
    instruments = Instruments()
    observe = None
    reports = delivery.Instruments()
    if settings.metrics_port is not None:
        from catalogo.runtime.metrics import Recorder

        recorder = Recorder()
        instruments = Instruments(recorder.commit_size, recorder.connections_taken)
        observe = recorder.observe
        reports = delivery.Instruments(recorder.webhook_delivery, recorder.webhook_backlog)

    # The URL surface; the API description is checked against it (openapi.Description).
    routes: list[BaseRoute] = [
        Route("/produtos/{id:produto_id}", ProdutoResource),
        Route("/produtos/{id:produto_id}/restauracao", RestauracaoResource),
        Route("/produtos/{id:produto_id}/historico", HistoricoResource),
        Route("/produtos", ProdutosResource),
        Route("/produtos/novo", NovoProdutoResource),
        Route("/produtos/removidos", RemovidosResource),
        Route("/produtos/eventos", EventosResource),
        Route("/produtos/lote", LoteResource),
        Route("/produtos/lote/{id:lote}", LoteItemResource),
        Route("/produtos/lote/{id:lote}/reversao", LoteReversaoResource),
        Route("/produtos/importacoes", ImportacoesResource),
        Route("/produtos/importacoes/modelo", ModeloResource),
        Route("/produtos/importacoes/{id:lote}", ImportacaoResource),
        Route("/produtos/importacoes/{id:lote}/confirmacao", ConfirmacaoResource),
        Route("/produtos/importacoes/{id:lote}/reversao", ReversaoResource),
        Route("/entrar", EntrarResource),
        Route("/sair", SairResource),
        Route("/conta", ContaResource),
        Route("/conta/senha", SenhaResource),
        Route("/conta/sessoes", SessoesResource),
        Route("/conta/sessoes/{id:id}", SessaoResource),
        Route("/usuarios", UsuariosResource),
        Route("/usuarios/{nome}", UsuarioResource),
        Route("/tokens", TokensResource),
        Route("/tokens/{id:id}", TokenResource),
        Route("/webhooks", WebhooksResource),
        Route("/webhooks/{id:id}", WebhookResource),
        Route("/webhooks/{id:id}/reenvio", ReenvioResource),
        Route("/", InicioResource),
        Route("/healthz", HealthResource),
        Route("/readyz", ReadyResource),
        Route("/openapi.json", OpenAPIResource),
        Route("/docs", DocsResource),
        Mount("/static", StaticFiles(packages=[("catalogo.http", "static")]), name="static"),
    ]
    description = openapi.Description(routes)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        thresholds = gc.get_threshold()
        if settings.database == "sqlite" and migrations.behind(
            schema_version_of(settings.sqlite_path)
        ):
            migrations.upgrade(settings)  # SQLite migrates itself, for the one-command start
        storage = await open_storage(settings, instruments)
        try:
            await migrations.require_current(storage)
            assert isinstance(app, Catalogo)  # noqa: S101 - the app below
            app.shared = Shared(
                settings,
                storage,
                HEAD,
                Access(settings, storage),
                Passwords(),
                Keyring(settings.webhook_keys),
            )
            # What start-up made lives as long as the worker: out of the collector's sight, so
            # that its full collections (which a long export's millions of short-lived objects
            # bring about) stop holding every request for 50 ms (bench/results/history.md). Given
            # back at the end, for a process that starts apps again (the tests). Both are a
            # splice of the collector's lists: no collection, no cost.
            gc.freeze()
            # A request makes hundreds of objects the collector tracks, nearly all freed by
            # their count at its end: at Python's 700 a young collection ran every request or
            # two. At GC_THRESHOLDS updates answered 5-8% more, edit pages 3% (the same run,
            # alternating); what a cycle holds waits a little longer.
            gc.set_threshold(*GC_THRESHOLDS)
            deliverer = delivery.Deliverer(
                storage, settings.webhook_networks, reports, app.shared.keyring
            )
            webhooks_sent = asyncio.create_task(deliverer.run(), name="catalogo-webhooks")
            try:
                yield
            finally:
                webhooks_sent.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await webhooks_sent
                await deliverer.close()
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            await storage.close()

    app = Catalogo(
        lambda inner, last_resort, handlers: Outermost(
            inner, settings.access_log, last_resort, SECURITY_HEADERS, observe, handlers
        ),
        routes=routes,
        middleware=[Middleware(Guard, settings=settings)],
        exception_handlers=problems.handlers(),
        lifespan=lifespan,
    )
    app.description = description
    app.router.redirect_slashes = False  # its Location would be built from the client's Host
    return app
