"""HTML pages: one Jinja2 environment, made once at start-up, escaping every template.

Starlette's template helper escapes only `.html` names and checks files for changes on each
render; this environment escapes everything, never reloads, and keeps compiled templates.

Rendering is most of a page's cost, and Jinja's `{% include %}` and `{% extends %}` each cost
a new context or a block call on every render. So pages include their shared parts
(`_topo.html`, `_rodape.html`, `produtos/_campos.html`) and the loader pastes those in when a
template is loaded: each page compiles to one flat function. An error's line number refers to
the page with its parts pasted in.

A page that is the same for every product but for the product's values (the edit page) is
rendered once per shape, with slots where the values go (`Skeleton`), and each product's page
is the skeleton filled in: the values escaped as Jinja would have, which costs a third of a
render.
"""

import functools
import hashlib
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from jinja2.filters import do_urlencode
from markupsafe import Markup, escape
from starlette.responses import HTMLResponse

from catalogo.domain.contas import device_said
from catalogo.domain.precos import format_preco
from catalogo.domain.produtos import ATRIBUTOS_HTML
from catalogo.domain.text import format_moment
from catalogo.http.fast import escaped
from catalogo.runtime import time_zone

_INCLUDE = re.compile(r'{%-? *include +"([^"]+)" *-?%}')


class _PastingLoader(PackageLoader):
    """Pastes every `{% include "name" %}` in as the source is loaded, recursively, and
    every expression in `constants` as its text: values that are the same on every render."""

    def __init__(self, constants: dict[str, str]) -> None:
        super().__init__("catalogo.http")
        self.constants = constants

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool] | None]:
        source, filename, uptodate = super().get_source(environment, template)
        pasted = _INCLUDE.sub(lambda m: self.get_source(environment, m.group(1))[0], source)
        for expression, text in self.constants.items():
            pasted = pasted.replace(expression, text)
        return pasted, filename, uptodate


class Templates:
    def __init__(self, zone: str) -> None:
        """`zone`: the shop's time zone, in whose time every page shows moments and which
        every page's footer names."""
        # Each field's input attributes (`maxlength`, `required`), rendered once from the
        # model's rules and pasted into the templates as text.
        attributes = {
            f'{{{{ atributos["{field}"] }}}}': "".join(
                f' {name}="{escape(value)}"' for name, value in attrs.items()
            )
            for field, attrs in ATRIBUTOS_HTML.items()
        }
        attributes["{{ fuso }}"] = str(escape(zone))
        self.env = Environment(
            loader=_PastingLoader(attributes),
            autoescape=True,
            auto_reload=False,
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["reais"] = format_preco
        self.env.filters["quando"] = format_moment
        self.env.filters["aparelho"] = device_said
        # Every render copies each global into its context: keep only the one pages use.
        self.env.globals.clear()
        self.env.globals["atributos"] = ATRIBUTOS_HTML
        sources = "".join(
            self.env.loader.get_source(self.env, name)[0]  # type: ignore[union-attr]
            for name in sorted(self.env.list_templates())
        )
        # Part of the edit page's ETag: a page changes when its templates do, not only its data.
        self.fingerprint = "h" + hashlib.sha256(sources.encode()).hexdigest()[:10]
        # Compiled once here: get_template takes a lock and a cache lookup on every call.
        self.templates = {
            name: self.env.get_template(name)
            for name in self.env.list_templates()
            if not name.rpartition("/")[2].startswith("_")
        }

    def render(
        self,
        template: str,
        status_code: int = 200,
        headers: dict[str, str] | None = None,
        **context: Any,
    ) -> HTMLResponse:
        return HTMLResponse(self.templates[template].render(context), status_code, headers)

    def page(self, template: str, **context: Any) -> bytes:
        """A whole page as it is sent, for Pages to keep."""
        return self.templates[template].render(context).encode()

    def skeleton(self, template: str, **context: Any) -> "Skeleton":
        """`template` rendered with `slot`s among its values, to be filled per product."""
        return Skeleton(self.templates[template].render(context))

    def fragment(self, template: str, **context: Any) -> Markup:
        """A part of a page, rendered on its own (a list's row), to be pasted in as it is."""
        return Markup(self.templates[template].render(context))  # noqa: S704 - autoescaped


# A slot is text no value can make: its name behind a secret of the process's, between two
# characters of Unicode's private use area, so that nothing a skeleton is rendered with (a
# list's query, a user's name) can put one in. A template prints it as it is, or
# percent-encoded through `urlencode`.
_OPEN, _CLOSE = "\ue000" + secrets.token_hex(8), "\ue001"
_SLOTS = re.compile(f"{_OPEN}(\\w+){_CLOSE}|{do_urlencode(_OPEN)}(\\w+){do_urlencode(_CLOSE)}")


def slot(name: str) -> str:
    """Where the value `name` goes in a Skeleton."""
    return f"{_OPEN}{name}{_CLOSE}"


class Skeleton:
    """A page rendered once with slots for the values that change from product to product.
    Filled, it is the page the template renders with those values, as long as the template
    only prints them (through `urlencode` or not): it must not test them or take them apart,
    which the shape a skeleton is kept by says instead (tests/http/pages/test_produto_pages.py
    renders the edit page both ways and compares them)."""

    def __init__(self, rendered: str) -> None:
        parts = _SLOTS.split(rendered)
        self._texts = parts[0::3]
        self._slots: list[tuple[str, bool]] = [
            (name or encoded, encoded is not None)
            for name, encoded in zip(parts[1::3], parts[2::3], strict=True)
        ]
        self._encoded = {name for name, encoded in self._slots if encoded}

    def fill(self, values: dict[str, str]) -> bytes:
        """The page with each slot's value, escaped (and percent-encoded) as Jinja does."""
        shown = {(name, False): escaped(value) for name, value in values.items()}
        encoded = {(name, True): escaped(do_urlencode(values[name])) for name in self._encoded}
        shown.update(encoded)
        texts = self._texts
        out = [texts[0]]
        for slot, text in zip(self._slots, texts[1:], strict=True):
            out += (shown[slot], text)
        return "".join(out).encode()


class Pages:
    """Whole pages as they are sent, by everything they are made from (their key, as
    runtime/kept.py's): a product's edit page is rendered once per version and kind of
    visitor, not on every read, and can never be stale, since what the key does not hold the
    page cannot show. The least
    recently shown go first once `budget` bytes are kept: a page's, its key's text and
    ENTRY_BYTES for the rest of what keeping it takes (each entry's size kept beside it)."""

    ENTRY_BYTES = 1024  # the key's tuple, numbers and strings, the dict's node: measured

    def __init__(self, budget: int) -> None:
        self._kept: OrderedDict[Hashable, tuple[bytes, int]] = OrderedDict()
        self._budget = budget
        self._size = 0

    def get(self, key: Hashable, make: Callable[[], bytes]) -> bytes:
        kept = self._kept
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
            return found[0]
        page = make()
        size = len(page) + self.ENTRY_BYTES + _text_bytes(key)
        kept[key] = (page, size)
        self._size += size
        while self._size > self._budget:
            self._size -= kept.popitem(last=False)[1][1]
        return page


def _text_bytes(key: Hashable) -> int:
    parts = key if isinstance(key, tuple) else (key,)
    return sum(len(part) for part in parts if isinstance(part, str | bytes))


def load() -> Templates:
    return _compiled(time_zone.current())


@functools.cache  # the templates ship in the package: compiled once per process, not per app
def _compiled(zone: str) -> Templates:
    return Templates(zone)
