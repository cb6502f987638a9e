"""The app factory, Settings and a `catalogo` command of whichever revision is on the path, so
that the in-process benchmarks (instructions.py, writes.py, reads.py, profiling.py) measure
another revision with `PYTHONPATH=<its tree>/src`: the layered tree of issue 45 on, or the flat
package before it (catalogo.app, catalogo.settings, catalogo.cli)."""

import atexit
import os
import sys
import tempfile

try:
    from catalogo.http.app import create_app
    from catalogo.runtime.settings import Settings
except ImportError:  # a revision before the layers
    from catalogo.app import create_app  # type: ignore[import-untyped,no-redef]
    from catalogo.settings import Settings  # type: ignore[import-untyped,no-redef]

__all__ = ["CATALOGO", "Settings", "create_app"]

_COMMAND = f"""#!{sys.executable}
import sys
try:
    from catalogo.cli.main import main
except ImportError:
    from catalogo.cli import main
sys.exit(main())
"""


def _command() -> str:
    """A `catalogo` that runs the revision on the path: the venv's own script imports the
    entry point of the revision it was installed from."""
    descriptor, path = tempfile.mkstemp(prefix="catalogo-", suffix=".py")
    with os.fdopen(descriptor, "w") as script:
        script.write(_COMMAND)
    os.chmod(path, 0o700)
    atexit.register(os.unlink, path)
    return path


CATALOGO = _command()
