"""Every refusal catalogo makes, as one hierarchy: a base class per kind, the words a person or
a program reads (Portuguese, the same from every door: pages, JSON, CLI) in the exception
itself. HTTP answers each kind with one status (http/problems.py's table); the CLI prints the
message.

    CatalogoError                     no status: reaching a request, it is a bug (500)
    ├── BadRequest             400    a malformed part of the request: body, Host, _method, a
    │   └── ListingError              cursor, a list's or a page's parameter, Idempotency-Key
    ├── Unauthenticated        401    no credentials where the mode asks for them, a bad token
    ├── Forbidden              403    another site's write, a role that does not allow it
    ├── NotFound               404    a product, import, batch, user, token or webhook
    ├── NotAcceptable          406    an Accept that rules out every type the path has
    ├── TooSlow                408    a body slower than CATALOGO_BODY_TIMEOUT_MS allows
    ├── Conflict               409    a version no longer current, a retry still running, an
    │                                 import or batch in another state, an undo that would
    │                                 lose later changes
    ├── Gone                   410    an import's dry run past its hour
    ├── PreconditionFailed     412    If-Match / If-None-Match
    ├── TooLarge               413    a body or a file over its bound
    ├── Unsupported            415    a body neither form nor JSON, not UTF-8
    ├── Invalid                422    fields, files, batches, a list stopped at its timeout
    ├── TooManyTries           429    failed sign-ins (`retry_after`)
    └── Unavailable            503    the database, the schema, a crowd of sign-ins

A kind's own title heads the error page (http/problems.py's TITLES); a refusal with a
title of its own (`title`) says it instead. Accounts' refusals live in domain/contas.py,
batches' in domain/lotes.py; those that carry a product or an import beside the storage that
raises them (storage/port.py) or the use case (services/): all subclass these kinds.
"""

from collections.abc import Collection

RETRY_AFTER_S = 5  # what a 503 asks a client to wait


