"""A client generated from the served /openapi.json by openapi-python-client, as an integrator
makes one: it type-checks under mypy --strict, and a script that uses it alone
(tests/http/openapi_client/integrator.py) creates, pages through in two orders, searches, reads
conditionally, updates with the ETag, is refused a stale update, removes, restores, and reads
the history and the feed, on an open catalog and on one that asks writes for a token."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import add_token, add_user
from tests.processes import http_client, serving

GENERATOR = str(Path(sys.executable).with_name("openapi-python-client"))
INTEGRATOR = Path(__file__).with_name("openapi_client") / "integrator.py"
# The generator's default post-hooks run ruff over what it made, and ruff's rewrite of
# client.py is what mypy --strict then refuses, whatever the description says: none here.
CONFIG = "post_hooks: []\n"


@pytest.mark.parametrize(
    ("mode", "with_token"),
    [("off", True), ("writes", True), ("off", False)],
    ids=["off-token", "writes-token", "fresh-install"],
)
def test_a_client_generated_from_the_description_does_an_integrators_whole_job(
    database: str, tmp_path: Path, mode: str, with_token: bool
) -> None:
    """With a token, as the README's API section says (an open catalog, CATALOGO_AUTH=off,
    still checks one); on a fresh install, with no user yet, with `Accept` instead."""
    token = None
    if with_token:
        token = add_token(database, add_user(database, "erp", "editor"), "editor")
    env = {"CATALOGO_PAGE_SIZE": "2", **({"CATALOGO_AUTH": "off"} if mode == "off" else {})}
    with serving(database, tmp_path, env=env) as (base, _):
        with http_client(base, timeout=10) as client:
            document = client.get("/openapi.json").json()
        assert document["info"]["x-catalogo-auth"] == mode
        described = tmp_path / "openapi.json"
        described.write_text(json.dumps(document))
        (tmp_path / "config.yml").write_text(CONFIG)
        generate = [GENERATOR, "generate", "--path", str(described), "--meta", "none"]
        generated = subprocess.run(
            [*generate, "--output-path", "catalogo_client", "--config", "config.yml"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert generated.returncode == 0, generated.stdout + generated.stderr
        shutil.copy(INTEGRATOR, tmp_path)
        anonymous = "--always-true" if token is None else "--always-false"
        mypy = [sys.executable, "-m", "mypy", "--strict", anonymous, "ANONYMOUS"]
        typed = subprocess.run(
            [*mypy, "--cache-dir", ".mypy_cache", "catalogo_client", "integrator.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert typed.returncode == 0, typed.stdout + typed.stderr
        used = subprocess.run(
            [sys.executable, "integrator.py", base, *([token] if token else [])],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert used.returncode == 0, used.stdout + used.stderr
