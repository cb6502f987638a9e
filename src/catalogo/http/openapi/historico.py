"""The API description of what happened to products: a product's history, the trash and the
change feed (http/resources/historico.py), with their schemas."""

from typing import Any

from catalogo.http.openapi import lists, parts

_CAMPOS = {
    "type": ["object", "null"],
    "description": "`codigo` falta nos eventos de antes dos códigos (o produto não tinha).",
    "properties": {
        "codigo": {"type": ["string", "null"]},
        "nome": {"type": "string"},
        "descricao": {"type": "string"},
        "preco": {"type": "string", "pattern": r"^\d+\.\d{2}$"},
    },
    "required": ["nome", "descricao", "preco"],
}
_EVENT_EXAMPLE = {
    "id": 5012,
    "produto_id": 120,
    "tipo": "alterado",
    "versao": 3,
    "antes": {"codigo": "CAN-AZ-300", "nome": "Caneca azul", "descricao": "", "preco": "39.90"},
    "depois": {"codigo": "CAN-AZ-300", "nome": "Caneca azul", "descricao": "", "preco": "42.00"},
    "quem": "maria",
    "token": None,
    "origem": "web",
    "lote": None,
    "request_id": "5df27f1581bb6059-1",
    "em": "2026-11-23T09:41:07.112233Z",
}
_STAFF_ERRORS = {
    "400": parts.problem("Parâmetro malformado: a mensagem diz o que é aceito."),
    "406": parts.WRITE_ERRORS["406"],
}


def paths() -> dict[str, Any]:
    return {
        "/produtos/{id}/historico": {
            "parameters": [parts.ID_PARAM],
            "get": {
                "operationId": "historicoDoProduto",
                "tags": ["historico"],
                "summary": "As alterações de um produto, da mais recente à mais antiga",
                "description": "Um evento por criação, alteração, remoção e restauração: "
                "quem, quando, de onde e os campos antes e depois. Paginado pela versão "
                "(`depois`, `antes`). Um produto removido mantém o histórico.",
                "parameters": [
                    lists.cursor_param(
                        "das versões anteriores a esta", "das versões posteriores a esta"
                    )
                ],
                "responses": {
                    "200": {
                        "description": "Uma página; `Link` traz rel=next e rel=prev.",
                        "content": {
                            "application/json": {
                                "schema": parts.ref("PaginaDeEventos"),
                                "example": {
                                    "eventos": [_EVENT_EXAMPLE],
                                    "links": {},
                                    "cursores": {},
                                },
                            },
                            "text/html": parts.HTML,
                        },
                    },
                    "404": parts.problem("Não há produto com este número (ou foi apagado)."),
                    **_STAFF_ERRORS,
                },
            },
        },
        "/produtos/removidos": {
            "get": {
                "operationId": "listarRemovidos",
                "tags": ["historico"],
                "summary": "Os produtos removidos, o removido mais recentemente primeiro",
                "description": "Cada um volta com `POST /produtos/{id}/restauracao` até ser "
                "apagado de vez (`catalogo removidos limpar`). Paginada pelo número do produto.",
                "parameters": [lists.cursor_param("após este produto", "antes deste produto")],
                "responses": {
                    "200": {
                        "description": "Uma página; `Link` traz rel=next e rel=prev.",
                        "content": {
                            "application/json": {
                                "schema": parts.ref("PaginaDeRemovidos"),
                                "example": {
                                    "removidos": [
                                        {
                                            "produto": parts.STORED_EXAMPLE,
                                            "removido_em": "2026-11-23T09:41:07.112233Z",
                                            "quem": "maria",
                                            "token": None,
                                        }
                                    ],
                                    "links": {},
                                    "cursores": {},
                                },
                            },
                            "text/html": parts.HTML,
                        },
                    },
                    **_STAFF_ERRORS,
                },
            },
        },
        "/produtos/eventos": {
            "get": {
                "operationId": "eventos",
                "tags": ["historico"],
                "summary": "Tudo o que mudou no catálogo, evento a evento, para sincronizar",
                "description": "Os eventos de todos os produtos em ordem de `id`, remoções "
                "incluídas. Siga `links.next` (também quando a página vem vazia: é onde os "
                "próximos aparecerão): quem o segue nunca perde um evento gravado, nos dois "
                "bancos.",
                "parameters": [
                    {
                        "name": "depois",
                        "in": "query",
                        "description": "O último evento já lido (0: desde o primeiro).",
                        "schema": {**parts.ID, "minimum": 0, "default": 0},
                    },
                    {
                        "name": "limite",
                        "in": "query",
                        "description": "Quantos eventos, no máximo.",
                        "schema": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 1000,
                            "default": 100,
                        },
                    },
                ],
                "responses": {
                    "200": {
                        "description": "Até `limite` eventos; `Link` traz rel=next.",
                        "content": {
                            "application/json": {
                                "schema": parts.ref("PaginaDoFeed"),
                                "example": {
                                    "eventos": [_EVENT_EXAMPLE],
                                    "links": {"next": "/produtos/eventos?depois=5012&limite=100"},
                                    "cursores": {"next": {"depois": 5012}},
                                },
                            }
                        },
                    },
                    **_STAFF_ERRORS,
                },
            },
        },
    }


