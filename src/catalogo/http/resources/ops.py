"""The URIs around the product: the front door, health for load balancers, the API docs."""

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain.errors import SchemaNotCurrent
from catalogo.http.access import Need
from catalogo.http.negotiation import HTML, JSON, VARY
from catalogo.http.pages import templating
from catalogo.http.resources import Resource, json_response, negotiate, shared_of

_NO_STORE = {"Cache-Control": "no-store"}
_PUBLIC = {"GET": Need.PUBLIC, "HEAD": Need.PUBLIC, "OPTIONS": Need.PUBLIC}


class InicioResource(Resource):
    """/: the site has one resource, so its front door is the list."""

    async def get(self, request: Request) -> Response:
        return Response(status_code=302, headers={"Location": "/produtos"})


class HealthResource(Resource):
    """/healthz: the process is up and answering; it asks nothing of the database."""

    needs = _PUBLIC

    async def get(self, request: Request) -> Response:
        return json_response({"status": "ok"}, headers=_NO_STORE)


class ReadyResource(Resource):
    """/readyz: ready for traffic: the database answers and its schema is the code's."""

    needs = _PUBLIC

    async def get(self, request: Request) -> Response:
        shared = shared_of(request)
        found = await shared.storage.schema_version()  # unreachable: StorageUnavailable, 503
        if found != shared.schema_head:
            raise SchemaNotCurrent(found, shared.schema_head)
        return json_response({"status": "ready", "schema": found}, headers=_NO_STORE)


class OpenAPIResource(Resource):
    """/openapi.json: the API description for the mode the app is in now (openapi/)."""

    async def get(self, request: Request) -> Response:
        shared = shared_of(request)
        document = shared.description.document(await shared.access.mode())
        return Response(document.json, media_type=JSON, headers={"Cache-Control": "no-cache"})


class DocsResource(Resource):
    """/docs: the same description as a page for people (http/openapi/page.py). Its curl example
    names the address the page was read from: the scheme as the client used it (a trusted
    balancer's TLS counts) and the Host it sent, which http/middleware/guard.py has already checked
    against CATALOGO_ALLOWED_HOSTS (a Host-less HTTP/1.0 request gets the server's own address)."""

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        shared = shared_of(request)
        document = shared.description.document(await shared.access.mode())
        return templating.load().render(
            "docs.html",
            headers={"Cache-Control": "no-cache", **VARY},
            grupos=document.groups,
            endereco=_address(request),
        )


def _address(request: Request) -> str:
    """The scheme and authority the client used to reach us, for examples to copy."""
    scheme = "https" if shared_of(request).access.over_https(request) else "http"
    host = request.headers.get("host")
    if not host:  # HTTP/1.0 may leave Host out: the address the server listens on
        name, port = request.scope.get("server") or ("localhost", None)
        name = f"[{name}]" if ":" in name else name
        host = f"{name}:{port}" if port else name
    return f"{scheme}://{host}"
