"""The pieces the API description is assembled from: the product's schemas (read off the
pydantic model in http/openapi/produtos.py), examples, headers and the shared error answers; the
lists' query and cursors are http/openapi/lists.py's."""

from typing import Any

from catalogo.domain.produtos import CAMPOS, ID_MAXIMO, ID_PATTERN, Produto

_INPUT = Produto.model_json_schema(mode="validation")["properties"]
_FIELDS = {field: _INPUT[field] for field in CAMPOS}
PRICE_AS_TEXT = _INPUT["preco"]["anyOf"][0]
VERSION = {"type": "integer", "minimum": 1, "maximum": ID_MAXIMO}
ID = {"type": "integer", "minimum": 1, "maximum": ID_MAXIMO}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def form(with_version: bool) -> dict[str, Any]:
    """The form body of the HTML flow: the same fields, named `produto.*`, all text."""
    props: dict[str, Any] = {f"produto.{c}": dict(s) for c, s in _FIELDS.items()}
    props["produto.preco"] = PRICE_AS_TEXT
    props["produto.codigo"] = {  # a form's field is text: blank is no code
        **_FIELDS["codigo"]["anyOf"][0],
        "description": _FIELDS["codigo"]["description"],
    }
    if with_version:
        props["produto.versao"] = {"type": "string", "pattern": f"^{ID_PATTERN}$"}
    props["lista"] = {"type": "string", "description": RETURN_PARAM["description"]}
    return {"type": "object", "properties": props, "required": ["produto.nome", "produto.preco"]}


def body(with_version: bool) -> dict[str, Any]:
    json_schema = ref("ProdutoComVersao" if with_version else "ProdutoEntrada")
    form_body = {"schema": form(with_version)}
    example = {**_EXAMPLE, "versao": 3} if with_version else _EXAMPLE
    return {
        "required": True,
        "content": {
            "application/json": {"schema": json_schema, "example": example},
            "application/x-www-form-urlencoded": form_body,
            "multipart/form-data": form_body,
        },
    }


def problem(
    description: str, schema: str = "Problem", headers: dict[str, Any] | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/problem+json": {"schema": ref(schema)}, "text/html": HTML},
    }
    if headers:
        response["headers"] = headers
    return response


HTML = {"schema": {"type": "string"}}
_ETAG_EXAMPLE = '"3-json"'
ETAG = {
    "description": "A versão desta representação, para If-Match e If-None-Match: "
    '`"3-json"` é a versão 3 em JSON (a página HTML tem outra, como `"3-h0a1b2c3d4e"`).',
    "schema": {"type": "string", "examples": [_ETAG_EXAMPLE]},
}
COMMON_HEADERS = {
    "X-Request-ID": {
        "description": "O código desta requisição, o mesmo dos logs e do `request_id` de um "
        "erro: o que citar ao relatar um problema.",
        "schema": {"type": "string"},
    },
    "Idempotent-Replayed": {
        "description": "`true` quando a resposta é a repetição da primeira dada a esta "
        "Idempotency-Key: nada foi gravado de novo.",
        "schema": {"type": "string", "enum": ["true"]},
    },
}


