"""The API description (OpenAPI 3.1) of one app: every path and operation, and what each asks
of the client in the mode the app runs in.

Assembled from parts.py, whose schemas come from the pydantic model in produtos.py, the same
rules the server checks. Links between operations let a client (or schemathesis) go from a
created product to reading, updating and removing it. page.py turns the same document into
the /docs page.

Who may call an operation is not written here: it is read off the app's routes, each
resource's `need` by method (resources/__init__.py), through access.required for the mode. So
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

from catalogo import access, accounts
from catalogo.access import Need
from catalogo.identity import Mode
from catalogo.openapi import history, page, parts
from catalogo.resources import Resource

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


class Drift(Exception):
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
        self._resources = _resources(routes, _operations()["paths"])
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


def _document(resources: dict[str, type[Resource]], mode: Mode) -> dict[str, Any]:
    described = _operations()
    described["info"]["x-catalogo-auth"] = mode
    for path, item in described["paths"].items():
        resource = resources[path]
        if "OPTIONS" in resource.allowed:
            item["options"] = {**(parts.ITEM_OPTIONS if "{" in path else parts.OPTIONS)}
        for method, operation in list(item.items()):
            if method in _OPERATIONS:
                item[method] = _secured(operation, method, resource.need[method.upper()], mode)
    described["components"]["securitySchemes"] = parts.SECURITY_SCHEMES
    return described


def _secured(operation: dict[str, Any], method: str, need: Need, mode: Mode) -> dict[str, Any]:
    """The operation with what it asks of the client (`security`), and the answers that follow
    from it, as access.Access.admit gives them under `mode`. The roles are named in the
    requirements, as OpenAPI 3.1 allows for schemes other than OAuth."""
    if need is Need.PUBLIC:  # credentials are not even read
        return {**operation, "security": []}
    responses = dict(operation["responses"])
    role = access.required(need, mode)
    if role is None:  # anyone; a token sent must be valid
        responses["401"] = parts.INVALID_TOKEN
        security: list[dict[str, list[str]]] = [{}, {"bearer": []}, {"sessao": []}]
        return {**operation, "security": security, "responses": responses}
    roles: list[str] = [] if role == "any" else [role]
    responses["401"] = parts.UNAUTHENTICATED
    if method == "get":  # a browser is sent to sign in; a form it posts gets the page itself
        responses["303"] = parts.TO_SIGN_IN
    if role != "any" and role != accounts.PAPEIS[0]:  # someone signed in may lack it: 403
        responses["403"] = parts.FORBIDDEN if "403" in responses else parts.ROLE_MISSING
    security = [{"bearer": roles}, {"sessao": roles}]
    return {**operation, "security": security, "responses": responses}


def _operations() -> dict[str, Any]:
    produto_json = {"application/json": parts.PRODUTO_JSON, "text/html": parts.HTML}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "catalogo",
            "version": "1",
            "description": "Produtos de um catálogo. Cada endereço responde HTML a navegadores "
            "e JSON a quem pede `Accept: application/json`; erros em JSON são "
            "`application/problem+json` (RFC 9457). As credenciais que cada operação exige "
            "são as do modo em que o servidor está agora (`x-catalogo-auth`): ele muda com "
            "CATALOGO_AUTH e, sem ela, quando o primeiro usuário é criado.",
        },
        "tags": parts.TAGS,
        "paths": {
            "/produtos": {
                "get": {
                    "operationId": "listarProdutos",
                    "tags": ["Produtos"],
                    "summary": "A lista de produtos: busca, filtros e ordem",
                    "description": "Os produtos que atendem a todos os filtros dados (`q`, "
                    "`preco_min`, `preco_max`, `id`), dos mais novos aos mais antigos ou na "
                    "`ordem` pedida; removidos nunca aparecem. As páginas seguintes e "
                    "anteriores estão em `links` (e no cabeçalho `Link`), com a mesma busca. "
                    "Parâmetros desconhecidos são ignorados.",
                    "parameters": parts.LIST_PARAMS,
                    "responses": {
                        "200": {
                            "description": "Uma página; `Link` traz rel=next e rel=prev.",
                            "headers": parts.LIST_HEADERS,
                            "content": {
                                "application/json": {
                                    "schema": parts.ref("Pagina"),
                                    "example": {
                                        "produtos": [parts.STORED_EXAMPLE],
                                        "links": {"next": "/produtos?depois=120"},
                                    },
                                },
                                "text/html": parts.HTML,
                            },
                        },
                        "400": parts.problem(
                            "Parâmetro malformado; a mensagem diz o que é aceito: `q` longa "
                            "demais ou com caractere de controle, `ordem` desconhecida, preço "
                            "ilegível, `preco_min` maior que `preco_max`, `id` que não é um "
                            "número ou mais que o máximo, `depois` e `antes` juntos, ou um "
                            "cursor malformado ou de outra busca. Um navegador recebe a página "
                            "da lista com a mensagem."
                        ),
                        "406": parts.WRITE_ERRORS["406"],
                        "422": parts.problem(
                            "A busca passou do tempo limite do servidor "
                            "(CATALOGO_QUERY_TIMEOUT_MS, 5 s por padrão) e foi interrompida; "
                            "a mensagem diz como refiná-la. Um navegador recebe a página da "
                            "lista com a mensagem."
                        ),
                    },
                },
                "post": {
                    "operationId": "criarProduto",
                    "tags": ["Produtos"],
                    "summary": "Adiciona um produto",
                    "parameters": [
                        {
                            "name": "Idempotency-Key",
                            "in": "header",
                            "description": "Repetir com a mesma chave e o mesmo corpo devolve a "
                            "primeira resposta, sem criar de novo (24 horas).",
                            "schema": {"type": "string", "pattern": "^[!#-\\[\\]-~]{1,255}$"},
                        }
                    ],
                    "requestBody": parts.body(with_version=False),
                    "responses": {
                        "201": {
                            "description": "Criado.",
                            "headers": {
                                "Location": {"schema": {"type": "string"}},
                                "ETag": parts.ETAG,
                            },
                            "content": {"application/json": parts.PRODUTO_JSON},
                            "links": parts.LINKS,
                        },
                        "303": {
                            **parts.REDIRECT,
                            "description": "Resposta ao navegador: o começo da lista, onde o "
                            "produto novo aparece.",
                        },
                        **parts.WRITE_ERRORS,
                        "409": parts.problem(
                            "Uma requisição com esta Idempotency-Key em andamento."
                        ),
                    },
                },
            },
            "/healthz": {
                "get": {
                    "operationId": "saude",
                    "tags": ["Operação"],
                    "summary": "O processo está de pé (não consulta o banco)",
                    "responses": {"200": parts.STATUS},
                }
            },
            "/readyz": {
                "get": {
                    "operationId": "pronto",
                    "tags": ["Operação"],
                    "summary": "Pronto para tráfego: banco acessível e esquema atual",
                    "responses": {
                        "200": parts.STATUS,
                        "503": parts.problem(
                            "Banco inacessível ou esquema desatualizado.",
                            headers={"Retry-After": {"schema": {"type": "string"}}},
                        ),
                    },
                }
            },
            "/produtos/novo": {
                "get": {
                    "operationId": "formularioNovo",
                    "tags": ["Páginas"],
                    "summary": "O formulário de novo produto",
                    "parameters": [parts.RETURN_PARAM],
                    "responses": {
                        "200": {
                            "description": "O formulário.",
                            "content": {"text/html": parts.HTML},
                        },
                        "400": parts.problem("`lista` malformada."),
                        "406": parts.WRITE_ERRORS["406"],
                    },
                },
            },
            "/produtos/{id}/restauracao": {
                "parameters": [parts.ID_PARAM],
                "post": {
                    "operationId": "restaurarProduto",
                    "tags": ["Produtos"],
                    "summary": "Traz de volta um produto removido",
                    "description": "Com o mesmo número e uma nova versão. Um navegador volta "
                    "à página da lista (`lista`) ou dos removidos (`removidos`; `lixeira`, o "
                    "nome antigo, ainda vale) de onde veio, com um aviso.",
                    "requestBody": {
                        "required": False,
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "lista": parts.form(True)["properties"]["lista"],
                                        "removidos": {
                                            "type": "string",
                                            "description": "Páginas para pessoas: a página "
                                            "dos removidos para onde voltar (`depois=170`).",
                                        },
                                        "lixeira": {
                                            "type": "string",
                                            "deprecated": True,
                                            "description": "O nome antigo de `removidos`.",
                                        },
                                    },
                                }
                            },
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "Restaurado.",
                            "content": {"application/json": parts.PRODUTO_JSON},
                        },
                        "303": parts.REDIRECT,
                        "400": parts.problem("`lista` ou `removidos` malformada."),
                        "403": parts.WRITE_ERRORS["403"],
                        "404": parts.problem("Não há produto com este número."),
                        "406": parts.WRITE_ERRORS["406"],
                        "409": parts.problem(
                            "O produto não está removido; `current` é como ele está.",
                            "ConflictProblem",
                        ),
                        "413": parts.WRITE_ERRORS["413"],
                        "503": parts.WRITE_ERRORS["503"],
                    },
                },
            },
            **history.paths(),
            "/produtos/{id}": {
                "parameters": [parts.ID_PARAM],
                "get": {
                    "operationId": "obterProduto",
                    "tags": ["Produtos"],
                    "summary": "Um produto (em HTML, a página de edição)",
                    "parameters": [
                        {
                            "name": "If-None-Match",
                            "in": "header",
                            "description": "304 se o produto ainda estiver nesta ETag.",
                            "schema": {"type": "string"},
                        },
                        parts.RETURN_PARAM,
                    ],
                    "responses": {
                        "200": {
                            "description": "O produto.",
                            "headers": {"ETag": parts.ETAG},
                            "content": produto_json,
                            "links": {k: v for k, v in parts.LINKS.items() if k != "ObterProduto"},
                        },
                        "304": {"description": "Não mudou desde a ETag em If-None-Match."},
                        "400": parts.problem("`lista` malformada (só na página HTML)."),
                        "404": parts.problem("Não há produto com este número."),
                        "412": parts.problem("O produto não está na versão de If-Match."),
                        "406": parts.WRITE_ERRORS["406"],
                    },
                },
                "put": {
                    "operationId": "atualizarProduto",
                    "tags": ["Produtos"],
                    "summary": "Atualiza um produto",
                    "parameters": [
                        {
                            "name": "If-Match",
                            "in": "header",
                            "description": "Só grava se o produto ainda estiver nesta versão.",
                            "schema": {"type": "string"},
                        }
                    ],
                    "requestBody": parts.body(with_version=True),
                    "responses": {
                        "200": {
                            "description": "Atualizado.",
                            "headers": {"ETag": parts.ETAG},
                            "content": {"application/json": parts.PRODUTO_JSON},
                            "links": {
                                k: v for k, v in parts.LINKS.items() if k != "AtualizarProduto"
                            },
                        },
                        "303": parts.REDIRECT,
                        **parts.WRITE_ERRORS,
                        "404": parts.problem("Não há produto com este número."),
                        "409": parts.problem(
                            "Outra pessoa salvou depois da `versao` enviada; `current` é o que "
                            "está salvo agora.",
                            "ConflictProblem",
                        ),
                        "412": parts.problem("O produto não está mais na versão de If-Match."),
                    },
                },
                "delete": {
                    "operationId": "removerProduto",
                    "tags": ["Produtos"],
                    "summary": "Remove um produto",
                    "parameters": [
                        {
                            "name": "If-Match",
                            "in": "header",
                            "description": "Só remove se o produto ainda estiver nesta versão.",
                            "schema": {"type": "string"},
                        }
                    ],
                    "requestBody": {
                        "required": False,
                        "description": "Opcional: a versão em que a remoção se baseia.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"versao": parts.VERSION},
                                }
                            },
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "produto.versao": parts.form(True)["properties"][
                                            "produto.versao"
                                        ],
                                        "lista": parts.form(True)["properties"]["lista"],
                                    },
                                }
                            },
                        },
                    },
                    "responses": {
                        "204": {"description": "Removido."},
                        "303": parts.REDIRECT,
                        "400": parts.WRITE_ERRORS["400"],
                        "403": parts.WRITE_ERRORS["403"],
                        "409": parts.problem(
                            "Outra pessoa salvou depois da `versao` enviada; nada foi removido.",
                            "ConflictProblem",
                        ),
                        "413": parts.WRITE_ERRORS["413"],
                        "415": parts.WRITE_ERRORS["415"],
                        "404": parts.problem("Não há produto com este número."),
                        "406": parts.WRITE_ERRORS["406"],
                        "412": parts.problem("O produto não está mais na versão de If-Match."),
                        "503": parts.WRITE_ERRORS["503"],
                    },
                },
            },
        },
        "components": {"schemas": {**parts.schemas(), **history.schemas()}},
    }
