"""scripts/test's arguments: which suite each goes to, and a refusal for those that select no
test (tests/suites.py). pytest reads the arguments in this process; only the refusal runs a
pytest of its own, on one file, selecting nothing."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.suites import MAIN, PARALLEL, ROOT, Suite, plan


def suites(*args: str) -> list[Suite]:
    planned = plan(list(args))
    assert not isinstance(planned, int), planned
    return planned


def test_without_arguments_both_suites_run_whole_and_each_must_select_a_test() -> None:
    assert suites() == [
        Suite("main", MAIN, named=True),
        Suite("browser", [*PARALLEL, "tests/e2e"], named=True),
    ]


def test_a_path_in_each_suite_runs_each_suite_on_its_own_path() -> None:
    assert suites("tests/e2e/test_docs.py", "tests/http/test_app.py", "-x") == [
        Suite("main", [*MAIN, "-x", "tests/http/test_app.py"], named=True),
        Suite("browser", [*PARALLEL, "-x", "tests/e2e/test_docs.py"], named=True),
    ]


def test_a_path_in_one_suite_runs_that_suite_alone() -> None:
    assert [suite.name for suite in suites("tests/e2e")] == ["browser"]
    assert [suite.name for suite in suites("tests/test_ci.py::test_x", "-n", "0")] == ["main"]


@pytest.mark.parametrize(
    "options",
    [
        ["-k", "paging"],
        ["-k", "tests/e2e/test_docs.py"],
        ["-ktests/test_app.py"],
        ["--deselect", "tests/e2e/test_docs.py::test_x"],
        ["-m", "not postgresql", "-p", "no:cacheprovider"],
    ],
)
def test_an_options_value_is_never_taken_for_a_path(options: list[str]) -> None:
    """Both suites run whole, filtered by the options, and either may then select nothing."""
    assert suites(*options) == [
        Suite("main", [*MAIN, *options], named=False),
        Suite("browser", [*PARALLEL, *options, "tests/e2e"], named=False),
    ]


def test_the_whole_tests_folder_is_both_suites() -> None:
    assert suites("tests", "-x") == [
        Suite("main", [*MAIN, "-x", "tests"], named=False),
        Suite("browser", [*PARALLEL, "-x", "tests/e2e"], named=False),
    ]


def test_an_option_pytest_does_not_know_is_refused_before_anything_runs() -> None:
    assert plan(["--no-such-option"]) == pytest.ExitCode.USAGE_ERROR


def test_arguments_that_select_no_test_are_refused_in_one_line() -> None:
    """Here the main suite, given a path, selects nothing (the browser suite runs all the
    same, and selects nothing either): the last line says so of the first."""
    arguments = ["tests/e2e/test_docs.py", "tests/test_ci.py", "-k", "no_such_test", "-n", "0"]
    arguments += ["--no-cov", "-p", "no:cacheprovider"]
    ran = subprocess.run(
        [sys.executable, "-m", "tests.suites", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, ran.stdout + ran.stderr
    assert ran.stderr.splitlines()[-1] == (
        f"scripts/test: {' '.join(arguments)} selects no test in the main suite"
    )
    assert ran.stdout.count("test session starts") == 2  # each suite ran


def test_a_failure_in_the_main_suite_still_runs_the_browser_suite_and_both_are_reported(
    tmp_path: Path,
) -> None:
    """A failing test planted in the main suite, and one real browser test: both run, the run
    ends with a line for each, and its status is the failure's."""
    planted = tmp_path / "test_planted.py"
    planted.write_text("def test_planted_failure():\n    assert 1 == 2\n")
    browser = "tests/e2e/test_docs.py::test_an_index_link_opens_its_folded_operation"
    arguments = [str(planted), browser, "-n", "0", "--no-cov", "-p", "no:cacheprovider"]
    ran = subprocess.run(
        [sys.executable, "-m", "tests.suites", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == pytest.ExitCode.TESTS_FAILED, ran.stdout + ran.stderr
    summary = ran.stdout.splitlines()[-2:]
    assert summary[0].startswith("scripts/test: the main suite: 0 passed, 1 failed in ")
    assert summary[0].endswith(": FAILED (pytest exit 1)")
    assert re.fullmatch(
        r"scripts/test: the browser suite \(tests/e2e\): [1-9]\d* passed in \d+ s: passed "
        r"\(pytest exit 0\)",
        summary[1],
    ), summary[1]