class CatalogoError(Exception):
    """The base of every exception of catalogo. `message` is what is said; `title`, the error
    page's heading where the kind's own is too general; `retry_after`, seconds to wait."""

    title: str | None = None
    retry_after: int | None = None

    def __init__(self, message: str = "", title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title


class BadRequest(CatalogoError):
    """400: a part of the request we cannot read; the message says what to send instead."""


class Unauthenticated(CatalogoError):
    """401: no credentials where the mode asks for them, or a token that is not valid."""

    def __init__(self, invalid_token: bool) -> None:
        self.invalid_token = invalid_token
        if invalid_token:
            super().__init__(
                "O token enviado em Authorization não vale: malformado, desconhecido, expirado "
                "ou revogado. Peça um novo a quem administra o catálogo."
            )
        else:
            super().__init__(
                "Esta ação exige um token: envie Authorization: Bearer cat_… (catalogo tokens "
                "criar)."
            )


class Forbidden(CatalogoError):
    """403."""


class NotFound(CatalogoError):
    """404: nothing of that kind has that id or name (storage raises it bare: no live product
    has the id)."""


class NotAcceptable(CatalogoError):
    """406."""

    def __init__(self, offered: Collection[str]) -> None:
        super().__init__(f"Formatos disponíveis: {', '.join(offered)}.")


class TooSlow(CatalogoError):
    """408, and the connection closed: the rest of the body is not awaited."""

    def __init__(self) -> None:
        super().__init__(
            "O corpo da requisição chegou devagar demais e a espera acabou. Nada foi gravado; "
            "envie de novo."
        )


class Conflict(CatalogoError):
    """409."""


class Gone(CatalogoError):
    """410."""


class PreconditionFailed(CatalogoError):
    """412: an If-Match the product no longer matches."""

    def __init__(self, message: str = "") -> None:
        super().__init__(
            message
            or "O produto mudou desde a versão indicada em If-Match. Busque-o de novo e refaça "
            "a alteração sobre a versão atual."
        )


class TooLarge(CatalogoError):
    """413."""


class Unsupported(CatalogoError):
    """415."""


class Invalid(CatalogoError):
    """422: understood, and refused; the message (or each field's) says why."""


class TooManyTries(CatalogoError):
    """429."""


class Unavailable(CatalogoError):
    """503: not now; a client may try again in `retry_after` seconds."""

    retry_after: int | None = RETRY_AFTER_S


# 400


class ListingError(BadRequest, ValueError):
    """A list parameter we cannot read: the message says what to send instead; `field`, the
    search form's field it came from, if any."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


# 404


class ProductNotFound(NotFound):
    def __init__(self, id: int) -> None:
        super().__init__(
            f"Não há produto com o número {id}. Ele pode ter sido removido.",
            "Produto não encontrado",
        )


class ProductRemoved(NotFound):
    """A removed product, named with when (as pages show a moment) and by whom."""

    def __init__(self, id: int, removido_em: str, quem: str | None) -> None:
        por = f" por {quem}" if quem else ""
        super().__init__(
            f"O produto {id} foi removido em {removido_em}{por}. Quem pode editar o catálogo "
            "pode restaurá-lo em Removidos.",
            "Produto removido",
        )


class ImportNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__(
            "Não há importação com este número: envie o arquivo de novo em /produtos/importacoes.",
            "Importação não encontrada",
        )


# 409


class IdempotencyKeyInProgress(Conflict):
    def __init__(self) -> None:
        super().__init__("Uma requisição com esta Idempotency-Key ainda está em andamento.")


class KeyTaken(Conflict):
    """The claim on an idempotency key was taken over (it looked abandoned): nothing stored."""


class NothingToRestore(Conflict):
    """A restore of a product that is in the catalog, said to a person (programs get the
    product as it is)."""

    def __init__(self, nome: str) -> None:
        super().__init__(
            f"O produto «{nome}» não está removido: ele já está no catálogo.", "Nada a restaurar"
        )


class ChangedSince(Conflict):
    """Products changed since the batch or import being undone (`ids`): undoing it would lose
    those changes, so nothing was undone. `what` names it: "da importação", "do lote"."""

    def __init__(self, ids: list[int], what: str = "da importação") -> None:
        self.ids = ids
        one = len(ids) == 1
        super().__init__(
            f"Nada foi desfeito: {'o produto' if one else 'os produtos'} "
            f"{', '.join(map(str, ids[:50]))}{' e outros' if len(ids) > 50 else ''} "
            f"{'mudou' if one else 'mudaram'} depois {what}, e desfazer apagaria essas mudanças. "
            "Confira-os no histórico de cada um."
        )


class ImportUndone(Conflict):
    def __init__(self, undoing: bool) -> None:
        if undoing:
            super().__init__("Esta importação já foi desfeita.")
        else:
            super().__init__(
                "Esta importação já foi aplicada e desfeita: envie o arquivo de novo para "
                "aplicá-la outra vez."
            )


class ImportNotApplied(Conflict):
    def __init__(self) -> None:
        super().__init__("Esta importação não foi aplicada: não há o que desfazer.")


# 410


class ImportExpired(Gone):
    def __init__(self) -> None:
        super().__init__(
            "A prévia desta importação expirou (vale uma hora) e nada foi gravado: envie o "
            "arquivo de novo.",
            "Prévia expirada",
        )


# 413


class BodyTooLarge(TooLarge):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"O corpo da requisição passa do limite de {max_bytes} bytes.")


class ImportTooLarge(TooLarge):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(
            f"O arquivo passa do limite de uma importação ({max_bytes / 2**20:.0f} MiB, "
            f"{max_bytes} bytes): divida-o em partes."
        )


# 415


class UnsupportedBody(Unsupported):
    def __init__(self) -> None:
        super().__init__(
            "Envie os dados como JSON (application/json) ou formulário "
            "(application/x-www-form-urlencoded ou multipart/form-data)."
        )


class UnsupportedUpload(Unsupported):
    def __init__(self, field: str) -> None:
        super().__init__(
            f"Envie o arquivo num formulário (multipart/form-data, campo «{field}») ou como o "
            "corpo da requisição (text/csv, o tipo do xlsx ou application/octet-stream)."
        )


# 422


class IdempotencyKeyReused(Invalid):
    def __init__(self) -> None:
        super().__init__(
            "Esta Idempotency-Key já foi usada com outra requisição (outro corpo ou formato).",
            "Chave de idempotência já usada",
        )


class ImportRefused(Invalid, ValueError):
    """The file as a whole cannot be read as a product sheet; the message says what to do."""

    title = "Arquivo recusado"


class WorkbookTooLarge(TooLarge, ImportRefused):
    """A file that unpacks to more than an import reads."""

    title = "Arquivo grande demais"


class ImportHasErrors(Invalid):
    """An import with rows in error is never applied: the file must be fixed and sent again."""

    def __init__(self) -> None:
        super().__init__(
            "A importação tem erros: corrija o arquivo e envie de novo; nada foi gravado.",
            "Importação com erros",
        )


class ImportUnchanging(Invalid):
    """An import that would write nothing is not applied: there would be nothing to undo."""

    def __init__(self) -> None:
        super().__init__(
            "Esta importação não muda nada no catálogo: não há o que confirmar.", "Nada a gravar"
        )


class QueryTimeout(Invalid):
    """A list query ran past CATALOGO_QUERY_TIMEOUT_MS and was stopped: the client is asked to
    narrow it, and the worker goes on."""

    def __init__(self, budget_ms: int) -> None:
        self.budget_ms = budget_ms
        budget = (
            f"{budget_ms} ms" if budget_ms < 1000 else f"{budget_ms / 1000:g} s".replace(".", ",")
        )
        super().__init__(
            f"Esta busca passou de {budget} e foi interrompida, para não atrasar as demais. "
            "Refine-a: palavras de 3 letras ou mais (as mais curtas não usam o índice), menos "
            "palavras ou uma faixa de preço menor."
        )


class TooManyRows(Invalid):
    """More products than an xlsx sheet holds (`rows`, its header included)."""

    def __init__(self, rows: int) -> None:
        products = f"{rows - 1:,}".replace(",", ".")  # the header takes a row
        super().__init__(
            f"Uma planilha do Excel cabe {products} produtos, e esta lista tem mais: exporte em "
            "CSV (formato=csv), que não tem limite, ou estreite a busca."
        )


class CodigoTaken(Invalid):
    """Another product, live or removed (`removed`), already holds the code, blind to case:
    said as the field's message."""

    def __init__(self, codigo: str, holder: int, removed: bool) -> None:
        self.codigo, self.holder, self.removed = codigo, holder, removed
        if not removed:
            super().__init__(f"O código «{codigo}» já é do produto {holder}. Use outro código.")
        else:
            super().__init__(
                f"O código «{codigo}» é do produto nº {holder}, que está em Removidos e guarda o "
                "código: restaure-o em Removidos ou use outro código."
            )


# 503


class StorageUnavailable(Unavailable):
    """The database cannot answer now (locked too long, disk full, file gone); the message is
    for the log, the answer says DEFAULT_DETAILS[503]."""
