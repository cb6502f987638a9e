"""What imports and batches refuse (their uploads, previews, confirmations and undoing), in
the words and statuses http/errors.py gives every other refusal; apart from it as their own role:
whole-file and many-product work, which only http/resources/importacoes.py, http/resources/lotes.py
and the upload's reading (http/bodies.py, http/middleware/guard.py) raise."""

from starlette.exceptions import HTTPException

from catalogo.http.errors import TitledError


def import_not_found() -> HTTPException:
    return TitledError(
        404,
        "Não há importação com este número: envie o arquivo de novo em /produtos/importacoes.",
        "Importação não encontrada",
    )


def import_refused(detail: str, status: int = 422) -> HTTPException:
    """422: the file cannot be read as a product sheet; 413: it unpacks to more than an
    import reads."""
    return TitledError(
        status, detail, "Arquivo grande demais" if status == 413 else "Arquivo recusado"
    )


def import_has_errors() -> HTTPException:
    return TitledError(
        422,
        "A importação tem erros: corrija o arquivo e envie de novo; nada foi gravado.",
        "Importação com erros",
    )


def import_unchanging() -> HTTPException:
    return TitledError(
        422, "Esta importação não muda nada no catálogo: não há o que confirmar.", "Nada a gravar"
    )


def import_expired() -> HTTPException:
    return TitledError(
        410,
        "A prévia desta importação expirou (vale uma hora) e nada foi gravado: envie o arquivo "
        "de novo.",
        "Prévia expirada",
    )


def import_undone(undoing: bool) -> HTTPException:
    if undoing:
        return HTTPException(409, "Esta importação já foi desfeita.")
    return HTTPException(
        409,
        "Esta importação já foi aplicada e desfeita: envie o arquivo de novo para aplicá-la "
        "outra vez.",
    )


def import_not_applied() -> HTTPException:
    return HTTPException(409, "Esta importação não foi aplicada: não há o que desfazer.")


IMPORT_MOVED = (
    "Produtos desta importação mudaram desde a prévia, e nada foi gravado. O relatório foi "
    "refeito agora: confira e confirme de novo."
)


def moved_since(ids: list[int], what: str = "da importação") -> str:
    """Why undoing an import (or a batch: `what` "do lote") undid nothing."""
    one = len(ids) == 1
    return (
        f"Nada foi desfeito: {'o produto' if one else 'os produtos'} "
        f"{', '.join(map(str, ids[:50]))}{' e outros' if len(ids) > 50 else ''} "
        f"{'mudou' if one else 'mudaram'} depois {what}, e desfazer apagaria essas mudanças. "
        "Confira-os no histórico de cada um."
    )


def batch_refused(detail: str) -> HTTPException:
    return TitledError(422, detail, "Lote recusado")


def batch_not_found() -> HTTPException:
    return TitledError(404, "Não há lote com este número.", "Lote não encontrado")


def batch_undone() -> HTTPException:
    return HTTPException(409, "Este lote já foi desfeito.")


def batch_conflict(detail: str) -> HTTPException:
    return HTTPException(409, detail)


def batch_moved(ids: list[int]) -> str:
    """Why a batch's confirmation wrote nothing."""
    named = f" ({', '.join(map(str, ids[:20]))})" if ids else ""
    return (
        f"Produtos do lote mudaram ou foram removidos desde a confirmação{named}, e nada foi "
        "gravado. Esta é a confirmação refeita agora: confira e confirme de novo."
    )


def unsupported_upload(field: str) -> HTTPException:
    return HTTPException(
        415,
        f"Envie o arquivo num formulário (multipart/form-data, campo «{field}») ou como o "
        "corpo da requisição (text/csv, o tipo do xlsx ou application/octet-stream).",
    )


def import_too_large(max_bytes: int) -> HTTPException:
    return HTTPException(
        413,
        f"O arquivo passa do limite de uma importação ({max_bytes / 2**20:.0f} MiB, "
        f"{max_bytes} bytes): divida-o em partes.",
    )
