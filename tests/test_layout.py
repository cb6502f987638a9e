"""The tree says the architecture (docs/layout.md): every module lives in its layer's folder,
each folder says its role in its docstring, no module grows past the size where it is split by
role, and the tests mirror the layers."""

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "src" / "catalogo"
LAYERS = ("domain", "services", "storage", "http", "cli", "runtime")
MOST_LINES = 400


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_lives_outside_a_layer_folder_but_the_packages_own_two() -> None:
    outside = [
        path.relative_to(PACKAGE).as_posix()
        for path in modules()
        if path.relative_to(PACKAGE).parts[0] not in LAYERS
    ]
    assert outside == ["__init__.py", "__main__.py"]


def test_every_folder_of_the_package_says_its_role() -> None:
    silent = []
    for folder in sorted({path.parent for path in modules()}):
        if folder.name in ("versions", "__pycache__"):  # Alembic's revisions: a record each
            continue
        init = folder / "__init__.py"
        if not init.exists() or not ast.get_docstring(ast.parse(init.read_text())):
            silent.append(folder.relative_to(PACKAGE).as_posix() or ".")
    assert silent == []


def test_no_module_passes_the_size_where_it_is_split_by_role() -> None:
    long = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in modules()
        if (lines := len(path.read_text().splitlines())) > MOST_LINES
    }
    assert long == {}


def test_the_tests_mirror_the_layers() -> None:
    assert {layer for layer in LAYERS if (ROOT / "tests" / layer).is_dir()} == set(LAYERS)
