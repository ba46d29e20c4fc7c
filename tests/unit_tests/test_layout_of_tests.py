"""Test modules never import from one another, nor from a conftest.

What several modules share lives in a plain helper module (tests/helpers/, or
tests/unit_tests/factories.py and fuzzing.py); fixtures live in conftest.py files and
reach tests by name, not by import. Importing a test module runs (and, for pytest,
re-collects) its tests' module, and ties one file's tests to another's private
details. Code run in subprocesses (source held in strings) obeys the same rule.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
# "from tests.x import y" or "import tests.x" inside source held in a string.
EMBEDDED_IMPORT = re.compile(r"^\s*(?:from|import)\s+(tests(?:\.\w+)+)", re.MULTILINE)


def is_test_module(module: str) -> bool:
    """A ``tests.`` module that is a test module or a conftest (as a file or a package)."""
    parts = module.split(".")
    if parts[0] != "tests":
        return False
    return any(part.startswith("test_") or part == "conftest" for part in parts[1:])


def is_module_file(module: str) -> bool:
    """``module`` names a file or package of this repository (not a name inside one)."""
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(source: str, path: Path) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for every module that ``source`` (the file ``path``) imports."""
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield node.lineno, module
            for alias in node.names:  # from tests.unit_tests import test_memory
                if is_module_file(f"{module}.{alias.name}"):
                    yield node.lineno, f"{module}.{alias.name}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in EMBEDDED_IMPORT.finditer(node.value):
                yield node.lineno + node.value.count("\n", 0, match.start()), match.group(1)


def offences(source: str, path: Path) -> list[str]:
    where = path.relative_to(ROOT)
    return [
        f"{where}:{line} imports {module}"
        for line, module in imported_modules(source, path)
        if is_test_module(module)
    ]


def test_no_module_under_tests_imports_a_test_module_or_a_conftest() -> None:
    found = [
        offence
        for path in sorted(TESTS.rglob("*.py"))
        if path != Path(__file__).resolve()  # its examples below are offences on purpose
        for offence in offences(path.read_text(encoding="utf-8"), path)
    ]
    assert found == [], "move what they import into tests/helpers/:\n" + "\n".join(found)


def test_the_check_sees_every_form_of_such_an_import() -> None:
    path = TESTS / "unit_tests" / "test_example.py"
    source = "\n".join(
        [
            "import tests.unit_tests.test_memory",
            "from tests.unit_tests.test_memory import corpus",
            "from tests.unit_tests import test_memory",
            "from .test_memory import corpus",
            "from . import test_memory",
            "from ..store_suite.conftest import harness",
            "CODE = '''\n    from tests.unit_tests.test_cli import run\n'''",
            "from tests.helpers.episodes import corpus",
            "from tests.unit_tests.factories import make_episode",
            "from langchain_tests.unit_tests import EmbeddingsUnitTests",
        ]
    )
    assert [offence.split(" imports ")[1] for offence in offences(source, path)] == [
        "tests.unit_tests.test_memory",
        "tests.unit_tests.test_memory",
        "tests.unit_tests.test_memory",
        "tests.unit_tests.test_memory",
        "tests.unit_tests.test_memory",
        "tests.store_suite.conftest",
        "tests.unit_tests.test_cli",
    ]
