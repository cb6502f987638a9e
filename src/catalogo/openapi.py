"""The API description (OpenAPI 3.1) and the page that shows it, built once at start-up.

The product's schemas come from the pydantic model in produtos.py, the same rules the server
checks, so the description cannot drift from the behaviour. Links between operations let a
client (or schemathesis) go from a created product to reading, updating and removing it.
"""

import functools
from typing import Any

import orjson

from catalogo.produtos import CAMPOS, ID_MAXIMO, ID_PATTERN, Produto

_INPUT = Produto.model_json_schema(mode="validation")["properties"]
_FIELDS = {field: _INPUT[field] for field in CAMPOS}
_PRICE_AS_TEXT = _INPUT["preco"]["anyOf"][0]
_VERSION = {"type": "integer", "minimum": 1, "maximum": ID_MAXIMO}
_ID = {"type": "integer", "minimum": 1, "maximum": ID_MAXIMO}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _form(with_version: bool) -> dict[str, Any]:
    """The form body of the HTML flow: the same fields, named `produto.*`, all text."""
    props: dict[str, Any] = {f"produto.{c}": dict(s) for c, s in _FIELDS.items()}
    props["produto.preco"] = _PRICE_AS_TEXT
    if with_version:
        props["produto.versao"] = {"type": "string", "pattern": f"^{ID_PATTERN}$"}
    return {"type": "object", "properties": props, "required": ["produto.nome", "produto.preco"]}


def _body(with_version: bool) -> dict[str, Any]:
    json_schema = _ref("ProdutoComVersao" if with_version else "ProdutoEntrada")
    form = {"schema": _form(with_version)}
    return {
        "required": True,
        "content": {
            "application/json": {"schema": json_schema},
            "application/x-www-form-urlencoded": form,
            "multipart/form-data": form,
        },
    }


def _problem(
    description: str, schema: str = "Problem", headers: dict[str, Any] | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/problem+json": {"schema": _ref(schema)}, "text/html": _HTML},
    }
    if headers:
        response["headers"] = headers
    return response


_HTML = {"schema": {"type": "string"}}
_ETAG = {"description": "A versão desta representação.", "schema": {"type": "string"}}
_WRITE_ERRORS = {
    "400": _problem("Corpo malformado (JSON, UTF-8, formulário, versão, Idempotency-Key)."),
    "403": _problem("Envio de outro site, recusado pelo navegador."),
    "406": _problem("Accept não admite HTML nem JSON."),
    "413": _problem("Corpo acima do limite."),
    "415": _problem("Corpo que não é JSON nem formulário em UTF-8."),
    "422": _problem(
        "Campos inválidos (`errors` diz o que há em cada um), ou uma Idempotency-Key já "
        "usada com outro corpo.",
        "ValidationProblem",
    ),
    "503": _problem(
        "Banco de dados indisponível; tente de novo.",
        headers={"Retry-After": {"schema": {"type": "string"}}},
    ),
}
_REDIRECT = {
    "description": "Resposta ao navegador: veja a lista (`Location: /produtos`).",
    "headers": {"Location": {"schema": {"type": "string"}}},
}
_STATUS = {
    "description": "Sim.",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"status": {"type": "string"}, "schema": {"type": "string"}},
                "required": ["status"],
            }
        }
    },
}
_ID_PARAM = {"name": "id", "in": "path", "required": True, "schema": _ID}
_OPTIONS: dict[str, Any] = {
    "summary": "Os métodos aceitos neste endereço",
    "responses": {"204": {"description": "`Allow` lista os métodos."}},
}
_LINKS = {
    "ObterProduto": {"operationId": "obterProduto", "parameters": {"id": "$response.body#/id"}},
    "AtualizarProduto": {
        "operationId": "atualizarProduto",
        "parameters": {"id": "$response.body#/id"},
    },
    "RemoverProduto": {"operationId": "removerProduto", "parameters": {"id": "$response.body#/id"}},
}


@functools.cache  # made once per process: it depends on nothing but the code
def document_bytes() -> bytes:
    return orjson.dumps(document())


