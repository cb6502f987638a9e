"""The API description (OpenAPI 3.1) of one app: every path and operation, and what each asks
of the client in the mode the app runs in.

The operations are http/openapi/produtos.py's and http/openapi/historico.py's, built of
http/openapi/parts.py, whose schemas come from the pydantic model in catalogo/domain/produtos.py,
the same rules the server checks. Links between operations let a client (or schemathesis) go from a
created product to reading, updating and removing it. http/openapi/page.py turns the same document
into the /docs page.

Who may call an operation is not written here: it is read off the app's routes, each
resource's `need` by method (http/resources/__init__.py), through access.required for the mode. So
there is one document per mode, made when first asked for, and /openapi.json and /docs serve
the one for the mode the app is in now (`Access.mode`): creating the first user of a fresh
install changes it. Which operations a path has is checked against the routes when the app
is made: a described path that is no route, an operation its resource does not answer (or
one it answers that is not described), or a route neither described nor in `LEFT_OUT` stops
the app from being made. OPTIONS, which every resource answers alike, is added here.
"""

import functools
import re
from collections.abc import Sequence
from typing import Any

import orjson
from starlette.routing import BaseRoute, Mount, Route

from catalogo.domain import contas
from catalogo.domain.errors import CatalogoError
from catalogo.http import access
from catalogo.http.access import Need
from catalogo.http.identity import Mode
from catalogo.http.openapi import page, parts, produtos
from catalogo.http.resources import Resource

# The routes the description leaves out, by why.
LEFT_OUT = {
    "pages for people in a browser, HTML only (docs/accounts.md)": (
        "/entrar",
        "/sair",
        "/conta",
        "/conta/senha",
        "/conta/sessoes",
        "/conta/sessoes/{id}",
        "/usuarios",
        "/usuarios/{nome}",
        "/tokens",
        "/tokens/{id}",
    ),
    "the front door: a redirect to /produtos": ("/",),
    "this description itself, and its page": ("/openapi.json", "/docs"),
    "the pages' stylesheet, script and icon": ("/static",),
}
_CONVERTER = re.compile(r":\w+}")  # `{id:produto_id}` is `{id}` in the description
_OPERATIONS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class Drift(CatalogoError):
    """The description and the app's routes disagree: a bug, found when the app is made."""


class Document:
    """The description for one mode, and what is made from it, each once."""

    def __init__(self, content: dict[str, Any]) -> None:
        self.content = content  # shared by /openapi.json and /docs: read, never changed

    @functools.cached_property
    def json(self) -> bytes:
        return orjson.dumps(self.content)

    @functools.cached_property
    def groups(self) -> list[page.Group]:
        return page.groups(self.content)


class Description:
    """One app's description: its routes' resources, checked against the described paths once,
    and a Document per mode, made when first asked for (a fraction of a millisecond)."""

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self._resources = _resources(routes, produtos.document()["paths"])
        self._documents: dict[Mode, Document] = {}

    def document(self, mode: Mode) -> Document:
        found = self._documents.get(mode)
        if found is None:
            found = self._documents[mode] = Document(_document(self._resources, mode))
        return found


def _resources(routes: Sequence[BaseRoute], paths: dict[str, Any]) -> dict[str, type[Resource]]:
    """Each described path's resource, walking the routes as Starlette's schemas.py does; every
    disagreement between the two raises Drift, all of them at once."""
    left_out = {path for paths in LEFT_OUT.values() for path in paths}
    found: dict[str, type[Resource]] = {}
    routed: set[str] = set()
    wrong: list[str] = []
    for route in routes:
        if not isinstance(route, Route | Mount):
            wrong.append(f"{route!r}: a kind of route the description does not know")
            continue
        path = _CONVERTER.sub("}", route.path)
        routed.add(path)
        endpoint = route.endpoint if isinstance(route, Route) else None
        if path in left_out:
            continue
        if path not in paths:
            wrong.append(f"{path}: a route neither described nor in LEFT_OUT")
        elif not (isinstance(endpoint, type) and issubclass(endpoint, Resource)):
            wrong.append(f"{path}: described, but its endpoint is no Resource")
        else:
            found[path] = endpoint
            described = {m.upper() for m in paths[path] if m in _OPERATIONS}
            answered = set(endpoint.allowed) - {"HEAD", "OPTIONS"}
            if described != answered:
                wrong.append(
                    f"{path}: describes {sorted(described)}, answers {sorted(answered)} "
                    "(besides HEAD and OPTIONS, which are not written by hand)"
                )
    wrong += [f"{path}: described, but no route" for path in paths if path not in routed]
    wrong += [f"{path}: in LEFT_OUT, but no route" for path in sorted(left_out - routed)]
    wrong += [f"{path}: described and in LEFT_OUT" for path in paths if path in left_out]
    if wrong:
        raise Drift("the API description and the routes disagree:\n" + "\n".join(wrong))
    return found


