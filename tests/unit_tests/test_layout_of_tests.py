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


# ------------------------------------------------------------------ the mirror
# tests/unit_tests mirrors the package: the tests of langchain_episodic/<sub>/<mod>.py
# are in tests/unit_tests/<sub>/test_<mod>.py, those of a top-level module in
# tests/unit_tests/test_<mod>.py, so a maintainer finds a rule's tests by its module's
# name. A private module (_name.py) may have its tests in test_name.py. What tests a
# behaviour across modules (injection, fuzzing, damaged stores, ...) is a suite: it
# stays at tests/unit_tests/ top level, or in tests/store_suite/ and
# tests/integration_tests/.

PACKAGE = ROOT / "langchain_episodic"
UNIT = TESTS / "unit_tests"


def public_modules() -> list[Path]:
    """Every public module of the package, relative to it (``__init__`` files excluded)."""
    return sorted(
        path.relative_to(PACKAGE)
        for path in PACKAGE.rglob("*.py")
        if not path.name.startswith("_")
        and not any(part.startswith("_") for part in path.relative_to(PACKAGE).parts[:-1])
    )


def mirrored_test(module: Path) -> Path:
    return UNIT / module.parent / f"test_{module.name}"


def test_every_public_module_has_a_mirrored_test_file() -> None:
    missing = [
        f"langchain_episodic/{module} has no {mirrored_test(module).relative_to(ROOT)}"
        for module in public_modules()
        if not mirrored_test(module).is_file()
    ]
    assert missing == [], "write (or move) its tests there:\n" + "\n".join(missing)


def test_every_test_file_in_a_subpackage_folder_is_named_for_one_of_its_modules() -> None:
    strays = []
    for folder in sorted(p for p in UNIT.iterdir() if p.is_dir() and p.name != "__pycache__"):
        package = PACKAGE / folder.name
        if not (package / "__init__.py").is_file():
            strays.append(f"{folder.relative_to(ROOT)}/ mirrors no package of langchain_episodic")
            continue
        for test in sorted(folder.glob("test_*.py")):
            name = test.name.removeprefix("test_")
            if not ((package / name).is_file() or (package / f"_{name}").is_file()):
                strays.append(f"{test.relative_to(ROOT)} is named for no module of {package.name}/")
    assert strays == [], "rename or move them:\n" + "\n".join(strays)


def test_the_mirror_check_finds_modules_of_every_depth() -> None:
    modules = {str(module) for module in public_modules()}
    assert {"memory.py", "scoring/priority.py", "stores/codec.py"} <= modules
    assert not {m for m in modules if m.endswith("__init__.py") or "/_" in m or m[0] == "_"}
    assert mirrored_test(Path("scoring/priority.py")) == UNIT / "scoring" / "test_priority.py"
    assert mirrored_test(Path("memory.py")) == UNIT / "test_memory.py"
