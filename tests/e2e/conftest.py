"""The browser suite: Playwright (pytest-playwright) driving Debian's Chromium against the real
`catalogo serve` on a real SQLite file, at a desktop and a phone size.

Never `playwright install`: the browser is the system's (`apt-get install chromium`; `.ci/run`
does it), and axe-core comes from the npm registry (`scripts/install` runs `npm ci` here).
Without either the suite is skipped with a message, and under CI=true that is a failure.

Every page state a test reaches goes through `look`: a screenshot under `screenshots/`
(git-ignored, kept as CI's artifact) and an axe-core run that fails on any violation. A
console error (a script that broke, a CSP refusal) or a native `window.confirm` fails the test.
"""

import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Response

from tests.databases import unavailable
from tests.processes import catalogo, start_serving, stop

HERE = Path(__file__).parent
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = HERE / "screenshots"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SEEDED = 120  # products `catalogo seed` adds before the suite starts: the list has 3 pages
_CHROMIUM = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")
_names = itertools.count(1)


def _chromium() -> str:
    for path in _CHROMIUM:
        if Path(path).exists():
            return path
    found = shutil.which("chromium")
    if found is None:
        unavailable("Chromium is not installed: apt-get install chromium, for the browser suite")
    return found


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {
        **browser_type_launch_args,
        "executable_path": _chromium(),
        "args": [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE.exists():
        unavailable("axe-core is not installed: npm ci --prefix tests/e2e (scripts/install)")
    return AXE.read_text()


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `catalogo serve` per worker, on a file with SEEDED sample products."""
    folder = tmp_path_factory.mktemp("e2e")
    database = f"sqlite:///{folder / 'catalogo.db'}"
    assert catalogo(database, "migrate").returncode == 0
    assert catalogo(database, "seed", str(SEEDED)).returncode == 0
    base, process = start_serving(database, folder / "serve.log")
    yield base
    stop(process)


@pytest.fixture(params=list(SIZES))
def size(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="session")
def base_url(served: str) -> str:
    """pytest-playwright's own (made for pytest-base-url) warns under pytest 9."""
    return served


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any], size: str) -> dict[str, Any]:
    return {**browser_context_args, "viewport": SIZES[size], "locale": "pt-BR"}


@pytest.fixture(autouse=True)
def _no_console_errors_nor_native_dialogs(page: Page) -> Iterator[None]:
    errors: list[str] = []

    def console(message: ConsoleMessage) -> None:
        # A page answered 404, 409 or 422 on purpose is logged as a failed load too; a
        # resource that failed is caught by `response` below instead.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            errors.append(message.text)

    def response(answer: Response) -> None:
        wanted = answer.request.resource_type == "document" or _tried_from_the_docs(answer)
        if answer.status >= 400 and not wanted:
            errors.append(f"{answer.status} for {answer.url}")

    def native(dialog: Dialog) -> None:
        errors.append(f"a native {dialog.type} dialog: {dialog.message}")
        dialog.dismiss()

    page.on("console", console)
    page.on("response", response)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", native)
    yield
    assert errors == []


def _tried_from_the_docs(answer: Response) -> bool:
    """/docs' Experimentar shows a 401 or a 404 on purpose, as a program would get it."""
    return answer.request.resource_type == "fetch" and answer.frame.url.endswith("/docs")


class Look:
    """Screenshots and axe-core for every page state a test reaches."""

    def __init__(self, axe: str, prefix: str) -> None:
        self.axe, self.prefix = axe, prefix

    def __call__(self, page: Page, state: str) -> None:
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"{self.prefix}-{state}.png", full_page=True)
        if not page.evaluate("() => 'axe' in window"):
            page.evaluate(self.axe)  # through the DevTools protocol: the page's CSP stays on
        violations = page.evaluate(
            """() => axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
                .map(v => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map(n => n.target)}`))"""
        )
        assert violations == [], f"axe on {state} ({page.url}):\n" + "\n".join(violations)


@pytest.fixture
def look(axe_source: str, request: pytest.FixtureRequest, size: str) -> Look:
    test = request.node.originalname.removeprefix("test_")
    return Look(axe_source, f"{test}-{size}")


def unique(name: str) -> str:
    """A product name no other test of this worker uses."""
    return f"{name} {next(_names)}"


def new_context_page(browser: Browser, context_args: dict[str, Any], **more: Any) -> Page:
    """A second person, or the same one with JavaScript off: a context of their own."""
    return browser.new_context(**context_args, **more).new_page()


def unfold(page: Page, size: str, summary: str) -> None:
    """Opens a fold of the list that a phone shows closed ("Preço e ordem", "Alterar vários");
    a wider screen shows its content always."""
    if size == "phone":
        fold = page.locator("details.dobra", has=page.locator("summary", has_text=summary))
        if fold.get_attribute("open") is None:
            page.locator("summary", has_text=summary).click()
