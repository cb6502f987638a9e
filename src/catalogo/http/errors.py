"""Every error catalogo answers with: the statuses, their Portuguese words, and the handlers.

    status  when                                                        raised by
    400     a body that is not UTF-8, broken multipart, a file upload,  bodies, guard,
            malformed JSON, JSON that is not an object (or repeats a  resources
            key, or holds a lone surrogate such as "\\ud800"), over
            1,000 fields, a field we read sent twice with two values,
            a bad Content-Length, a `_method` other than
            PUT or DELETE, a malformed `versao`, cursor, `lista`,
            `removidos`, feed parameter or Idempotency-Key, two Idempotency-Keys,
            both `antes` and `depois`, a body cut short (hung up mid-body, broken chunked framing),
            a `Host` not in CATALOGO_ALLOWED_HOSTS, two `Host`s, none
            on HTTP/1.1
    401     no credentials where the mode asks for them (a program;     access
            a browser is sent to /entrar instead), a bearer token
            that is malformed, unknown, expired or revoked (with
            WWW-Authenticate)
    403     a write a browser sends from another site; a signed-in      guard, access
            user whose role does not allow it
    404     an unknown path or product; an id outside 1 … 2^63-1        routing, resources
    405     a method the path does not accept (with `Allow`)            routing
    406     an Accept that rules out every type the path has            resources
    408     a body that takes longer than CATALOGO_BODY_TIMEOUT_MS      guard
            allows (Connection: close)
    409     a `versao` in the body that is no longer the product's      resources
            (JSON: what is saved now; a person's form: merged, and
            409 only when both changed a field differently), a
            restore of a product that is not removed, a retry under
            an Idempotency-Key whose first request is still running
    412     an If-Match the product no longer matches (any If-Match on  conditional,
            a product that does not exist), a write's matching          resources
            If-None-Match
    413     a body over CATALOGO_MAX_BODY_BYTES, before it is parsed    guard
    415     a write body that is neither form data nor JSON, or not     bodies
            UTF-8
    422     invalid fields (the form again, or `errors` by field); an   resources,
            Idempotency-Key already used with another request; a        idempotency
            sign-in with a wrong name or password (the form again); a
            list query stopped at CATALOGO_QUERY_TIMEOUT_MS
    429     too many failed sign-ins (Retry-After)                      resources
    500     a bug: a page or problem with the request id; the trace     server_error
            only in the log, under that id
    503     the database cannot answer now, with Retry-After; more      storage, /readyz,
            sign-ins waiting for a password check than the server       accounts
            takes on

Checked in this order: Host (400), cross-site (403), body size and time (413, 408, 400),
method override (400), routing (404, 405), credentials and role (401 or 303, 403), then in the
endpoint: 406; for PUT and DELETE the
preconditions (412); the body's type and syntax (415, 400); the fields (422); the write
itself (404, 409, 412).

This module is what is said: the statuses, their Portuguese titles and messages, and the
exceptions that carry them; http/bulk_errors.py says what imports and batches refuse. How it is
answered is http/problems.py's: browsers get the site's error page, clients that prefer JSON
RFC 9457 problem details.
"""

from collections.abc import Collection

from starlette.exceptions import HTTPException

from catalogo.domain.planilhas import SHEET_ROWS
from catalogo.domain.produtos import format_moment
from catalogo.storage import Removal

VARY = {"Vary": "Accept"}
RETRY_AFTER = {"Retry-After": "5"}

TITLES = {
    400: "Requisição inválida",
    401: "Entre para continuar",
    403: "Acesso negado",
    404: "Página não encontrada",
    405: "Método não permitido",
    406: "Formato não disponível",
    408: "Tempo esgotado",
    409: "Conflito de edição",
    412: "Versão desatualizada",
    413: "Conteúdo grande demais",
    415: "Formato não aceito",
    429: "Muitas tentativas",
    500: "Erro interno",
    503: "Serviço indisponível",
}
# What a person reads on the page where a program gets `DEFAULT_DETAILS`' precise words.
PAGE_DETAILS = {
    405: "Esta página não permite essa ação. Use os botões da página ou volte à lista.",
}
DEFAULT_DETAILS = {
    404: "Não há nada neste endereço. Veja a lista de produtos.",
    405: "Este endereço não aceita o método {method}. Aceita: {allow}.",
    406: "Não temos este conteúdo no formato pedido em Accept.",
    500: "Algo deu errado do nosso lado. Tente de novo; se persistir, informe o código abaixo.",
    503: "O banco de dados não respondeu a tempo. Tente de novo em instantes.",
}

