"""What a process keeps to avoid making it again: one bounded store for every such cache."""

from collections.abc import Callable, Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Kept(dict[K, V]):
    """Values by everything they were made from (their key), so that one kept can never be
    stale: what the key does not hold, the value cannot show. Bounded by count, and emptied
    when full rather than ordered by use: what is still in use is made again at once, and a
    read costs only the dict's own lookup."""

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most

    def keep(self, key: K, value: V) -> V:
        if len(self) >= self.most:
            self.clear()
        self[key] = value
        return value

    def made(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for `key`, or `make()`'s, kept."""
        found = self.get(key)
        return self.keep(key, make()) if found is None else found
