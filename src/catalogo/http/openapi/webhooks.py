"""The API description of webhooks (http/resources/webhooks.py): subscribing, reading, removing and
delivering again, with their schemas; the deliveries themselves are docs/webhooks.md's. The
bodies are described in JSON only: the /webhooks page posts the same fields as a form, for
people, and a second content type of the same schema makes openapi-python-client 0.29 write a
client that does not type-check (its body turns optional without importing `Unset`)."""

from typing import Any

from catalogo.domain.webhooks import EVENTOS, URL_MAXIMUM
from catalogo.http.openapi import parts

_ID_PARAM = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "O número do webhook.",
    "schema": {**parts.ID, "examples": [3]},
}
_ERRORS = {k: v for k, v in parts.WRITE_ERRORS.items() if k in ("400", "403", "406", "415", "503")}
_INVALID = parts.problem(
    "Não criado: `errors` diz por quê (`url`: malformada, ou de um endereço que não recebe "
    "entregas; `eventos`: vazio ou desconhecido).",
    "ValidationProblem",
)
_MOMENT_OR_NULL = {"anyOf": [parts.MOMENT, {"type": "null"}]}
_EXAMPLE = {
    "id": 3,
    "url": "https://erp.example.com/catalogo/eventos",
    "eventos": ["criado", "alterado"],
    "ativo": True,
    "ultimo_evento": 5012,
    "falhas": 0,
    "proxima_tentativa": None,
    "ultimo_status": 200,
    "ultima_resposta": "ok",
    "ultima_tentativa": "2026-11-27T14:03:12.345678Z",
    "desativado_em": None,
    "motivo": None,
    "criado_em": "2026-11-20T14:03:12.345678Z",
    "criado_por": "maria",
}


def paths() -> dict[str, Any]:
    return {
        "/webhooks": {
            "get": {
                "operationId": "listarWebhooks",
                "tags": ["webhooks"],
                "summary": "Os webhooks e como está a entrega a cada um",
                "responses": {
                    "200": {
                        "description": "Todos, sem os segredos.",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "webhooks": {
                                            "type": "array",
                                            "items": parts.ref("Webhook"),
                                        }
                                    },
                                    "required": ["webhooks"],
                                },
                                "example": {"webhooks": [_EXAMPLE]},
                            },
                            "text/html": parts.HTML,
                        },
                    },
                    "406": parts.WRITE_ERRORS["406"],
                },
            },
            "post": {
                "operationId": "criarWebhook",
                "tags": ["webhooks"],
                "summary": "Assina uma URL aos eventos dos produtos",
                "description": "Cada evento dos tipos pedidos, escrito depois da assinatura, vai "
                "num `POST` à URL, em ordem, um de cada vez, assinado como diz o Standard "
                "Webhooks (`webhook-id`, o mesmo em toda nova tentativa; `webhook-timestamp`; "
                "`webhook-signature`, `v1,` e o HMAC-SHA256 em base64 de `id.timestamp.corpo` "
                "com o segredo). O corpo: `type` (`produto.criado`, …), `timestamp` e `data`, "
                "o evento como no feed e o `produto` como está (null se removido). Sem 2xx, "
                "vai de novo após uns 5 s, 25 s e cada vez mais espaçado, por cerca de três "
                "dias; um 410 ou o fim das tentativas desliga o webhook. A URL só pode levar a "
                "endereços públicos, conferidos na assinatura e em cada entrega.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": parts.ref("NovoWebhook"),
                            "example": {
                                "url": "https://erp.example.com/catalogo/eventos",
                                "eventos": ["criado", "alterado"],
                            },
                        },
                    },
                },
                "responses": {
                    "201": {
                        "description": "Criado: o único momento em que o `segredo` é mostrado.",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": {
                            "application/json": {
                                "schema": parts.ref("WebhookCriado"),
                                "example": {**_EXAMPLE, "segredo": "whsec_…"},
                            }
                        },
                    },
                    "303": parts.REDIRECT,
                    **_ERRORS,
                    "422": _INVALID,
                },
            },
        },
        "/webhooks/{id}": {
            "parameters": [_ID_PARAM],
            "get": {
                "operationId": "obterWebhook",
                "tags": ["webhooks"],
                "summary": "Um webhook e como está a entrega a ele",
                "responses": {
                    "200": {
                        "description": "Sem o segredo.",
                        "content": {
                            "application/json": {
                                "schema": parts.ref("Webhook"),
                                "example": _EXAMPLE,
                            }
                        },
                    },
                    "404": parts.problem("Não há webhook com este número."),
                    "406": parts.problem("Só em JSON."),
                },
            },
            "delete": {
                "operationId": "removerWebhook",
                "tags": ["webhooks"],
                "summary": "Remove um webhook: nenhum evento vai mais a ele",
                "responses": {
                    "204": {"description": "Removido."},
                    "303": parts.REDIRECT,
                    "404": parts.problem("Não há webhook com este número."),
                    **_ERRORS,
                },
            },
        },
        "/webhooks/{id}/reenvio": {
            "parameters": [_ID_PARAM],
            "post": {
                "operationId": "reenviarWebhook",
                "tags": ["webhooks"],
                "summary": "Entrega de novo a partir de um evento, e liga um webhook desligado",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": parts.ref("Reenvio"),
                            "example": {"desde": 5000},
                        },
                    },
                },
                "responses": {
                    "200": {
                        "description": "Ligado, a partir do evento `desde`.",
                        "content": {"application/json": {"schema": parts.ref("Webhook")}},
                    },
                    "303": parts.REDIRECT,
                    "404": parts.problem("Não há webhook com este número."),
                    "422": parts.problem(
                        "`desde` não é o número de um evento.", "ValidationProblem"
                    ),
                    **_ERRORS,
                },
            },
        },
    }


