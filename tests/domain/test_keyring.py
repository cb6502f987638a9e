"""Webhook secrets sealed at rest: what the database keeps opens only with a key given, a key
is rotated without a moment when a secret cannot be read, and a secret kept as it is (made
before any key) is still read. tests/services/test_webhooks.py signs real deliveries with them."""

import base64

import pytest

from catalogo.domain import webhooks
from catalogo.domain.keyring import PLAIN, Keyring, Unopenable, new_key, valid_key

OLD, NEW = new_key(), new_key()
SAMPLE = base64.urlsafe_b64encode(bytes(range(32))).decode()  # a valid key, the same everywhere


def test_without_keys_a_secret_is_kept_as_it_is() -> None:
    secret = webhooks.new_secret()
    assert Keyring().seal(secret) == secret
    assert Keyring().open(secret) == secret
    assert Keyring().resealed(secret) is None


def test_with_a_key_what_is_kept_is_not_the_secret_and_opens_only_with_that_key() -> None:
    secret = webhooks.new_secret()
    sealed = Keyring((OLD,)).seal(secret)
    assert not sealed.startswith(PLAIN) and secret.removeprefix(PLAIN) not in sealed
    assert Keyring((OLD,)).open(sealed) == secret
    for keys in [(), (NEW,)]:
        with pytest.raises(Unopenable):
            Keyring(keys).open(sealed)


def test_a_key_is_rotated_by_putting_the_new_one_first_then_sealing_again() -> None:
    secret = webhooks.new_secret()
    sealed = Keyring((OLD,)).seal(secret)
    both = Keyring((NEW, OLD))
    assert both.open(sealed) == secret  # read all along
    resealed = both.resealed(sealed)
    assert resealed is not None and both.resealed(resealed) is None  # once is enough
    assert Keyring((NEW,)).open(resealed) == secret  # the old key may go


def test_a_secret_made_before_any_key_is_read_and_sealed_by_the_first_key() -> None:
    secret = webhooks.new_secret()
    resealed = Keyring((NEW,)).resealed(secret)
    assert resealed is not None and Keyring((NEW,)).open(resealed) == secret


@pytest.mark.parametrize(
    "key",
    ["", "curta", SAMPLE[:-1], SAMPLE + "A", "ç" * 44, SAMPLE.replace("=", "!")],
    ids=["empty", "short", "a character short", "a character more", "not ASCII", "not base64"],
)
def test_a_key_that_is_not_fernets_is_not_valid(key: str) -> None:
    assert not valid_key(key)
    assert valid_key(SAMPLE) and valid_key(new_key())
