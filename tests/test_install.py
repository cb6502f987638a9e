"""A newcomer's install, as the README says it, and an operator's, as deploy/install does it:
each gets exactly the versions the tests ran with, and a `catalogo` that answers."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SHIPPED = ("pyproject.toml", "README.md", "constraints.txt", "src", "deploy")


def checkout(folder: Path) -> Path:
    """What a clone holds of the project, without this one's .venv or build leftovers."""
    folder.mkdir(exist_ok=True)
    for name in SHIPPED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, folder / name)
    return folder


def pinned() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pins = [line.split("==") for line in lines if "==" in line and not line.startswith("#")]
    return {_normal(name): version for name, version in pins}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed(venv: Path) -> dict[str, str]:
    frozen = subprocess.run(
        [venv / "bin" / "pip", "freeze", "--all", "--exclude-editable"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    # The project itself, installed from its folder, reads "catalogo @ file:///…".
    versions = dict(line.replace(" @ ", "==", 1).split("==", 1) for line in frozen)
    return {_normal(name): version for name, version in versions.items()}


def assert_tested_versions(venv: Path) -> None:
    pins = pinned()
    found = installed(venv)
    found.pop("catalogo")
    for tool in ("pip", "setuptools", "wheel"):  # the venv's own, not the project's
        found.pop(tool, None)
    unpinned = {name: version for name, version in found.items() if name not in pins}
    assert not unpinned, f"installed but not in constraints.txt: {unpinned}"
    differ = {
        name: (version, pins[name]) for name, version in found.items() if pins[name] != version
    }
    assert not differ, f"installed (first) against tested (second): {differ}"


@pytest.mark.timeout(600)
def test_the_readmes_first_command_installs_the_tested_versions_and_catalogo_answers(
    tmp_path: Path,
) -> None:
    first = (ROOT / "README.md").read_text().split("```")[1].splitlines()[1]
    install, _, serve = first.rpartition(" && ")
    assert serve == ".venv/bin/catalogo serve"
    clone = checkout(tmp_path)
    subprocess.run(["bash", "-c", install], cwd=clone, check=True, capture_output=True)
    assert_tested_versions(clone / ".venv")
    # As the README goes on: the venv activated, `catalogo` is on the PATH.
    helped = subprocess.run(
        ["bash", "-c", ". .venv/bin/activate && catalogo --help"],
        cwd=clone,
        capture_output=True,
        text=True,
    )
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("uso: catalogo")
    for command in ("serve", "migrate", "backup", "copiar", "exportar", "removidos"):
        assert re.search(rf"\n    {command}\s", helped.stdout), command


@pytest.mark.timeout(600)
def test_deploy_install_lays_out_everything_the_units_and_haproxy_assume(tmp_path: Path) -> None:
    clone, staging = checkout(tmp_path / "clone"), tmp_path / "raiz"
    env = {**os.environ, "CATALOGO_ROOT": str(staging), "PYTHON": sys.executable}

    def install() -> str:
        done = subprocess.run(
            [clone / "deploy" / "install"], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    said = install()
    venv = staging / "opt" / "catalogo" / ".venv"
    assert_tested_versions(venv)
    for path in (
        "etc/catalogo/catalogo.env",
        "etc/systemd/system/catalogo@.service",
        "etc/systemd/system/catalogo-migrate.service",
        "etc/haproxy/haproxy.cfg",
    ):
        assert (staging / path).is_file(), path
    assert (staging / "etc/haproxy/certs").stat().st_mode & 0o777 == 0o700
    unit = (staging / "etc/systemd/system/catalogo@.service").read_text()
    assert "ExecStart=/opt/catalogo/.venv/bin/catalogo serve" in unit and "User=catalogo" in unit
    assert "catalogo 0.1.0" in said
    # Run again, as for a new release: the operator's settings are kept.
    (staging / "etc/catalogo/catalogo.env").write_text("CATALOGO_DATABASE_URL=postgresql://x/y\n")
    install()
    assert (staging / "etc/catalogo/catalogo.env").read_text().startswith("CATALOGO_DATABASE_URL=")
