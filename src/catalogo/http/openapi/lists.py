"""The API description of the product list's query (http/listing.py, domain/busca.py): what it
finds, in which order, which page; and the cursors every list is paged by, as parameters and as the
values a JSON page gives (`cursores`)."""

from typing import Any

from catalogo.domain import text
from catalogo.domain.busca import IDS_MAXIMUM, ORDENS, QUERY_MAXIMUM, TOKEN_MAXIMUM
from catalogo.domain.produtos import CODIGO_MAXIMO
from catalogo.http.openapi.parts import ID, PRICE_AS_TEXT, ref


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


# The product list's query (http/listing.py, domain/busca.py): what it finds, in which order, which
# page. A cursor longer than this is refused whatever the order: busca.position_of's limit for a
# token (a number is at most 19 digits). Written there as a literal, so
# tests/http/test_openapi.py checks the two agree.
CURSOR_MAXIMUM = TOKEN_MAXIMUM
LIST_CURSOR = {
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
        "schema": PRICE_AS_TEXT,
    },
    {
        "name": "preco_max",
        "in": "query",
        "description": f"Só produtos deste preço para baixo, {_PRICE_BOUND} Menor que "
        "`preco_min` é recusado.",
        "schema": PRICE_AS_TEXT,
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


def schemas() -> dict[str, Any]:
    """A page of the product list, and the cursors of every list."""
    return {
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
        "CursorDaLista": cursor(LIST_CURSOR),
    }
