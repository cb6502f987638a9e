"""The API description of imports (http/resources/importacoes.py): sending a file for its dry run,
reading the report, confirming and undoing, with their schemas."""

from typing import Any

from catalogo.http.openapi import parts

_ID_PARAM = parts.lote_id_param("da importação")
_NOT_FOUND = parts.problem("Não há importação com este número.")
_IDEMPOTENCY = {
    "name": "Idempotency-Key",
    "in": "header",
    "description": "Uma nova tentativa com a mesma chave recebe a primeira resposta "
    "(`Idempotent-Replayed: true`); sem chave, confirmar de novo também não grava nada.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
}
_IMPORT_JSON = {"application/json": {"schema": parts.ref("Importacao")}, "text/html": parts.HTML}
_FILE = {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"}
_ERRORS = {k: v for k, v in parts.WRITE_ERRORS.items() if k in ("400", "403", "406", "503")}


def paths() -> dict[str, Any]:
    return {
        "/produtos/importacoes": {
            "get": {
                "operationId": "listarImportacoes",
                "tags": ["importacoes"],
                "summary": "As importações recentes (em HTML, o formulário de envio)",
                "responses": {
                    "200": {
                        "description": "As 20 mais recentes, a mais nova primeiro.",
                        "content": {
                            "application/json": {"schema": parts.ref("ListaDeImportacoes")},
                            "text/html": parts.HTML,
                        },
                    },
                    "406": parts.WRITE_ERRORS["406"],
                },
            },
            "post": {
                "operationId": "enviarImportacao",
                "tags": ["importacoes"],
                "summary": "Envia uma planilha e recebe a prévia (nada é gravado nos produtos)",
                "description": "CSV (UTF-8, com ou sem BOM, ou Windows-1252 com "
                "`codificacao=windows-1252`; `;`, `,` ou tab) ou xlsx, até 50.000 linhas e "
                "20 MiB (CATALOGO_IMPORT_MAX_BYTES). O relatório fica guardado por uma hora "
                "e qualquer instância o mostra ou confirma.",
                "parameters": [
                    {
                        "name": "codificacao",
                        "in": "query",
                        "description": "A do CSV enviado como corpo (num formulário, o campo "
                        "de mesmo nome).",
                        "schema": {"enum": ["utf-8", "windows-1252"], "default": "utf-8"},
                    }
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "arquivo": _FILE,
                                    "codificacao": {"enum": ["utf-8", "windows-1252"]},
                                },
                                "required": ["arquivo"],
                            }
                        },
                        "text/csv": {"schema": {"type": "string"}},
                        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {
                            "schema": _FILE
                        },
                        "application/octet-stream": {"schema": _FILE},
                    },
                },
                "responses": {
                    "201": {
                        "description": "A prévia: o resumo e a primeira página do relatório.",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": {"application/json": {"schema": parts.ref("Importacao")}},
                    },
                    "303": {
                        "description": "Resposta ao navegador: a página da prévia.",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                    },
                    **_ERRORS,
                    "413": parts.problem("Arquivo acima do limite de uma importação."),
                    "415": parts.problem("Corpo que não é formulário nem planilha."),
                    "422": parts.problem(
                        "Arquivo que não pode ser lido como um todo (codificação, formato, "
                        "linhas ou colunas demais, títulos repetidos): a mensagem diz o que "
                        "fazer. Erros de uma linha vêm no relatório, não aqui."
                    ),
                },
            },
        },
        "/produtos/importacoes/modelo": {
            "get": {
                "operationId": "modeloDeImportacao",
                "tags": ["importacoes"],
                "summary": "Uma planilha vazia com as colunas que a importação lê",
                "parameters": [
                    {
                        "name": "formato",
                        "in": "query",
                        "schema": {"enum": ["csv", "xlsx"], "default": "csv"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "O arquivo (`Content-Disposition: attachment`).",
                        "content": {
                            "text/csv": {"schema": {"type": "string"}},
                            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {
                                "schema": _FILE
                            },
                        },
                    },
                    "400": parts.problem("`formato` que não é csv nem xlsx."),
                },
            },
        },
        "/produtos/importacoes/{id}": {
            "parameters": [_ID_PARAM],
            "get": {
                "operationId": "obterImportacao",
                "tags": ["importacoes"],
                "summary": "Uma importação e uma página do seu relatório",
                "description": "Cada página traz até 100 linhas de cada tipo (erros, "
                "alterados, novos). Depois de aplicada, as linhas dão lugar aos eventos que "
                "ela gravou (`GET /produtos/eventos`, `lote` = o número da importação).",
                "parameters": [
                    {
                        "name": "pagina",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 999999},
                    }
                ],
                "responses": {
                    "200": {"description": "A importação.", "content": _IMPORT_JSON},
                    "400": parts.problem("`pagina` que não é um número de 1 em diante."),
                    "404": _NOT_FOUND,
                    "406": parts.WRITE_ERRORS["406"],
                },
            },
        },
        "/produtos/importacoes/{id}/confirmacao": {
            "parameters": [_ID_PARAM],
            "post": {
                "operationId": "confirmarImportacao",
                "tags": ["importacoes"],
                "summary": "Aplica a prévia: todas as linhas ou nenhuma, numa transação",
                "description": "Só se nenhum produto que ela muda mudou desde a prévia; "
                "senão 409 com o relatório refeito (`importacao`), e nada gravado. Cada "
                "produto gravado tem o seu evento, `origem` importacao e `lote` o número da "
                "importação. Confirmar de novo não grava outra vez.",
                "parameters": [_IDEMPOTENCY],
                "responses": {
                    "200": {
                        "description": "Aplicada (agora ou antes).",
                        "content": {"application/json": {"schema": parts.ref("Importacao")}},
                    },
                    "303": {
                        "description": "Resposta ao navegador: a lista, com um aviso que "
                        "oferece desfazer.",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                    },
                    **_ERRORS,
                    "404": _NOT_FOUND,
                    "409": parts.problem(
                        "Produtos mudaram desde a prévia (`importacao`: o relatório refeito), "
                        "ou a importação já foi desfeita."
                    ),
                    "410": parts.problem("A prévia expirou (vale uma hora)."),
                    "422": parts.problem("A prévia tem erros: corrija o arquivo e envie de novo."),
                },
            },
        },
        "/produtos/importacoes/{id}/reversao": {
            "parameters": [_ID_PARAM],
            "post": {
                "operationId": "desfazerImportacao",
                "tags": ["importacoes"],
                "summary": "Desfaz uma importação aplicada, inteira ou nada",
                "description": "Cada produto alterado volta ao que era, e os criados são "
                "removidos (vão para os removidos), se nenhum mudou desde a importação; senão "
                "409 com os números deles em `produtos`, e nada desfeito.",
                "responses": {
                    "200": {
                        "description": "Desfeita.",
                        "content": {"application/json": {"schema": parts.ref("Importacao")}},
                    },
                    "303": {
                        "description": "Resposta ao navegador: a página da importação.",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                    },
                    **_ERRORS,
                    "404": _NOT_FOUND,
                    "409": parts.problem(
                        "Produtos mudaram desde a importação (`produtos`), ou ela não foi "
                        "aplicada, ou já foi desfeita."
                    ),
                },
            },
        },
    }


