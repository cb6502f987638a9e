"""Webhook signing secrets sealed at rest, so that a copy of the database (a backup, a dump
sent for support) gives none of them away: signing needs each secret itself, so unlike
passwords and tokens they cannot be kept as digests.

With keys (CATALOGO_WEBHOOKS_CHAVES: Fernet keys, the first seals and any of them opens, so a
key is rotated without a moment when a secret cannot be read), a secret is stored as a Fernet
token (AES-128-CBC with an HMAC-SHA256, from `cryptography`); without, as it is. A stored value
that starts with `whsec_` is a secret as it is, whatever the keys: one made before the keys
were given is read, and sealed by `catalogo webhooks cifrar` (docs/webhooks.md).
"""

import base64
import binascii
import functools
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalogo.domain.errors import CatalogoError

if TYPE_CHECKING:
    from cryptography.fernet import Fernet, MultiFernet

PLAIN = "whsec_"  # how every secret as it is starts (webhooks.new_secret)


class Unopenable(CatalogoError):
    """A sealed secret that none of the keys opens: sealed under a key no longer given."""


def new_key() -> str:
    """A new key, as Fernet writes one: 32 random bytes in URL-safe base64."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


def valid_key(key: str) -> bool:
    try:
        return len(base64.urlsafe_b64decode(key.encode("ascii"))) == 32 and len(key) == 44
    except (binascii.Error, UnicodeEncodeError):
        return False


@dataclass(frozen=True)
class Keyring:
    """Seals and opens secrets with `keys` (none: keeps them as they are). cryptography is
    imported only once a key is given: a worker without keys never loads it."""

    keys: tuple[str, ...] = ()

    @functools.cached_property
    def _fernets(self) -> "tuple[MultiFernet, Fernet]":
        from cryptography.fernet import Fernet, MultiFernet

        each = [Fernet(key) for key in self.keys]
        return MultiFernet(each), each[0]

    def seal(self, secret: str) -> str:
        """What the database keeps of `secret`."""
        if not self.keys:
            return secret
        return self._fernets[0].encrypt(secret.encode()).decode("ascii")

    def open(self, stored: str) -> str:
        """The secret a stored value keeps. Raises Unopenable."""
        if stored.startswith(PLAIN):
            return stored
        if not self.keys:
            raise Unopenable()
        from cryptography.fernet import InvalidToken

        try:
            return self._fernets[0].decrypt(stored.encode("ascii")).decode()
        except (InvalidToken, UnicodeEncodeError):
            raise Unopenable() from None

    def resealed(self, stored: str) -> str | None:
        """The stored value sealed under the first key, or None if it already is. Raises
        Unopenable."""
        if not self.keys:
            return None
        if not stored.startswith(PLAIN):
            from cryptography.fernet import InvalidToken

            try:
                self._fernets[1].decrypt(stored.encode("ascii"))
                return None
            except (InvalidToken, UnicodeEncodeError):
                pass
        return self.seal(self.open(stored))