def document() -> dict[str, Any]:
    produto_json = {"application/json": {"schema": _ref("Produto")}, "text/html": _HTML}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "catalogo",
            "version": "1",
            "description": "Produtos de um catálogo. Cada endereço responde HTML a navegadores "
            "e JSON a quem pede `Accept: application/json`; erros em JSON são "
            "`application/problem+json` (RFC 9457).",
        },
        "paths": {
            "/produtos": {
                "get": {
                    "operationId": "listarProdutos",
                    "summary": "A lista de produtos, dos mais novos aos mais antigos",
                    "parameters": [
                        {
                            # One object, exploded: `?depois=5` or `?antes=5`, never both.
                            "name": "cursor",
                            "in": "query",
                            "style": "form",
                            "explode": True,
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "depois": {**_ID, "description": "A página após este id."},
                                    "antes": {**_ID, "description": "A página antes deste id."},
                                },
                                "not": {"required": ["depois", "antes"]},
                            },
                        }
                    ],
                    "responses": {
                        "200": {
                            "description": "Uma página; `Link` traz rel=next e rel=prev.",
                            "content": {
                                "application/json": {"schema": _ref("Pagina")},
                                "text/html": _HTML,
                            },
                        },
                        "400": _problem("Cursor inválido."),
                        "406": _WRITE_ERRORS["406"],
                    },
                },
                "post": {
                    "operationId": "criarProduto",
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
                    "requestBody": _body(with_version=False),
                    "responses": {
                        "201": {
                            "description": "Criado.",
                            "headers": {
                                "Location": {"schema": {"type": "string"}},
                                "ETag": _ETAG,
                            },
                            "content": {"application/json": {"schema": _ref("Produto")}},
                            "links": _LINKS,
                        },
                        "303": _REDIRECT,
                        **_WRITE_ERRORS,
                        "409": _problem("Uma requisição com esta Idempotency-Key em andamento."),
                    },
                },
                "options": _OPTIONS,
            },
            "/healthz": {
                "get": {
                    "operationId": "saude",
                    "summary": "O processo está de pé (não consulta o banco)",
                    "responses": {"200": _STATUS},
                }
            },
            "/readyz": {
                "get": {
                    "operationId": "pronto",
                    "summary": "Pronto para tráfego: banco acessível e esquema atual",
                    "responses": {
                        "200": _STATUS,
                        "503": _problem(
                            "Banco inacessível ou esquema desatualizado.",
                            headers={"Retry-After": {"schema": {"type": "string"}}},
                        ),
                    },
                }
            },
            "/produtos/novo": {
                "get": {
                    "operationId": "formularioNovo",
                    "summary": "O formulário de novo produto (HTML)",
                    "responses": {
                        "200": {"description": "O formulário.", "content": {"text/html": _HTML}}
                    },
                },
                "options": _OPTIONS,
            },
            "/produtos/{id}": {
                "parameters": [_ID_PARAM],
                "get": {
                    "operationId": "obterProduto",
                    "summary": "Um produto (em HTML, a página de edição)",
                    "parameters": [
                        {"name": "If-None-Match", "in": "header", "schema": {"type": "string"}}
                    ],
                    "responses": {
                        "200": {
                            "description": "O produto.",
                            "headers": {"ETag": _ETAG},
                            "content": produto_json,
                            "links": {k: v for k, v in _LINKS.items() if k != "ObterProduto"},
                        },
                        "304": {"description": "Não mudou desde a ETag em If-None-Match."},
                        "404": _problem("Não há produto com este número."),
                        "412": _problem("O produto não está na versão de If-Match."),
                        "406": _WRITE_ERRORS["406"],
                    },
                },
                "put": {
                    "operationId": "atualizarProduto",
                    "summary": "Atualiza um produto",
                    "parameters": [
                        {
                            "name": "If-Match",
                            "in": "header",
                            "description": "Só grava se o produto ainda estiver nesta versão.",
                            "schema": {"type": "string"},
                        }
                    ],
                    "requestBody": _body(with_version=True),
                    "responses": {
                        "200": {
                            "description": "Atualizado.",
                            "headers": {"ETag": _ETAG},
                            "content": {"application/json": {"schema": _ref("Produto")}},
                            "links": {k: v for k, v in _LINKS.items() if k != "AtualizarProduto"},
                        },
                        "303": _REDIRECT,
                        **_WRITE_ERRORS,
                        "404": _problem("Não há produto com este número."),
                        "409": _problem(
                            "Outra pessoa salvou depois da `versao` enviada; `current` é o que "
                            "está salvo agora.",
                            "ConflictProblem",
                        ),
                        "412": _problem("O produto não está mais na versão de If-Match."),
                    },
                },
                "delete": {
                    "operationId": "removerProduto",
                    "summary": "Remove um produto",
                    "parameters": [
                        {"name": "If-Match", "in": "header", "schema": {"type": "string"}}
                    ],
                    "requestBody": {
                        "required": False,
                        "description": "Opcional: a versão em que a remoção se baseia.",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"versao": _VERSION}}
                            },
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "produto.versao": _form(with_version=True)["properties"][
                                            "produto.versao"
                                        ]
                                    },
                                }
                            },
                        },
                    },
                    "responses": {
                        "204": {"description": "Removido."},
                        "303": _REDIRECT,
                        "400": _WRITE_ERRORS["400"],
                        "403": _WRITE_ERRORS["403"],
                        "409": _problem(
                            "Outra pessoa salvou depois da `versao` enviada; nada foi removido.",
                            "ConflictProblem",
                        ),
                        "413": _WRITE_ERRORS["413"],
                        "415": _WRITE_ERRORS["415"],
                        "404": _problem("Não há produto com este número."),
                        "406": _WRITE_ERRORS["406"],
                        "412": _problem("O produto não está mais na versão de If-Match."),
                        "503": _WRITE_ERRORS["503"],
                    },
                },
                "options": {
                    **_OPTIONS,
                    "responses": {
                        **_OPTIONS["responses"],
                        "404": _problem("Não é o número de um produto."),
                    },
                },
            },
        },
        "components": {"schemas": _schemas()},
    }


