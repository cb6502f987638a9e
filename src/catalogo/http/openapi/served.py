"""The description's own URIs: /openapi.json and /docs, for the mode the app is in now.

Here rather than among the resources, since they serve what this package makes of them."""

from starlette.requests import Request
from starlette.responses import Response

from catalogo.http import templating
from catalogo.http.identity import visitor
from catalogo.http.negotiation import HTML, JSON, VARY
from catalogo.http.openapi import Description, Document
from catalogo.http.resources import Resource, negotiate
from catalogo.http.shared import shared_of


async def _document(request: Request) -> Document:
    """The app's description (http/app.py gives the app it) for the mode it is in now."""
    description: Description = request.app.description
    return description.document(await shared_of(request).access.mode())


class OpenAPIResource(Resource):
    """/openapi.json: the API description for the mode the app is in now (openapi/)."""

    async def get(self, request: Request) -> Response:
        document = await _document(request)
        return Response(document.json, media_type=JSON, headers={"Cache-Control": "no-cache"})


class DocsResource(Resource):
    """/docs: the same description as a page for people (http/openapi/page.py). Its curl example
    names the address the page was read from: the scheme as the client used it (a trusted
    balancer's TLS counts) and the Host it sent, which http/middleware/guard.py has already checked
    against CATALOGO_ALLOWED_HOSTS (a Host-less HTTP/1.0 request gets the server's own address)."""

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        document = await _document(request)
        return templating.load().render(
            "docs.html",
            headers={"Cache-Control": "no-cache", **VARY},
            grupos=document.groups,
            endereco=_address(request),
            quem=visitor(request),
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
