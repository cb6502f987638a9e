"""The one bounded store of what a process keeps (runtime/kept.py)."""

from catalogo.runtime.kept import Kept


def test_a_value_is_made_once_and_then_read_back() -> None:
    kept: Kept[str, list[str]] = Kept(2)
    made: list[str] = []

    def make() -> list[str]:
        made.append("a")
        return ["a"]

    first = kept.made("a", make)
    assert kept.made("a", make) is first and made == ["a"]


def test_a_full_store_is_emptied_before_the_next_value_is_kept() -> None:
    kept: Kept[int, int] = Kept(2)
    kept.keep(1, 10)
    kept.keep(2, 20)
    assert kept.keep(3, 30) == 30
    assert dict(kept) == {3: 30}
    assert len(kept) <= kept.most