def _schemas() -> dict[str, Any]:
    saida = Produto.model_json_schema(mode="serialization")["properties"]
    produto = {
        "type": "object",
        "properties": {"id": _ID, **saida, "versao": _VERSION},
        "required": ["id", "nome", "descricao", "preco", "versao"],
    }
    entrada = {"type": "object", "properties": _FIELDS, "required": ["nome", "preco"]}
    problem = {
        "type": "object",
        "properties": {
            "type": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string"},
            "instance": {"type": "string"},
        },
        "required": ["type", "title", "status", "detail"],
    }
    return {
        "Produto": produto,
        "ProdutoEntrada": entrada,
        "ProdutoComVersao": {
            **entrada,
            "properties": {**_FIELDS, "versao": _VERSION},
            "description": "Com `versao`, só grava se o produto ainda estiver nela (senão, 409).",
        },
        "Pagina": {
            "type": "object",
            "properties": {
                "produtos": {"type": "array", "items": _ref("Produto")},
                "links": {
                    "type": "object",
                    "properties": {"next": {"type": "string"}, "prev": {"type": "string"}},
                },
            },
            "required": ["produtos", "links"],
        },
        "Problem": problem,
        "ValidationProblem": {
            "allOf": [
                _ref("Problem"),
                {
                    "type": "object",
                    "properties": {
                        "errors": {
                            "type": "object",
                            "additionalProperties": {"type": "string"},
                            "description": "Uma mensagem por campo (`produto.nome`, …); "
                            "ausente quando o 422 é uma Idempotency-Key já usada com outro corpo.",
                        }
                    },
                },
            ]
        },
        "ConflictProblem": {
            "allOf": [
                _ref("Problem"),
                {
                    "type": "object",
                    "properties": {"current": _ref("Produto")},
                    "required": ["current"],
                },
            ]
        },
    }
