"""CI runs every test the issues ask for: PostgreSQL, HAProxy and the browser suite are never
skipped there, they fail when missing."""

from pathlib import Path

import pytest

from tests import conftest, databases

ROOT = Path(__file__).parent.parent


def test_ci_runs_the_readmes_test_command_strictly() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "CATALOGO_TEST_STRICT=1 scripts/test" in ci
    commands = (ROOT / "README.md").read_text().split("```")[1].splitlines()
    assert commands[-1] == "scripts/test"  # the README's second set-up command


def test_under_ci_something_missing_fails_the_test_instead_of_skipping_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(databases, "STRICT", True)
    with pytest.raises(pytest.fail.Exception, match="nothing may be skipped"):
        databases.unavailable("PostgreSQL is not reachable")


def test_on_a_laptop_without_it_the_test_is_skipped_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(databases, "STRICT", False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install haproxy"):
        databases.unavailable("HAProxy is not installed: apt-get install haproxy")


def test_under_ci_any_skip_whatever_its_source_is_reported_as_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A `pytest.skip`, a skip marker or an xfail added later fails CI too: the conftest hook
    turns every skipped report into a failure, not only `unavailable`'s."""
    for strict, outcome in ((True, "failed"), (False, "skipped")):
        monkeypatch.setattr(conftest, "STRICT", strict)
        report = pytest.TestReport("t.py::t", ("t.py", 1, "t"), {}, "skipped", None, "call")
        wrapper = conftest.pytest_runtest_makereport(
            None,  # type: ignore[arg-type]
            None,  # type: ignore[arg-type]
        )
        next(wrapper)
        with pytest.raises(StopIteration) as done:
            wrapper.send(report)
        assert done.value.value.outcome == outcome


def test_under_ci_a_marker_expression_that_could_drop_postgresql_is_refused(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    monkeypatch.setattr(pytestconfig.option, "markexpr", "not postgresql")
    for strict in (True, False):
        monkeypatch.setattr(conftest, "STRICT", strict)
        items: list[pytest.Item] = []
        if strict:
            with pytest.raises(pytest.UsageError, match="nothing may be left out by marker"):
                conftest.pytest_collection_modifyitems(pytestconfig, items)
        else:
            conftest.pytest_collection_modifyitems(pytestconfig, items)


def test_no_test_can_hold_ci_up_for_long(pytestconfig: pytest.Config) -> None:
    """pytest-timeout fails a test that runs past the limit, a hung poll or a lost answer."""
    assert 0 < float(pytestconfig.getini("timeout")) <= 600