# Messages: each says what went wrong and what to send instead. `{}` takes what was sent.
NOT_UTF8 = "O corpo da requisição não é UTF-8 válido."
REPEATED_FIELD = "O campo «{}» veio mais de uma vez, com valores diferentes."
MALFORMED_FORM = "Formulário malformado: {}."
FILE_REFUSED = "Este formulário não aceita arquivos (campo «{}»)."
ONE_FILE = "Envie um arquivo só no campo «{}»."
BAD_SUBSCRIPTION = 'O corpo deve ser {{"url": "https://…", "eventos": ["criado", …]}}.'
INVALID_SUBSCRIPTION = "O webhook não foi criado assim: `errors` diz o que há em cada campo."
BAD_PAGE = "pagina deve ser um número de 1 em diante (recebido «{}»)."
MALFORMED_JSON = "JSON malformado: {}."
LONE_SURROGATE = "O JSON traz \\u{:04x} sem par: não é um caractere; envie o texto em UTF-8."
NOT_A_JSON_OBJECT = 'O corpo deve ser um objeto JSON: {{"nome": …}}.'
BAD_CONTENT_LENGTH = "Content-Length inválido."
BODY_CUT_SHORT = (
    "O corpo da requisição terminou antes do anunciado, ou veio malformado (chunked). "
    "Nada foi gravado."
)
TWO_HOSTS = "A requisição traz mais de um cabeçalho Host; envie um só."
NO_HOST = "Falta o cabeçalho Host (ou veio vazio), obrigatório em HTTP/1.1."
BAD_HOST = "O cabeçalho Host não é um nome nem um endereço válido."
HOST_NOT_ALLOWED = (
    "Este serviço não atende pelo nome «{:.100}». Quem o administra pode incluí-lo em "
    "CATALOGO_ALLOWED_HOSTS."
)
BAD_METHOD_OVERRIDE = "_method aceita apenas PUT ou DELETE (recebido «{:.50}»)."
BAD_VERSION = "A versão (versao) deve ser um número inteiro positivo."
BAD_CURSOR = "O parâmetro «{}» deve ser o número de um produto."
FOREIGN_CURSOR = (
    "O parâmetro «{}» não é um cursor desta lista ({}): siga os links da página, ou volte à "
    "primeira."
)
BOTH_CURSORS = "Use «antes» ou «depois», não os dois."
BAD_RETURN = "«{}» deve ser a consulta de uma página {}, como depois=120 (recebido «{:.50}»)."
BAD_VERSION_CURSOR = "O parâmetro «{}» deve ser o número de uma versão do produto."
BAD_FEED_AFTER = (
    "depois deve ser o número de um evento (0 para começar do primeiro), como no link next."
)
BAD_FEED_LIMIT = "limite deve ser um número de 1 a {}."
TWO_IDEMPOTENCY_KEYS = "Envie uma só Idempotency-Key."
BAD_IDEMPOTENCY_KEY = "Idempotency-Key deve ter de 1 a 255 caracteres ASCII visíveis, sem espaços."
INVALID_FIELDS = "Corrija os campos indicados."
EDIT_CONFLICT = "Outra pessoa salvou este produto depois da versão em que você se baseou."
NOT_REMOVED = "O produto não está removido: não há o que restaurar."


def bad_request(message: str, *sent: object) -> HTTPException:
    """400, with `message` naming what was `sent`."""
    return HTTPException(400, message.format(*sent))


def query_timeout(budget_ms: int) -> str:
    """What a person or a program can do about a list stopped at CATALOGO_QUERY_TIMEOUT_MS."""
    budget = f"{budget_ms} ms" if budget_ms < 1000 else f"{budget_ms / 1000:g} s".replace(".", ",")
    return (
        f"Esta busca passou de {budget} e foi interrompida, para não atrasar as demais. "
        "Refine-a: palavras de 3 letras ou mais (as mais curtas não usam o índice), menos "
        "palavras ou uma faixa de preço menor."
    )


def too_many_rows() -> str:
    products = f"{SHEET_ROWS - 1:,}".replace(",", ".")  # the header takes a row
    return (
        f"Uma planilha do Excel cabe {products} produtos, e esta lista tem mais: exporte em CSV "
        "(formato=csv), que não tem limite, ou estreite a busca."
    )


def cross_site() -> HTTPException:
    return HTTPException(403, "Envios a partir de outro site não são aceitos.")


CHALLENGE = 'Bearer realm="catalogo"'


def unauthenticated(invalid: bool) -> HTTPException:
    """401: no credentials where they are needed, or a token that is not valid (RFC 6750)."""
    if invalid:
        return HTTPException(
            401,
            "O token enviado em Authorization não vale: malformado, desconhecido, expirado ou "
            "revogado. Peça um novo a quem administra o catálogo.",
            {"WWW-Authenticate": f'{CHALLENGE}, error="invalid_token"'},
        )
    return HTTPException(
        401,
        "Esta ação exige um token: envie Authorization: Bearer cat_… (catalogo tokens criar).",
        {"WWW-Authenticate": CHALLENGE},
    )


def forbidden(papel: str, needed: str) -> HTTPException:
    return HTTPException(
        403, f"Seu papel ({papel}) não permite esta ação: ela exige o papel {needed}."
    )


def forbidden_for_self() -> HTTPException:
    return HTTPException(
        403,
        "Você não pode mudar o próprio papel nem se desativar: peça a outro admin (ou use "
        "catalogo usuarios).",
    )


