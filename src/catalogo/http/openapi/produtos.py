"""The description of the product's own operations (the list, a product, the forms, the
restore), and the document they and http/openapi/historico.py's are assembled into."""

from typing import Any

from catalogo.domain.planilhas import XLSX
from catalogo.http.openapi import historico, importacoes, lists, lotes, parts, webhooks


def document() -> dict[str, Any]:
    """The whole document but for security, which http/openapi/__init__.py reads off the routes."""
    produto_json = {"application/json": parts.PRODUTO_JSON, "text/html": parts.HTML}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "catalogo",
            "version": "1",
            "description": "Produtos de um catálogo.\n\n"
            "**Que formato vem**: cada endereço responde HTML a navegadores e JSON a "
            "programas. É programa quem manda `Authorization: Bearer …` (navegadores nunca o "
            "mandam) ou um corpo JSON: recebe JSON, também sem `Accept` ou com `Accept: */*`, "
            "a menos que peça HTML pelo nome (`Accept: text/html`). Sem token nem corpo JSON, "
            "peça `Accept: application/json`. Erros em JSON são `application/problem+json` "
            "(RFC 9457).\n\nAs credenciais que cada operação exige "
            "são as do modo em que o servidor está agora (`x-catalogo-auth`): ele muda com "
            "CATALOGO_AUTH e, sem ela, quando o primeiro usuário é criado.",
        },
        "tags": parts.TAGS,
        "paths": {
            "/produtos": {
                "get": {
                    "operationId": "listarProdutos",
                    "tags": ["produtos"],
                    "summary": "A lista de produtos: busca, filtros e ordem",
                    "description": "Os produtos que atendem a todos os filtros dados (`q`, "
                    "`preco_min`, `preco_max`, `id`, `codigo`), dos mais novos aos mais "
                    "antigos ou na `ordem` pedida; removidos nunca aparecem. As páginas "
                    "seguintes e anteriores estão em `links` (e no cabeçalho `Link`), com a "
                    "mesma busca. Parâmetros desconhecidos são ignorados.\n\n"
                    "**Exportar**: o resultado inteiro da mesma busca, na mesma ordem (não uma "
                    "página), como arquivo: `Accept: text/csv` dá CSV RFC 4180 para programas "
                    "(`,`, ponto decimal, UTF-8 sem BOM, horários em UTC); `formato=csv` dá o "
                    "CSV do Excel em português (UTF-8 com BOM, `;`, CRLF, `1234,56`, horários "
                    "do servidor); `formato=xlsx` (ou `Accept` com o tipo do xlsx) uma "
                    "planilha com células tipadas. Colunas: "
                    "`id;codigo;nome;descricao;preco;versao;atualizado_em`. Um texto que "
                    "começa com `=`, `+`, `-`, `@`, tab, CR ou LF ganha um `'` à frente no CSV.",
                    "parameters": lists.LIST_PARAMS,
                    "responses": {
                        "200": {
                            "description": "Uma página; `Link` traz rel=next e rel=prev.",
                            "headers": lists.LIST_HEADERS,
                            "content": {
                                "application/json": {
                                    "schema": parts.ref("Pagina"),
                                    "example": {
                                        "produtos": [parts.STORED_EXAMPLE],
                                        "links": {"next": "/produtos?depois=120"},
                                        "cursores": {"next": {"depois": "120"}},
                                    },
                                },
                                "text/html": parts.HTML,
                                "text/csv": {
                                    "schema": {"type": "string"},
                                    "example": "id,codigo,nome,descricao,preco,versao,"
                                    "atualizado_em\r\n120,CAN-AZ-300,Caneca azul,,39.90,3,"
                                    "2026-11-23T09:41:07.112233Z\r\n",
                                },
                                XLSX: {"schema": {"type": "string", "format": "binary"}},
                            },
                        },
                        "400": parts.problem(
                            "Parâmetro malformado (também `formato`, que só aceita `csv` e "
                            "`xlsx`); a mensagem diz o que é aceito: `q` longa "
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
                            "a mensagem diz como refiná-la. Ou, em xlsx, mais produtos do que "
                            "uma planilha cabe (1.048.575): exporte em CSV. Um navegador recebe "
                            "a página da lista com a mensagem."
                        ),
                    },
                },
                "post": {
                    "operationId": "criarProduto",
                    "tags": ["produtos"],
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
                    "tags": ["operacao"],
                    "summary": "O processo está de pé (não consulta o banco)",
                    "responses": {"200": parts.STATUS},
                }
            },
            "/readyz": {
                "get": {
                    "operationId": "pronto",
                    "tags": ["operacao"],
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
                    "tags": ["paginas"],
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
                    "tags": ["produtos"],
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
                            "headers": {"ETag": parts.ETAG},
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
            **historico.paths(),
            **importacoes.paths(),
            **lotes.paths(),
            **webhooks.paths(),
            "/produtos/{id}": {
                "parameters": [parts.ID_PARAM],
                "get": {
                    "operationId": "obterProduto",
                    "tags": ["produtos"],
                    "summary": "Um produto (em HTML, a página de edição)",
                    "parameters": [
                        parts.IF_NONE_MATCH,
                        parts.RETURN_PARAM,
                    ],
                    "responses": {
                        "200": {
                            "description": "O produto.",
                            "headers": {"ETag": parts.ETAG},
                            "content": produto_json,
                            "links": {k: v for k, v in parts.LINKS.items() if k != "ObterProduto"},
                        },
                        "304": {
                            "description": "Não mudou desde a ETag em If-None-Match.",
                            "headers": {"ETag": parts.ETAG},
                        },
                        "400": parts.problem("`lista` malformada (só na página HTML)."),
                        "404": parts.problem("Não há produto com este número."),
                        "412": parts.problem(
                            "O produto não está na versão de If-Match, ou If-Match não traz "
                            "uma ETag que o servidor dá."
                        ),
                        "406": parts.WRITE_ERRORS["406"],
                    },
                },
                "put": {
                    "operationId": "atualizarProduto",
                    "tags": ["produtos"],
                    "summary": "Atualiza um produto",
                    "parameters": [
                        parts.if_match("Só grava se o produto ainda estiver nesta versão.")
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
                        "412": parts.problem(
                            "O produto não está mais na versão de If-Match, ou If-Match não "
                            "traz uma ETag que o servidor dá."
                        ),
                    },
                },
                "delete": {
                    "operationId": "removerProduto",
                    "tags": ["produtos"],
                    "summary": "Remove um produto",
                    "parameters": [
                        parts.if_match("Só remove se o produto ainda estiver nesta versão.")
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
                        "412": parts.problem(
                            "O produto não está mais na versão de If-Match, ou If-Match não "
                            "traz uma ETag que o servidor dá."
                        ),
                        "503": parts.WRITE_ERRORS["503"],
                    },
                },
            },
        },
        "components": {
            "schemas": {
                **parts.schemas(),
                **lists.schemas(),
                **historico.schemas(),
                **importacoes.schemas(),
                **lotes.schemas(),
                **webhooks.schemas(),
            }
        },
    }