def schemas() -> dict[str, Any]:
    links = {
        "type": "object",
        "properties": {"next": {"type": "string"}, "prev": {"type": "string"}},
    }
    return {
        "Evento": {
            "type": "object",
            "properties": {
                "id": parts.ID,
                "produto_id": parts.ID,
                "tipo": {"enum": ["criado", "alterado", "removido", "restaurado"]},
                "versao": parts.VERSION,
                "antes": {**_CAMPOS, "description": "Os campos antes (null ao criar)."},
                "depois": {**_CAMPOS, "description": "Os campos depois (null ao remover)."},
                "quem": {"type": ["string", "null"], "description": "O usuário; null: anônimo."},
                "token": {"type": ["string", "null"], "description": "O nome do token usado."},
                "origem": {"enum": ["web", "api", "cli", "importacao", "lote"]},
                "lote": {"type": ["string", "null"]},
                "request_id": {"type": ["string", "null"]},
                "em": {**parts.MOMENT, "description": "Quando (UTC)."},
            },
            "required": [
                "id",
                "produto_id",
                "tipo",
                "versao",
                "antes",
                "depois",
                "quem",
                "token",
                "origem",
                "lote",
                "request_id",
                "em",
            ],
        },
        "PaginaDeEventos": {
            "type": "object",
            "properties": {
                "eventos": {"type": "array", "items": parts.ref("Evento")},
                "links": links,
                "cursores": lists.cursors("Cursor"),
            },
            "required": ["eventos", "links", "cursores"],
        },
        "PaginaDoFeed": {
            "type": "object",
            "properties": {
                "eventos": {"type": "array", "items": parts.ref("Evento")},
                "links": links,
                "cursores": {
                    "type": "object",
                    "description": "O `depois` da próxima leitura, o mesmo de `links.next`.",
                    "properties": {
                        "next": {
                            "type": "object",
                            "properties": {"depois": {**parts.ID, "minimum": 0}},
                            "required": ["depois"],
                        }
                    },
                    "required": ["next"],
                },
            },
            "required": ["eventos", "links", "cursores"],
        },
        "PaginaDeRemovidos": {
            "type": "object",
            "properties": {
                "removidos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "produto": parts.ref("Produto"),
                            "removido_em": parts.MOMENT,
                            "quem": {"type": ["string", "null"]},
                            "token": {"type": ["string", "null"]},
                        },
                        "required": ["produto", "removido_em", "quem", "token"],
                    },
                },
                "links": links,
                "cursores": lists.cursors("Cursor"),
            },
            "required": ["removidos", "links", "cursores"],
        },
    }