def session_needed() -> HTTPException:
    return HTTPException(
        403, "As páginas da conta são para quem entrou em /entrar, não para tokens de API."
    )


def not_found(detail: str) -> HTTPException:
    return HTTPException(404, detail)


def too_many_sign_ins(seconds: int) -> HTTPException:
    minutes = max(1, round(seconds / 60))
    return HTTPException(
        429,
        f"Muitas tentativas de entrada sem sucesso. Tente de novo em {minutes} "
        f"minuto{'s' if minutes > 1 else ''}.",
        {"Retry-After": str(seconds)},
    )


def sign_ins_busy() -> HTTPException:
    return HTTPException(
        503, "Muitas pessoas entrando ao mesmo tempo. Tente de novo em instantes.", RETRY_AFTER
    )


class TitledError(HTTPException):
    """An error whose page has a title of its own, where the status's own is too general."""

    def __init__(self, status_code: int, detail: str, title: str) -> None:
        super().__init__(status_code, detail)
        self.title = title


def product_not_found(id: int) -> HTTPException:
    return TitledError(
        404,
        f"Não há produto com o número {id}. Ele pode ter sido removido.",
        "Produto não encontrado",
    )


def product_removed(id: int, removal: Removal) -> HTTPException:
    por = f" por {removal.quem}" if removal.quem else ""
    return TitledError(
        404,
        f"O produto {id} foi removido em {format_moment(removal.removido_em)}{por}. Quem pode "
        "editar o catálogo pode restaurá-lo em Removidos.",
        "Produto removido",
    )


def codigo_taken(codigo: str, holder: int, removed: bool) -> str:
    """Why a product may not take a code (a field's message: 422 with the form)."""
    if not removed:
        return f"O código «{codigo}» já é do produto {holder}. Use outro código."
    return (
        f"O código «{codigo}» é do produto {holder}, que foi removido e guarda o código. "
        f"Restaure-o em Removidos (/produtos/removidos, ou POST /produtos/{holder}/restauracao) "
        "ou use outro código."
    )


def not_removed(nome: str) -> HTTPException:
    return TitledError(
        409, f"O produto «{nome}» não está removido: ele já está no catálogo.", "Nada a restaurar"
    )  # for people; programs get NOT_REMOVED with the product as it is


def not_acceptable(offered: Collection[str]) -> HTTPException:
    return HTTPException(406, f"Formatos disponíveis: {', '.join(offered)}.")


def idempotency_key_in_progress() -> HTTPException:
    return HTTPException(
        409, "Uma requisição com esta Idempotency-Key ainda está em andamento.", VARY
    )


def precondition_failed() -> HTTPException:
    return HTTPException(
        412,
        "O produto mudou desde a versão indicada em If-Match. Busque-o de novo e refaça a "
        "alteração sobre a versão atual.",
    )


def etag_never_given(sent: str) -> HTTPException:
    """412 for an If-Match that names no tag this service gives: it can match no version, and
    the client is told the format rather than that the product changed."""
    shown = sent if len(sent) <= 80 else sent[:80] + "…"
    weak = " Etiquetas fracas (W/…) nunca valem em If-Match." if "W/" in sent else ""
    return HTTPException(
        412,
        f"If-Match traz {shown}, que não é uma ETag que este serviço dá; nada foi gravado."
        f"{weak} Mande a ETag recebida ao ler o produto como veio, com as aspas: "
        '"3-json" (versão 3, em JSON).',
    )


def none_may_match() -> HTTPException:
    return HTTPException(
        412,
        "If-None-Match pede que nenhuma versão indicada seja a atual, e o produto está numa "
        "delas: nada foi gravado.",
    )


def body_too_slow() -> HTTPException:
    """408, and the connection closed (RFC 9110 §15.5.9): the rest of the body is not awaited."""
    return HTTPException(
        408,
        "O corpo da requisição chegou devagar demais e a espera acabou. Nada foi gravado; "
        "envie de novo.",
        {"Connection": "close"},
    )


def too_large(max_bytes: int) -> HTTPException:
    return HTTPException(413, f"O corpo da requisição passa do limite de {max_bytes} bytes.")


def unsupported_body() -> HTTPException:
    return HTTPException(
        415,
        "Envie os dados como JSON (application/json) ou formulário "
        "(application/x-www-form-urlencoded ou multipart/form-data).",
    )


def not_utf8_charset() -> HTTPException:
    return HTTPException(415, "Envie os dados em UTF-8.")


def schema_not_current(found: str | None, expected: str | None) -> HTTPException:
    state = f"está na versão {found}" if found else "está vazio"
    return HTTPException(
        503,
        f"O esquema do banco {state}, e o código espera a versão {expected}: "
        "rode catalogo migrate.",
        RETRY_AFTER,
    )


def idempotency_key_reused() -> HTTPException:
    """422 as a page for a browser, problem details for a program, like every other error."""
    return TitledError(
        422,
        "Esta Idempotency-Key já foi usada com outra requisição (outro corpo ou formato).",
        "Chave de idempotência já usada",
    )
