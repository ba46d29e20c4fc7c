"""The public API and the package's shape: curated names, layers, no import cycle."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import langchain_episodic

EXPECTED_ALL = sorted(
    [
        "ChromaEpisodeStore",
        "Episode",
        "EpisodeConflictError",
        "EpisodeFilter",
        "EpisodicChainMemory",
        "EpisodicError",
        "EpisodicMemory",
        "EpisodicMemoryMiddleware",
        "EpisodicRetriever",
        "EpisodicValueError",
        "Feedback",
        "HashingEmbeddings",
        "OutcomeStatus",
        "RecallOptions",
        "Replay",
        "ReplayWeights",
        "StaticEmbeddings",
        "StoreConfigurationError",
        "StoreLockedError",
        "CreditError",
        "TaskCategory",
        "TaskDescription",
        "__version__",
        "abuild_replay",
        "build_replay",
        "choose_strategy",
        "create_recall_tool",
        "create_replay_runnable",
        "episode_from_tests",
        "migrate_namespace",
    ]
)

PACKAGE_DIR = Path(langchain_episodic.__file__).parent
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages([str(PACKAGE_DIR)], prefix="langchain_episodic.")
    if info.name != "langchain_episodic.__main__"
)

# Each module's layer; a module imports (at module level) only from its own layer or
# the ones below. The first prefix that matches decides.
LAYERS = [
    ("langchain_episodic._validation", 0),
    ("langchain_episodic.errors", 0),
    ("langchain_episodic.episode", 1),
    ("langchain_episodic.filters", 1),
    ("langchain_episodic.feedback", 1),
    ("langchain_episodic.scoring", 1),
    ("langchain_episodic.relevance", 1),
    ("langchain_episodic.recall_options", 1),
    ("langchain_episodic.ranking", 1),
    ("langchain_episodic.replay", 1),
    ("langchain_episodic.skills", 1),
    ("langchain_episodic.strategy", 1),
    ("langchain_episodic.credit", 1),
    ("langchain_episodic.lessons", 1),
    ("langchain_episodic.embeddings", 2),
    ("langchain_episodic.stores", 3),
    ("langchain_episodic.quarantine", 4),
    ("langchain_episodic.summary", 4),
    ("langchain_episodic.credit_log", 4),
    ("langchain_episodic.lesson_log", 4),
    ("langchain_episodic.reflection", 6),
    ("langchain_episodic.memory", 5),
    ("langchain_episodic.pipeline", 6),
    ("langchain_episodic.migration", 6),
    ("langchain_episodic.integrations", 7),
    ("langchain_episodic.simulation", 8),
    ("langchain_episodic.cli", 9),
    ("langchain_episodic", 8),  # the package's __init__: re-exports, for tooling and users
]


def layer_of(module: str) -> int:
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    raise AssertionError(f"{module} has no layer: add it to LAYERS")


def module_path(module: str) -> Path:
    relative = Path(*module.split(".")[1:])
    package = PACKAGE_DIR / relative / "__init__.py"
    return package if package.exists() else (PACKAGE_DIR / relative).with_suffix(".py")


def module_level_imports(module: str) -> set[str]:
    """Package modules ``module`` imports when it is imported (not under TYPE_CHECKING)."""
    tree = ast.parse(module_path(module).read_text())
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.startswith("langchain_episodic"):
                    for alias in node.names:
                        candidate = f"{node.module}.{alias.name}"
                        found.add(candidate if candidate in MODULES else node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("langchain_episodic"))
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    found.discard(module)
    return found


def test_all_is_exactly_the_expected_names() -> None:
    assert sorted(langchain_episodic.__all__) == EXPECTED_ALL
    assert len(set(langchain_episodic.__all__)) == len(langchain_episodic.__all__)


@pytest.mark.parametrize("name", EXPECTED_ALL)
def test_every_public_name_is_importable(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from langchain_episodic import {name}", namespace)
    assert namespace[name] is getattr(langchain_episodic, name)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from langchain_episodic import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == EXPECTED_ALL


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'select_strategy'"):
        _ = langchain_episodic.select_strategy  # type: ignore[attr-defined]


@pytest.mark.parametrize("module_name", MODULES)
def test_every_module_imports_and_its_all_names_exist(module_name: str) -> None:
    module = importlib.import_module(module_name)
    for name in getattr(module, "__all__", ()):
        assert hasattr(module, name), f"{module_name}.__all__ lists missing {name!r}"
        if name in langchain_episodic.__all__:
            assert getattr(langchain_episodic, name) is getattr(module, name)


def test_importing_the_package_loads_no_integration() -> None:
    code = (
        "import sys, langchain_episodic\n"
        "loaded = sorted(m for m in sys.modules if m.startswith("
        "('langchain_episodic.integrations', 'langchain_episodic.cli', "
        "'langchain_episodic.simulation', 'langchain.', 'langchain_classic')))\n"
        "print(loaded)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_no_module_imports_a_layer_above_it() -> None:
    upward = [
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module in [*MODULES, "langchain_episodic"]
        for target in module_level_imports(module)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_there_is_no_import_cycle() -> None:
    graph = {module: module_level_imports(module) for module in MODULES}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[str]] = []

    def walk(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                walk(target, [*path, target])
        state[module] = 2

    for module in MODULES:
        if module not in state:
            walk(module, [module])
    assert cycles == []


def test_version_matches_the_installed_distribution() -> None:
    assert langchain_episodic.__version__ == importlib.metadata.version("langchain-episodic")


def test_every_error_has_one_root_and_keeps_its_builtin() -> None:
    from langchain_episodic import errors  # noqa: PLC0415

    classes = [getattr(errors, name) for name in errors.__all__]
    assert all(issubclass(cls, errors.EpisodicError) for cls in classes)
    assert issubclass(errors.EpisodicValueError, ValueError)
    assert issubclass(errors.EpisodeValidationError, ValueError)
    assert issubclass(errors.EpisodeConflictError, ValueError)
    assert issubclass(errors.StoreConfigurationError, RuntimeError)
    assert issubclass(errors.StoreLockedError, RuntimeError)
    assert issubclass(errors.MigrationError, RuntimeError)
    assert issubclass(errors.MalformedRecordWarning, UserWarning)
    # Every exception class the library raises lives in errors.py (the CLI's own
    # exceptions never leave it: it turns them into an exit code and one line).
    defined_elsewhere = [
        f"{module}.{node.name}"
        for module in MODULES
        if module != "langchain_episodic.errors" and not module.startswith("langchain_episodic.cli")
        for node in ast.walk(ast.parse(module_path(module).read_text()))
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(base, ast.Name) and base.id.endswith(("Error", "Warning", "Exception"))
            for base in node.bases
        )
    ]
    assert defined_elsewhere == []
