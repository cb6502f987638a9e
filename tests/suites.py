"""The two suites `scripts/test` runs, and which of its arguments goes to which.

The browser suite (tests/e2e) runs in a pytest of its own (tests/conftest.py says why). Every
option goes to both suites; a path goes to the suite it lies in, and only the suites named by a
path run, each on its own paths (no path: both, whole). pytest itself reads the arguments
first, so that an option's value (`-k paging`, `--deselect tests/e2e/...`) is never taken for
a path, and a wrong option is refused before anything runs.

Every suite runs, whatever the one before it did (a failure in the main suite used to leave
the browser suite out, saying nothing of it), and the run ends with one line per suite: what it
ran, how it ended. The status is the first failing suite's, else 0.

Arguments that select no test are refused rather than passed as green: a suite named by a path
must select a test, and so must the two suites together.

    python -m tests.suites [pytest arguments]   (scripts/test runs it after the checks)
"""

import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROWSER = ROOT / "tests" / "e2e"
PARALLEL = ["--numprocesses=auto", "--maxprocesses=4"]
# Branch coverage, subprocesses included (pyproject.toml's [tool.coverage.run]), and the 20
# slowest tests, so that one creeping up is seen.
MAIN = [
    *PARALLEL,
    "--ignore=tests/e2e",
    "--cov",
    "--cov-branch",
    "--cov-report=term",
    "--durations=20",
]
NO_TESTS = pytest.ExitCode.NO_TESTS_COLLECTED


@dataclass(frozen=True)
class Suite:
    name: str
    arguments: list[str]  # for pytest
    named: bool  # a path chose it: then it must select a test

    @property
    def called(self) -> str:
        return "the browser suite (tests/e2e)" if self.name == "browser" else "the main suite"


class _Positional:
    """A pytest plugin that keeps the arguments pytest read as paths, and stops it there."""

    paths: list[str] | None = None  # None: pytest answered by itself (--help, --version)
    given = False

    @pytest.hookimpl(tryfirst=True)
    def pytest_cmdline_main(self, config: pytest.Config) -> int:
        self.paths = list(config.args)
        self.given = config.args_source == pytest.Config.ArgsSource.ARGS
        return 0


def plan(args: list[str]) -> list[Suite] | int:
    """The suites to run for `args`, in order; or pytest's exit status if it answered itself
    (a wrong option, --help). A token that is also a path given on its own counts as that path
    (`-k x x` would lose its value: no such command means anything)."""
    if not args:  # CI's run: nothing to read
        return [Suite("main", MAIN, named=True), Suite("browser", [*PARALLEL, "tests/e2e"], True)]
    positional = _Positional()
    status = pytest.main([*args, "--no-cov"], plugins=[positional])
    if status != 0 or positional.paths is None:
        return int(status)
    paths = positional.paths if positional.given else []
    options = [arg for arg in args if arg not in paths]
    main: list[str] = []
    browser: list[str] = []
    main_named = browser_named = False
    for path in paths:
        where = (ROOT / path.split("::")[0]).resolve()
        if where == BROWSER or BROWSER in where.parents:
            browser.append(path)
            browser_named = True
        elif where in BROWSER.parents:  # `tests` or `.`: both suites, whole
            main.append(path)
            browser.append("tests/e2e")
        else:
            main.append(path)
            main_named = True
    suites = []
    if main or not paths:
        suites.append(Suite("main", [*MAIN, *options, *main], main_named))
    if browser or not paths:
        browser = list(dict.fromkeys(browser)) or ["tests/e2e"]
        suites.append(Suite("browser", [*PARALLEL, *options, *browser], browser_named))
    return suites


def refuse(message: str) -> int:
    print(f"scripts/test: {message}", file=sys.stderr)
    return int(NO_TESTS)


@dataclass(frozen=True)
class Outcome:
    suite: Suite
    status: int
    counts: dict[str, int] | None  # from pytest's JUnit report; None: it wrote none
    seconds: float

    def line(self) -> str:
        counts = self.counts or {}
        ran = ", ".join(
            f"{n} {'error' if kind == 'errors' and n == 1 else kind}"
            for kind, n in counts.items()
            if n or kind == "passed"
        )
        verdict = {0: "passed", int(NO_TESTS): "selected no test"}.get(self.status, "FAILED")
        return (
            f"scripts/test: {self.suite.called}: {ran or 'no results'} in {self.seconds:.0f} s: "
            f"{verdict} (pytest exit {self.status})"
        )


def run_suite(suite: Suite) -> Outcome:
    """One suite in a pytest of its own, and what it reported of itself."""
    pytest_ = str(Path(sys.executable).with_name("pytest"))
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.xml"
        started = time.monotonic()
        status = subprocess.call([pytest_, *suite.arguments, f"--junitxml={report}"], cwd=ROOT)
        return Outcome(suite, status, _counts(report), time.monotonic() - started)


def _counts(report: Path) -> dict[str, int] | None:
    try:
        found = ElementTree.parse(report).getroot()  # noqa: S314 - pytest's own file
    except (OSError, ElementTree.ParseError):
        return None
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in found.iter("testsuite"):
        for name in total:
            total[name] += int(suite.get(name, "0"))
    bad = total["failures"] + total["errors"] + total["skipped"]
    return {
        "passed": total["tests"] - bad,
        "failed": total["failures"],
        "errors": total["errors"],
        "skipped": total["skipped"],
    }


def run(args: list[str]) -> int:
    suites = plan(args)
    if isinstance(suites, int):
        return suites
    outcomes = [run_suite(suite) for suite in suites]
    print()
    for outcome in outcomes:
        print(outcome.line())
    for outcome in outcomes:
        if outcome.status == NO_TESTS and outcome.suite.named:
            called = outcome.suite.called
            return refuse(f"{' '.join(args) or 'no argument'} selects no test in {called}")
    failed = [o.status for o in outcomes if o.status not in (0, NO_TESTS)]
    if failed:
        return failed[0]
    if all(o.status == NO_TESTS for o in outcomes):
        return refuse(f"{' '.join(args)} selects no test in either suite")
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
