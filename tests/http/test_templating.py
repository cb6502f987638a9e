"""The one Jinja2 environment and what it keeps (http/templating.py)."""

from catalogo.http import templating


class TestPages:
    def test_the_least_recently_shown_go_first_once_the_budget_is_spent(self) -> None:
        pages = templating.Pages(3 * (100 + templating.Pages.ENTRY_BYTES))
        made: list[int] = []

        def show(n: int) -> None:
            def page() -> bytes:
                made.append(n)
                return b"x" * 100

            pages.get(n, page)

        for n in (1, 2, 3, 1, 4, 1, 2):  # 1 shown again before 4 comes: 2 is the oldest
            show(n)
        assert made == [1, 2, 3, 4, 2]
