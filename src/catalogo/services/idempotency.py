"""Idempotency-Key on creation (IETF httpapi draft): a retry gets the first answer again.

The key is claimed before the product is written; the product and the key's note of it are
written in one transaction (storage), so a retry never creates twice, even across a crash.
The answer to a retry is rebuilt from that product: the retry's values are the first
request's (the fingerprint says so), and a new product is always at version 1.
"""

import contextlib
import hashlib
from collections.abc import Sequence
from typing import NamedTuple

import orjson

from catalogo.domain.contas import Principal
from catalogo.domain.errors import (
    BadRequest,
    IdempotencyKeyInProgress,
    IdempotencyKeyReused,
    KeyTaken,
    StorageUnavailable,
)
from catalogo.domain.historico import Autoria
from catalogo.domain.produtos import Produto
from catalogo.storage import Storage

TWO_IDEMPOTENCY_KEYS = "Envie uma só Idempotency-Key."
BAD_IDEMPOTENCY_KEY = "Idempotency-Key deve ter de 1 a 255 caracteres ASCII visíveis, sem espaços."


HEADER = "idempotency-key"


class Created(NamedTuple):
    """A created product, and whether this is a retry's answer (`Idempotent-Replayed`): the
    product as its first request created it."""

    produto: Produto
    replayed: bool = False


def key_of(values: Sequence[str], principal: Principal | None = None) -> str | None:
    """The Idempotency-Key of the `values` sent in its header: a structured-field string, or
    the bare token clients often send; each user's keys are their own (stored after their
    scope and a space, which no key holds), so one user can neither replay nor block
    another's."""
    if not values:
        return None
    if len(values) > 1:
        raise BadRequest(TWO_IDEMPOTENCY_KEYS)
    key = values[0].strip()
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1]
    if not 1 <= len(key) <= 255 or not all("!" <= c <= "~" and c not in '"\\' for c in key):
        raise BadRequest(BAD_IDEMPOTENCY_KEY)
    return key if principal is None else f"{principal.scope} {key}"


def fingerprint(media: str, produto: Produto) -> str:
    """The same request: the same values after validation, asking for the same format."""
    values = [media, produto.nome, produto.descricao, str(produto.preco)]
    if produto.codigo is not None:  # keys stored before codes keep their fingerprint
        values.append(produto.codigo)
    return hashlib.sha256(orjson.dumps(values)).hexdigest()


async def create_once(
    storage: Storage, key: str, media: str, produto: Produto, autoria: Autoria
) -> Created:
    """Creates `produto` once per key: the first request and every retry get the product as it
    was created (a retry, `replayed`)."""
    claim = await storage.claim_key(key, fingerprint(media, produto))
    if claim.state == "created" and claim.created is not None:
        # The first answer again: the product as created, at version 1, whatever came after.
        first = await storage.versions(claim.created, 1, 1)
        at = first[0].em if first and first[0].versao == 1 else None
        update = {"id": claim.created, "versao": 1, "criado_em": at, "atualizado_em": at}
        return Created(produto.model_copy(update=update), replayed=True)
    if claim.state == "other_request":
        raise IdempotencyKeyReused()
    if claim.state != "claimed" or claim.claimed_at is None:
        raise IdempotencyKeyInProgress()
    try:
        created = await storage.create_once(produto, key, claim.claimed_at, autoria)
    except KeyTaken:
        raise IdempotencyKeyInProgress() from None
    except Exception:
        # A retry may try again at once. A claim the database cannot release now is taken over
        # once its session has ended (storage): the failure stays this request's answer.
        with contextlib.suppress(StorageUnavailable):
            await storage.release_key(key, claim.claimed_at)
        raise
    return Created(created)
