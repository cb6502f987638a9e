"""An edit saved over a newer version of its product, merged three ways and saved.

A person's form names the version it was opened at (v); when the product has moved on to w,
the stored version v (storage's events) is the merge's base (historia.mesclar). Without a
conflict the merge is saved against w, and merged again from v should the product move once
more before it lands; with one, nothing is saved and the person chooses, field by field (the
edit page, based on w). JSON clients never come here: they keep strict versions (409 / 412).
"""

from dataclasses import dataclass
from typing import NamedTuple

from catalogo import historia
from catalogo.historia import Autoria, Mescla
from catalogo.produtos import Produto
from catalogo.storage import Storage, VersionConflict

ATTEMPTS = 5  # merges in a row that another write overtook before the save gives up
AUTHORS_READ = 200  # the events read to name who changed the product since v


@dataclass(frozen=True)
class Merged:
    """Saved: the product, the fields taken from the others' changes, and who made them;
    `changed` is false when the merge left the product as the others saved it."""

    produto: Produto
    deles: tuple[str, ...]
    autores: list[str]
    changed: bool = True


class MergeConflict(Exception):
    """Both sides changed a field differently: `mescla` against `current`, for a choice."""

    def __init__(self, mescla: Mescla, current: Produto, autores: list[str]) -> None:
        super().__init__(f"produto {current.id}: {', '.join(mescla.conflitos)}")
        self.mescla = mescla
        self.current = current
        self.autores = autores


class Since(NamedTuple):
    """What a person's page missed: the version it was opened at (None if it is not stored),
    and who changed the product after it."""

    base: dict[str, str] | None
    autores: list[str]


async def since(storage: Storage, id: int, based_on: int) -> Since:
    found = await storage.versions(id, based_on, AUTHORS_READ)
    base = found[0].depois if found and found[0].versao == based_on else None
    return Since(base, historia.autores(e for e in found if e.versao > based_on))


async def save_merged(
    storage: Storage,
    typed: Produto,
    based_on: int,
    current: Produto,
    autoria: Autoria,
) -> Merged:
    """Raises MergeConflict (also when the product kept moving through every attempt) or
    NotFound (removed meanwhile)."""
    for _ in range(ATTEMPTS):
        assert current.id is not None and current.versao is not None  # noqa: S101 - stored
        base, autores = await since(storage, current.id, based_on)
        mescla = historia.mesclar(base, typed, current)
        if mescla.conflitos:
            raise MergeConflict(mescla, current, autores)
        try:
            saved = await storage.update(current.id, mescla.produto, {current.versao}, autoria)
        except VersionConflict as overtaken:
            current = overtaken.current
            continue
        return Merged(saved.produto, mescla.deles, autores, saved.changed)
    # Overtaken every time: the person decides, every field that differs laid out.
    raise MergeConflict(historia.mesclar(None, typed, current), current, [])