# What each mode means to a client, said at the top of the document.
_MODES: dict[Mode, str] = {
    "off": "**Este servidor está no modo `off`**: qualquer um lê e escreve, sem credenciais "
    "(um token enviado ainda precisa ser válido).",
    "writes": "**Este servidor está no modo `writes`**: qualquer um lê; escrever pede um "
    "token (`Authorization: Bearer cat_…`) ou uma sessão, de quem tenha o papel exigido.",
    "all": "**Este servidor está no modo `all`**: ler e escrever pedem um token "
    "(`Authorization: Bearer cat_…`) ou uma sessão, de quem tenha o papel exigido.",
}


def _document(resources: dict[str, type[Resource]], mode: Mode) -> dict[str, Any]:
    described = produtos.document()
    described["info"]["x-catalogo-auth"] = mode
    described["info"]["description"] += f"\n\n{_MODES[mode]}"
    for path, item in described["paths"].items():
        resource = resources[path]
        if "OPTIONS" in resource.allowed:
            item["options"] = {
                **(parts.ITEM_OPTIONS if "{" in path else parts.OPTIONS),
                "operationId": _options_id(path),
            }
        for method, operation in list(item.items()):
            if method in _OPERATIONS:
                secured = _secured(operation, method, resource.need[method.upper()], mode)
                item[method] = _with_common_headers(secured)
    described["components"]["securitySchemes"] = parts.SECURITY_SCHEMES
    described["components"]["headers"] = parts.COMMON_HEADERS
    return described


def _options_id(path: str) -> str:
    """`/produtos/{id}/historico` → `opcoesProdutosIdHistorico`."""
    words = re.findall(r"[a-z0-9]+", path)
    return "opcoes" + "".join(word.capitalize() for word in words)


def _with_common_headers(operation: dict[str, Any]) -> dict[str, Any]:
    """Every answer carries `X-Request-ID`; an operation that takes an Idempotency-Key says
    `Idempotent-Replayed` on its successes."""
    idempotent = any(
        parameter.get("name") == "Idempotency-Key" for parameter in operation.get("parameters", ())
    )
    responses = {}
    for status, response in operation["responses"].items():
        headers = {**response.get("headers", {}), "X-Request-ID": parts.ref_header("X-Request-ID")}
        if idempotent and status.startswith("2"):
            headers["Idempotent-Replayed"] = parts.ref_header("Idempotent-Replayed")
        responses[status] = {**response, "headers": headers}
    return {**operation, "responses": responses}


def _secured(operation: dict[str, Any], method: str, need: Need, mode: Mode) -> dict[str, Any]:
    """The operation with what it asks of the client (`security`), and the answers that follow
    from it, as access.Access.admit gives them under `mode`: one that reads credentials says so
    with its 401. The roles are named in the
    requirements, as OpenAPI 3.1 allows for schemes other than OAuth."""
    if need is Need.PUBLIC:  # credentials are not even read
        return {**operation, "security": []}
    responses = dict(operation["responses"])
    role = access.required(need, mode)
    if role is None:  # anyone, with nothing to send; a token sent must be valid (its 401)
        # No requirement rather than an optional one (`{}`): generated clients read any
        # requirement as a token they must have, and then cannot call it without one.
        responses["401"] = parts.INVALID_TOKEN
        return {**operation, "security": [], "responses": responses}
    roles: list[str] = [] if role == "any" else [role]
    responses["401"] = parts.UNAUTHENTICATED
    if method == "get":  # a browser is sent to sign in; a form it posts gets the page itself
        responses["303"] = parts.TO_SIGN_IN
    if role != "any" and role != contas.PAPEIS[0]:  # someone signed in may lack it: 403
        responses["403"] = parts.FORBIDDEN if "403" in responses else parts.ROLE_MISSING
    security = [{"bearer": roles}, {"sessao": roles}]
    return {**operation, "security": security, "responses": responses}