_NULLABLE_TEXT = {"type": ["string", "null"]}
_NULLABLE_MOMENT = {**parts.MOMENT, "type": ["string", "null"]}


def schemas() -> dict[str, Any]:
    line = {"type": "integer", "minimum": 2, "description": "A linha no arquivo."}
    produto = {
        "type": "object",
        "properties": {
            "codigo": _NULLABLE_TEXT,
            "nome": {"type": "string"},
            "descricao": {"type": "string"},
            "preco": {"type": "string", "pattern": r"^\d+\.\d{2}$"},
        },
    }
    planned = {
        "type": "object",
        "properties": {
            "linha": line,
            "id": {**parts.ID, "type": ["integer", "null"]},
            "versao": {**parts.VERSION, "type": ["integer", "null"]},
            "nome": {"type": "string"},
            "alteracoes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "campo": {"enum": ["codigo", "nome", "descricao", "preco"]},
                        "antes": {"type": "string"},
                        "depois": {"type": "string"},
                    },
                },
            },
            "produto": produto,
            "restaura": {
                "type": "boolean",
                "const": True,
                "description": "Presente quando a linha traz de volta, com os seus valores, o "
                "produto em Removidos que guarda o código dela (docs/importing.md).",
            },
        },
        "required": ["linha", "nome", "produto"],
    }
    return {
        "Importacao": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                "arquivo": {"type": "string"},
                "codificacao": {"enum": ["utf-8", "windows-1252"]},
                "estado": {"enum": ["preparada", "aplicada", "desfeita", "expirada"]},
                "quem": _NULLABLE_TEXT,
                "token": _NULLABLE_TEXT,
                "criada_em": parts.MOMENT,
                "expira_em": parts.MOMENT,
                "aplicada_em": _NULLABLE_MOMENT,
                "aplicada_por": _NULLABLE_TEXT,
                "desfeita_em": _NULLABLE_MOMENT,
                "desfeita_por": _NULLABLE_TEXT,
                "resumo": {
                    "type": "object",
                    "properties": {
                        **{
                            k: {"type": "integer", "minimum": 0}
                            for k in ("novos", "alterados", "restaurados", "inalterados", "erros")
                        },
                        "colunas_ignoradas": {"type": "array", "items": {"type": "string"}},
                    },
                },
                "relatorio": {
                    "type": "object",
                    "description": "Uma página do relatório (no envio e em GET).",
                    "properties": {
                        "pagina": {"type": "integer", "minimum": 1},
                        "paginas": {"type": "integer", "minimum": 1},
                        "erros": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "linha": line,
                                    "campo": {"type": "string"},
                                    "mensagem": {"type": "string"},
                                    "valor": {
                                        **_NULLABLE_TEXT,
                                        "description": "A célula como o arquivo a traz (null "
                                        "quando vazia, ou quando a mensagem já a cita).",
                                    },
                                    "texto": {
                                        "type": "string",
                                        "examples": ["linha 17, preço: Preencha este campo."],
                                    },
                                },
                            },
                        },
                        "alterados": {"type": "array", "items": planned},
                        "novos": {"type": "array", "items": planned},
                    },
                },
                "links": {
                    "type": "object",
                    "properties": {
                        k: {"type": "string"} for k in ("prev", "next", "confirmacao", "reversao")
                    },
                },
            },
            "required": ["id", "arquivo", "estado", "criada_em", "expira_em", "resumo", "links"],
        },
        "ListaDeImportacoes": {
            "type": "object",
            "properties": {"importacoes": {"type": "array", "items": parts.ref("Importacao")}},
            "required": ["importacoes"],
        },
    }
