"""Passwords: Argon2id off the event loop, and a crowd turned away (domain/senhas.py)."""

import asyncio

import argon2

from catalogo.domain.senhas import Busy, Passwords


def test_a_password_is_checked_against_its_hash_and_an_unknown_user_costs_the_same() -> None:
    passwords = Passwords()

    async def run() -> tuple[bool, bool, bool, bool]:
        stored = await passwords.hash("uma senha longa o bastante")
        return (
            await passwords.verify(stored, "uma senha longa o bastante"),
            await passwords.verify(stored, "outra senha qualquer"),
            await passwords.verify(None, "uma senha longa o bastante"),
            await passwords.verify("not a hash", "x"),
        )

    assert asyncio.run(run()) == (True, False, False, False)


def test_parameters_weaker_than_todays_ask_for_a_new_hash() -> None:
    passwords = Passwords()
    old = argon2.PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash("x")
    assert passwords.needs_rehash(old)
    assert not passwords.needs_rehash(Passwords.HASHER.hash("x"))


def test_sign_ins_beyond_the_waiting_line_are_turned_away_not_queued() -> None:
    passwords = Passwords(concurrency=1, waiting=1)

    async def run() -> list[object]:
        checks = [passwords.hash("uma senha longa o bastante") for _ in range(4)]
        return await asyncio.gather(*checks, return_exceptions=True)

    outcomes = asyncio.run(run())
    assert sum(isinstance(o, str) for o in outcomes) == 2
    assert sum(isinstance(o, Busy) for o in outcomes) == 2