def ref_header(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/headers/{name}"}


_TAG_FORMAT = (
    'Uma ETag como o servidor a deu, com as aspas (`"3-json"`), ou várias separadas por '
    "vírgula; numa escrita só a versão dela conta. Uma etiqueta que o servidor nunca dá "
    '(`3`, `"3"`, uma fraca como `W/"3-json"`) recebe 412 com uma mensagem que mostra '
    "o formato."
)


def if_match(does: str) -> dict[str, Any]:
    """The If-Match header of a write: `does` is what it does only at the version named."""
    return {
        "name": "If-Match",
        "in": "header",
        "description": f"{does} {_TAG_FORMAT}",
        "schema": {"type": "string", "examples": [_ETAG_EXAMPLE]},
        "example": _ETAG_EXAMPLE,
    }


IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "description": "304 se o produto ainda estiver nesta ETag (a do último `ETag` recebido, "
    "com as aspas).",
    "schema": {"type": "string", "examples": [_ETAG_EXAMPLE]},
    "example": _ETAG_EXAMPLE,
}
WRITE_ERRORS = {
    "400": problem("Corpo malformado (JSON, UTF-8, formulário, versão, `lista`, Idempotency-Key)."),
    "403": problem("Envio de outro site, recusado pelo navegador."),
    "406": problem("Accept não admite HTML nem JSON."),
    "413": problem("Corpo acima do limite."),
    "415": problem("Corpo que não é JSON nem formulário em UTF-8."),
    "422": problem(
        "Campos inválidos (`errors` diz o que há em cada um), ou uma Idempotency-Key já "
        "usada com outro corpo.",
        "ValidationProblem",
    ),
    "503": problem(
        "Banco de dados indisponível; tente de novo.",
        headers={"Retry-After": {"schema": {"type": "string"}}},
    ),
}
SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "Um token `cat_…` (`catalogo tokens criar`), com o papel leitor ou editor.",
    },
    "sessao": {
        "type": "apiKey",
        "in": "cookie",
        "name": "sessao",
        "description": "A sessão de quem entrou em /entrar (`__Host-sessao` em HTTPS).",
    },
}
# The answers that follow from what an operation asks of the client (openapi._secured).
_CHALLENGE = {"WWW-Authenticate": {"schema": {"type": "string"}}}
UNAUTHENTICATED = problem(
    "Faltam credenciais, ou o token é malformado, desconhecido, expirado ou revogado "
    "(`WWW-Authenticate`). Um navegador sem sessão vai a /entrar: com 303 numa leitura; numa "
    "gravação por formulário, recebe a página de entrar, que guarda o que foi enviado.",
    headers=_CHALLENGE,
)
INVALID_TOKEN = problem(
    "O token enviado é malformado, desconhecido, expirado ou revogado (`WWW-Authenticate`). "
    "Sem token, nada é exigido.",
    headers=_CHALLENGE,
)
FORBIDDEN = problem(
    "Envio de outro site, recusado pelo navegador; ou quem entrou não tem o papel exigido."
)
ROLE_MISSING = problem("Quem entrou não tem o papel exigido.")
TO_SIGN_IN = {
    "description": "Um navegador sem sessão vai a /entrar, que o traz de volta aqui.",
    "headers": {"Location": {"schema": {"type": "string"}}},
}
REDIRECT = {
    "description": "Resposta ao navegador: a página da lista de onde veio (`lista`).",
    "headers": {"Location": {"schema": {"type": "string"}}},
}
STATUS = {
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
ID_PARAM = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "O número do produto.",
    "schema": {**ID, "examples": [120]},
}


def lote_id_param(whose: str) -> dict[str, Any]:
    """The path's `id` of a write of many products (LoteId in http/app.py): `whose` is
    "da importação" or "do lote"."""
    return {
        "name": "id",
        "in": "path",
        "required": True,
        "description": f"O número {whose} (32 dígitos hexadecimais).",
        "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
    }