def schemas() -> dict[str, Any]:
    webhook: dict[str, Any] = {
        "type": "object",
        "properties": {
            "id": parts.ID,
            "url": {"type": "string"},
            "eventos": {"type": "array", "items": {"enum": list(EVENTOS)}},
            "ativo": {"type": "boolean"},
            "ultimo_evento": {
                "type": "integer",
                "minimum": 0,
                "description": "O último evento entregue (ou que não era dos tipos pedidos).",
            },
            "falhas": {"type": "integer", "minimum": 0, "description": "Falhas seguidas."},
            "proxima_tentativa": _MOMENT_OR_NULL,
            "ultimo_status": {"type": ["integer", "null"]},
            "ultima_resposta": {
                "type": ["string", "null"],
                "description": "O começo (até 1 KB) da última resposta, ou o que a impediu.",
            },
            "ultima_tentativa": _MOMENT_OR_NULL,
            "desativado_em": _MOMENT_OR_NULL,
            "motivo": {"type": ["string", "null"], "description": "Por que foi desligado."},
            "criado_em": parts.MOMENT,
            "criado_por": {"type": ["string", "null"]},
        },
        "required": [
            "id",
            "url",
            "eventos",
            "ativo",
            "ultimo_evento",
            "falhas",
            "proxima_tentativa",
            "ultimo_status",
            "ultima_resposta",
            "ultima_tentativa",
            "desativado_em",
            "motivo",
            "criado_em",
            "criado_por",
        ],
    }
    return {
        "Webhook": webhook,
        "WebhookCriado": {
            **webhook,
            "properties": {
                **webhook["properties"],
                "segredo": {
                    "type": "string",
                    "pattern": "^whsec_[A-Za-z0-9+/]+=*$",
                    "description": "A chave das assinaturas: guarde-a agora.",
                },
            },
            "required": [*webhook["required"], "segredo"],
        },
        "NovoWebhook": {
            "type": "object",
            "properties": {
                "url": {"type": "string", "maxLength": URL_MAXIMUM, "examples": [_EXAMPLE["url"]]},
                "eventos": {
                    "type": "array",
                    "items": {"enum": list(EVENTOS)},
                    "minItems": 1,
                    "uniqueItems": True,
                },
            },
            "required": ["url", "eventos"],
        },
        "Reenvio": {
            "type": "object",
            "properties": {"desde": {**parts.ID, "description": "O primeiro evento a reenviar."}},
            "required": ["desde"],
        },
    }
