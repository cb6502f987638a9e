"""The API description of batches (http/resources/lotes.py): asking for one, confirming it, reading
it and undoing it, with their schemas."""

from typing import Any

from catalogo.http.openapi import parts

_ID_PARAM = parts.lote_id_param("do lote")
_ERRORS = {k: v for k, v in parts.WRITE_ERRORS.items() if k in ("400", "403", "406", "503")}
_ITEM = {
    "type": "object",
    "properties": {
        "id": parts.ID,
        "versao": parts.VERSION,
        "nome": {"type": "string"},
        "antes": {"type": "string"},
        "depois": {"type": ["string", "null"]},
    },
}


def paths() -> dict[str, Any]:
    return {
        "/produtos/lote": {
            "post": {
                "operationId": "alterarEmLote",
                "tags": ["lotes"],
                "summary": "Remove, reajusta ou define o preço de muitos produtos de uma vez",
                "description": "Sem `confirmar`: o que o lote faria, produto a produto (nada "
                "é gravado), com a `selecao` e o `lote` para confirmar. Com `confirmar: true`: "
                "aplica tudo ou nada, numa transação, só se cada produto ainda estiver na "
                "versão mostrada (`selecao`, ou `versao` em cada id); senão 409 e a "
                "confirmação refeita. Preços com duas casas, meio centavo para cima, nunca "
                "abaixo de R$ 0,01 (esses ficam de fora, em `recusados`). Até "
                "CATALOGO_LOTE_MAXIMO produtos (10.000).",
                "parameters": [
                    {
                        "name": "Idempotency-Key",
                        "in": "header",
                        "description": "Uma nova tentativa com a mesma chave não grava de "
                        "novo (`Idempotent-Replayed: true`).",
                        "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                    }
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": parts.ref("PedidoDeLote")},
                        "application/x-www-form-urlencoded": {"schema": parts.ref("PedidoDeLote")},
                    },
                },
                "responses": {
                    "200": {
                        "description": "A confirmação (sem `confirmar`) ou o lote feito.",
                        "content": {
                            "application/json": {"schema": parts.ref("Lote")},
                            "text/html": parts.HTML,
                        },
                    },
                    "303": {
                        "description": "Resposta ao navegador: a lista de onde veio, com "
                        "um aviso que oferece desfazer.",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                    },
                    **_ERRORS,
                    "409": parts.problem("Produtos mudaram desde a confirmação: nada gravado."),
                    "413": parts.WRITE_ERRORS["413"],
                    "415": parts.WRITE_ERRORS["415"],
                    "422": parts.problem(
                        "Ação, percentual, preço, seleção ou busca que não servem, ou produtos "
                        "demais: a mensagem diz o quê."
                    ),
                },
            },
        },
        "/produtos/lote/{id}": {
            "parameters": [_ID_PARAM],
            "get": {
                "operationId": "obterLote",
                "tags": ["lotes"],
                "summary": "Um lote: os eventos que ele gravou, 100 por página",
                "parameters": [
                    {
                        "name": "pagina",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 999999},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "O lote.",
                        "content": {
                            "application/json": {"schema": parts.ref("LoteFeito")},
                            "text/html": parts.HTML,
                        },
                    },
                    "400": parts.problem("`pagina` que não é um número de 1 em diante."),
                    "404": parts.problem("Não há lote com este número."),
                    "406": parts.WRITE_ERRORS["406"],
                },
            },
        },
        "/produtos/lote/{id}/reversao": {
            "parameters": [_ID_PARAM],
            "post": {
                "operationId": "desfazerLote",
                "tags": ["lotes"],
                "summary": "Desfaz um lote, inteiro ou nada",
                "description": "Cada produto volta ao que era (os removidos voltam), se "
                "nenhum mudou desde o lote; senão 409 com os números em `produtos`.",
                "responses": {
                    "200": {
                        "description": "Desfeito.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "lote": {"type": "string"},
                                        "desfeitos": {"type": "integer"},
                                    },
                                }
                            }
                        },
                    },
                    "303": {
                        "description": "Resposta ao navegador: a lista de onde veio.",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                    },
                    **_ERRORS,
                    "404": parts.problem("Não há lote com este número."),
                    "409": parts.problem("Produtos mudaram desde o lote, ou ele já foi desfeito."),
                },
            },
        },
    }


def schemas() -> dict[str, Any]:
    return {
        "PedidoDeLote": {
            "type": "object",
            "properties": {
                "acao": {"enum": ["reajustar", "definir", "remover"]},
                "percentual": {"type": "string", "examples": ["8", "-10", "2,5"]},
                "preco": {"type": "string", "examples": ["19,90"]},
                "ids": {
                    "type": "array",
                    "items": {
                        "oneOf": [
                            parts.ID,
                            {
                                "type": "object",
                                "properties": {"id": parts.ID, "versao": parts.VERSION},
                                "required": ["id"],
                            },
                        ]
                    },
                },
                "busca": {
                    "type": "string",
                    "description": "A busca da lista, como na URL (`q=caneca&preco_max=50`): "
                    "todos os produtos que ela encontra.",
                },
                "selecao": {"type": "string", "description": "A da confirmação."},
                "confirmar": {"type": "boolean"},
            },
            "required": ["acao"],
        },
        "Lote": {
            "type": "object",
            "properties": {
                "acao": {"enum": ["reajustar", "definir", "remover"]},
                "total": {"type": "integer", "minimum": 0},
                "itens": {"type": "array", "items": _ITEM},
                "recusados": {"type": "array", "items": _ITEM},
                "selecao": {"type": "string"},
                "lote": {"type": "string"},
                "links": {"type": "object"},
            },
            "required": ["lote"],
        },
        "LoteFeito": {
            "type": "object",
            "properties": {
                "lote": {"type": "string"},
                "desfeito": {"type": "boolean"},
                "eventos": {"type": "array", "items": parts.ref("Evento")},
                "links": {"type": "object"},
            },
            "required": ["lote", "desfeito", "eventos"],
        },
    }
