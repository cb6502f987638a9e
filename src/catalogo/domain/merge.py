"""The three-way merge of an edit saved over a newer version of its product. No I/O.

A person's form names the version it was opened at (v); when the product has moved on to w,
the stored version v (the event that made it) is the merge's base. services.produtos.save_merged
runs it against what is saved, and again should the product move once more before the save lands.
"""

from typing import Any, NamedTuple

from catalogo.domain.historico import Fields, field_value
from catalogo.domain.produtos import CAMPOS, Produto


class Merge(NamedTuple):
    """What to save, the fields it takes from the saved product (changed only by others), and
    the fields both sides changed to different values (the person chooses)."""

    produto: Produto
    theirs: tuple[str, ...]
    conflicts: tuple[str, ...]


def merge(base: Fields | None, mine: Produto, saved: Produto) -> Merge:
    """Merges `mine` (an edit opened at `base`) with `saved` (the product as saved now, moved
    on since `base`): a field only one side changed takes that side's value; both sides'
    changes agree when equal; a field both changed to different values is a conflict, kept at
    `mine`'s value until the person chooses. Without a base (the version opened is unknown),
    every field that differs is a conflict."""
    values: dict[str, Any] = {}
    theirs: list[str] = []
    conflicts: list[str] = []
    for campo in CAMPOS:
        ours, stored = getattr(mine, campo), getattr(saved, campo)
        if ours == stored:
            values[campo] = ours
        elif base is not None and _same(campo, base.get(campo), ours):
            values[campo] = stored
            theirs.append(campo)
        elif base is not None and _same(campo, base.get(campo), stored):
            values[campo] = ours
        else:
            values[campo] = ours
            conflicts.append(campo)
    return Merge(mine.model_copy(update=values), tuple(theirs), tuple(conflicts))


def _same(campo: str, kept: str | None, value: Any) -> bool:
    return bool(field_value(campo, kept) == value)