RETURN_PARAM = {
    "name": "lista",
    "in": "query",
    "description": "Páginas para pessoas: a página da lista para onde voltar depois de salvar, "
    "remover ou cancelar, como consulta (`depois=170`, `q=caneca&ordem=nome`).",
    "schema": {"type": "string", "examples": ["depois=170"]},
}
# A request's example has no code: /docs sends it as it is, and a second try would find the
# code taken (422). The stored product shows one.
_EXAMPLE = {
    "nome": "Caneca de cerâmica azul 300 ml",
    "descricao": "Vai ao micro-ondas e à lava-louças.",
    "preco": "39.90",
}
STORED_EXAMPLE = {
    "id": 120,
    "codigo": "CAN-AZ-300",
    **_EXAMPLE,
    "versao": 3,
    "criado_em": "2026-11-20T14:03:12.345678Z",
    "atualizado_em": "2026-11-23T09:41:07.112233Z",
}
MOMENT = {
    "type": "string",
    "format": "date-time",
    "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$",
}
# Each tag's name is ASCII, as generated clients make a module of it; people read its
# `x-displayName` (/docs, Redoc).
TAGS = [
    {
        "name": "produtos",
        "x-displayName": "Produtos",
        "description": "O recurso do catálogo, em JSON ou em formulário.",
    },
    {
        "name": "paginas",
        "x-displayName": "Páginas",
        "description": "Formulários e confirmações para pessoas (HTML).",
    },
    {
        "name": "historico",
        "x-displayName": "Histórico",
        "description": "Quem mudou o quê: o histórico de cada produto, os removidos e os eventos.",
    },
    {
        "name": "lotes",
        "x-displayName": "Lotes",
        "description": "Muitos produtos de uma vez: reajuste, preço, remoção.",
    },
    {
        "name": "importacoes",
        "x-displayName": "Importações",
        "description": "Planilhas para o catálogo: prévia, confirmação e desfazer.",
    },
    {
        "name": "webhooks",
        "x-displayName": "Webhooks",
        "description": "Eventos empurrados a programas, assinados (Standard Webhooks); para "
        "admins.",
    },
    {
        "name": "operacao",
        "x-displayName": "Operação",
        "description": "Para balanceadores e ferramentas: saúde e `OPTIONS`.",
    },
]
OPTIONS: dict[str, Any] = {
    "tags": ["operacao"],
    "summary": "Os métodos aceitos neste endereço",
    "responses": {"204": {"description": "`Allow` lista os métodos."}},
}
LINKS = {
    "ObterProduto": {"operationId": "obterProduto", "parameters": {"id": "$response.body#/id"}},
    "AtualizarProduto": {
        "operationId": "atualizarProduto",
        "parameters": {"id": "$response.body#/id"},
    },
    "RemoverProduto": {"operationId": "removerProduto", "parameters": {"id": "$response.body#/id"}},
}


ITEM_OPTIONS = {
    **OPTIONS,
    "responses": {**OPTIONS["responses"], "404": problem("Não é o número de um produto.")},
}
PRODUTO_JSON = {"schema": ref("Produto"), "example": STORED_EXAMPLE}


def schemas() -> dict[str, Any]:
    saida = Produto.model_json_schema(mode="serialization")["properties"]
    produto = {
        "type": "object",
        "properties": {
            "id": ID,
            **saida,
            "versao": VERSION,
            "criado_em": {**MOMENT, "description": "Quando foi criado (UTC)."},
            "atualizado_em": {
                **MOMENT,
                "description": "Quando ganhou a versão atual (UTC): edição, remoção ou "
                "restauração.",
            },
        },
        "required": [
            "id",
            "codigo",
            "nome",
            "descricao",
            "preco",
            "versao",
            "criado_em",
            "atualizado_em",
        ],
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
            "request_id": {
                "type": "string",
                "description": "O código desta requisição: o mesmo do cabeçalho X-Request-ID "
                "da resposta e das linhas de log dela.",
            },
        },
        "required": ["type", "title", "status", "detail", "request_id"],
    }
    return {
        "Produto": produto,
        "ProdutoEntrada": entrada,
        "ProdutoComVersao": {
            **entrada,
            "properties": {**_FIELDS, "versao": VERSION},
            "description": "Com `versao`, só grava se o produto ainda estiver nela (senão, 409).",
        },
        "Problem": problem,
        "ValidationProblem": {
            "allOf": [
                ref("Problem"),
                {
                    "type": "object",
                    "properties": {
                        "errors": {
                            "type": "object",
                            "additionalProperties": {"type": "string"},
                            "description": "Uma mensagem por campo (`produto.nome`, …); "
                            "ausente quando o 422 é uma Idempotency-Key já usada com outro corpo.",
                        },
                        "restauracao": {
                            "type": "string",
                            "description": "Quando o código pedido é de um produto removido, "
                            "que o guarda: o endereço que o restaura (POST), com o mesmo número.",
                            "examples": ["/produtos/301/restauracao"],
                        },
                    },
                },
            ]
        },
        "ConflictProblem": {
            "allOf": [
                ref("Problem"),
                {
                    "type": "object",
                    "properties": {"current": ref("Produto")},
                    "required": ["current"],
                },
            ]
        },
    }
