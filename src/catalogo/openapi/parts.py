"""The pieces the API description is assembled from: the product's schemas (read off the
pydantic model in produtos.py), examples, parameters and the shared error answers."""

from typing import Any

from catalogo import text
from catalogo.produtos import CAMPOS, CODIGO_MAXIMO, ID_MAXIMO, ID_PATTERN, Produto
from catalogo.search import IDS_MAXIMUM, ORDENS, QUERY_MAXIMUM, TOKEN_MAXIMUM

_INPUT = Produto.model_json_schema(mode="validation")["properties"]
_FIELDS = {field: _INPUT[field] for field in CAMPOS}
_PRICE_AS_TEXT = _INPUT["preco"]["anyOf"][0]
VERSION = {"type": "integer", "minimum": 1, "maximum": ID_MAXIMO}
ID = {"type": "integer", "minimum": 1, "maximum": ID_MAXIMO}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def form(with_version: bool) -> dict[str, Any]:
    """The form body of the HTML flow: the same fields, named `produto.*`, all text."""
    props: dict[str, Any] = {f"produto.{c}": dict(s) for c, s in _FIELDS.items()}
    props["produto.preco"] = _PRICE_AS_TEXT
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


def cursor_param(after: str, before: str, schema: str = "Cursor", says: str = "") -> dict[str, Any]:
    """`?depois=5` or `?antes=5`, never both: one object, exploded, of the schema that a page
    in JSON gives its neighbours' cursors in (`cursores`); `after` and `before` say in words
    which page each gives, `says` anything more about it."""
    more = f" {says}" if says else ""
    return {
        "name": "cursor",
        "in": "query",
        "style": "form",
        "explode": True,
        "description": f"`depois` dá a página {after}; `antes`, a página {before}.{more} Uma "
        "página em JSON traz os cursores das vizinhas em `cursores`, prontos para passar aqui.",
        "schema": ref(schema),
    }


def cursor(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": "Onde uma página começa: `depois` ou `antes`, nunca os dois; nenhum, a "
        "primeira página.",
        "properties": {"depois": value, "antes": value},
        "not": {"required": ["depois", "antes"]},
    }


def cursors(schema: str) -> dict[str, Any]:
    """A page's `cursores`: its neighbours, as `links` has them, as values."""
    return {
        "type": "object",
        "description": "Os cursores das páginas vizinhas, as mesmas de `links`, para passar "
        "como `cursor`: `next` a seguinte, `prev` a anterior; ausente, não há página ali.",
        "properties": {"next": ref(schema), "prev": ref(schema)},
    }


