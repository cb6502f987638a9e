"""Passwords, hashed with Argon2id at OWASP's minimum cost (19 MiB, 2 passes, 1 lane): tens of
milliseconds of a core and 19 MiB each, so they are checked off the event loop, a few at once,
and a crowd of sign-ins waiting beyond that is turned away (`Busy`) rather than queued."""

import asyncio
from collections.abc import Callable
from typing import TypeVar

import argon2

from catalogo.domain.contas import new_session_secret
from catalogo.domain.errors import Unavailable

T = TypeVar("T")


class Passwords:
    """Hashes and checks passwords on threads, `concurrency` at once (each holds a core and 19
    MiB), with at most `waiting` more in line."""

    HASHER = argon2.PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)

    def __init__(self, concurrency: int = 2, waiting: int = 32) -> None:
        self._slots = asyncio.Semaphore(concurrency)
        self._limit = concurrency + waiting
        self._inside = 0
        self._decoy: str | None = None

    async def _run(self, work: Callable[[], T]) -> T:
        if self._inside >= self._limit:
            raise Busy()
        self._inside += 1
        try:
            async with self._slots:
                return await asyncio.get_running_loop().run_in_executor(None, work)
        finally:
            self._inside -= 1

    async def hash(self, senha: str) -> str:
        return await self._run(lambda: self.HASHER.hash(senha))

    async def verify(self, stored: str | None, senha: str) -> bool:
        """Whether `senha` is the one `stored` was made from. With no user of that name
        (`stored` None), a decoy is checked instead, so that the answer takes as long and no
        one learns which names exist from the clock."""
        if stored is None:
            if self._decoy is None:
                self._decoy = await self.hash(new_session_secret())
            stored = self._decoy

        def check() -> bool:
            try:
                return self.HASHER.verify(stored, senha)
            except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
                return False

        return await self._run(check) and stored is not self._decoy

    def needs_rehash(self, stored: str) -> bool:
        """Stored with other parameters than today's: hashed again at the next sign-in."""
        return self.HASHER.check_needs_rehash(stored)


class Busy(Unavailable):
    """More sign-ins are waiting for a password check than the server takes on."""

    def __init__(self) -> None:
        super().__init__("Muitas pessoas entrando ao mesmo tempo. Tente de novo em instantes.")