# The product list's query (listing.py, search.py): what it finds, in which order, which page.
# A cursor longer than this is refused whatever the order: search.position_of's limit for a
# token (a number is at most 19 digits). Written there as a literal, so
# tests/test_openapi.py checks the two agree.
CURSOR_MAXIMUM = TOKEN_MAXIMUM
_LIST_CURSOR = {
    "type": "string",
    "minLength": 1,
    "maxLength": CURSOR_MAXIMUM,
    "examples": ["120"],
}
_PRICE_BOUND = (
    "inclusive, escrito como no formulário: 10, 10,50, 1.234,56, R$ 12,50 ou 12.50 (valores "
    "ambíguos como 1.234 são recusados). Vazio é o mesmo que ausente."
)
LIST_PARAMS: list[dict[str, Any]] = [
    {
        "name": "q",
        "in": "query",
        "description": "Busca: cada palavra deve aparecer, mesmo como trecho, no nome ou na "
        "descrição, sem distinguir maiúsculas nem acentos (`pao` acha «Pão»). "
        '"Frases entre aspas" ficam juntas; uma aspa sem par é um caractere comum. '
        f"Até {QUERY_MAXIMUM} caracteres; recusa caracteres de controle, exceto tabulação e "
        "quebras de linha.",
        "schema": {
            "type": "string",
            "maxLength": QUERY_MAXIMUM,
            "pattern": f"^[^{text.REFUSED_IN_LINES}]*$",
            "examples": ["caneca azul"],
        },
    },
    {
        "name": "ordem",
        "in": "query",
        "description": "`-id`: os mais novos primeiro (o padrão); `id`: os mais antigos; "
        "`nome` e `-nome`: pelo nome sem distinguir maiúsculas nem acentos, na ordem dos "
        "pontos de código Unicode; `preco` e `-preco`: do mais barato ao mais caro e o "
        "contrário. Empates, pelo número do produto.",
        "schema": {
            "type": "string",
            "enum": list(ORDENS),
            "default": "-id",
            # Names for generated code, which cannot name `-id` itself (VALUE_0…).
            "x-enum-varnames": [
                f"{ordem.removeprefix('-').upper()}{'_DESC' if ordem[0] == '-' else ''}"
                for ordem in ORDENS
            ],
        },
    },
    {
        "name": "preco_min",
        "in": "query",
        "description": f"Só produtos deste preço para cima, {_PRICE_BOUND}",
        "schema": _PRICE_AS_TEXT,
    },
    {
        "name": "preco_max",
        "in": "query",
        "description": f"Só produtos deste preço para baixo, {_PRICE_BOUND} Menor que "
        "`preco_min` é recusado.",
        "schema": _PRICE_AS_TEXT,
    },
    {
        "name": "id",
        "in": "query",
        "style": "form",
        "explode": True,
        "description": f"Só estes produtos, pelo número (`id=3&id=7`), até {IDS_MAXIMUM}; os que "
        "não existem ou foram removidos não aparecem.",
        "schema": {"type": "array", "items": ID, "maxItems": IDS_MAXIMUM},
    },
    {
        "name": "codigo",
        "in": "query",
        "style": "form",
        "explode": True,
        "description": f"Só os produtos destes códigos (`codigo=CAN-AZ-300&codigo=CAD-01`), até "
        f"{IDS_MAXIMUM}, exatos mas sem distinguir maiúsculas; os que não existem ou foram "
        "removidos não aparecem. A busca `q` também acha um produto pelo código.",
        "schema": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": CODIGO_MAXIMO},
            "maxItems": IDS_MAXIMUM,
        },
    },
    {
        "name": "formato",
        "in": "query",
        "description": "A lista inteira como arquivo para pessoas: `csv` (o Excel em "
        "português) ou `xlsx`. Sem ele, `Accept` decide (`text/csv`: CSV RFC 4180).",
        "schema": {"type": "string", "enum": ["csv", "xlsx"]},
    },
    cursor_param(
        "após este cursor",
        "antes deste cursor",
        "CursorDaLista",
        "Nas ordens `-id` e `id`, o número de um produto; nas outras, um código opaco tirado "
        "dos `links` de uma página, que só vale para a mesma busca e ordem.",
    ),
    {
        "name": "Prefer",
        "in": "header",
        "description": "`count=exact` (RFC 7240): o JSON traz também `total`, e a resposta, "
        "`Preference-Applied: count=exact`; se contar passar do tempo limite do servidor "
        "(CATALOGO_QUERY_TIMEOUT_MS), a página vem sem `total` e sem `Preference-Applied`. "
        "Outras preferências são ignoradas.",
        "schema": {"type": "string", "examples": ["count=exact"]},
    },
]
LIST_HEADERS = {
    "Link": {
        "description": "As páginas vizinhas, como em `links`: rel=next e rel=prev.",
        "schema": {"type": "string"},
    },
    "Preference-Applied": {
        "description": "`count=exact` quando o corpo traz `total` (só em JSON, a pedido).",
        "schema": {"type": "string", "enum": ["count=exact"]},
    },
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
        "Pagina": {
            "type": "object",
            "properties": {
                "produtos": {"type": "array", "items": ref("Produto")},
                "links": {
                    "type": "object",
                    "properties": {"next": {"type": "string"}, "prev": {"type": "string"}},
                },
                "cursores": cursors("CursorDaLista"),
                "total": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Só com `Prefer: count=exact`: quantos produtos a busca "
                    "encontra, em todas as páginas.",
                },
            },
            "required": ["produtos", "links", "cursores"],
        },
        "Cursor": cursor(ID),
        "CursorDaLista": cursor(_LIST_CURSOR),
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
                        }
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
