"""The public API and the package's shape: curated names, layers, no import cycle."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import langchain_episodic
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from tests.unit_tests.factories import make_episode

EXPECTED_ALL = sorted(
    [
        "ChromaEpisodeStore",
        "Episode",
        "EpisodeConflictError",
        "EpisodeFilter",
        "EpisodeSource",
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
        "StoreDamagedError",
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


def stated_layers() -> list[tuple[str, int]]:
    """``(module prefix, layer)`` as the package docstring states them, in its numbered list."""
    doc = langchain_episodic.__doc__ or ""
    items = re.findall(r"^(\d+)\. (.*?)(?=^\d+\. |^\S|\Z)", doc, re.MULTILINE | re.DOTALL)
    layers = []
    for number, text in items:
        for module in re.findall(r"`(langchain_episodic[\w.]*)`", text):
            layers.append((module, int(number)))
    return layers


LAYERS = stated_layers()


def layer_of(module: str) -> int:
    """The layer of the longest stated prefix that ``module`` falls under."""
    matches = [
        (len(prefix), layer)
        for prefix, layer in LAYERS
        if module == prefix or module.startswith(prefix + ".")
    ]
    if not matches:
        raise AssertionError(f"{module} has no layer: name it in the package docstring's list")
    return max(matches)[1]


def module_path(module: str) -> Path:
    relative = Path(*module.split(".")[1:])
    package = PACKAGE_DIR / relative / "__init__.py"
    return package if package.exists() else (PACKAGE_DIR / relative).with_suffix(".py")


def _resolve(module: str, name: str | None) -> str:
    candidate = f"{module}.{name}" if name else module
    return candidate if candidate in MODULES else module


def package_imports(module: str) -> set[str]:
    """Every package module ``module`` imports anywhere: at module level, inside
    functions, under ``TYPE_CHECKING``, and through ``import_module("...")`` with a
    literal name."""
    tree = ast.parse(module_path(module).read_text())
    package = module if module_path(module).name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            if base.startswith("langchain_episodic"):
                found.update(_resolve(base, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("langchain_episodic"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("langchain_episodic")
        ):
            found.add(str(node.args[0].value))
    found.discard(module)
    return found


def test_every_module_has_a_stated_layer() -> None:
    assert [
        m
        for m in [*MODULES, "langchain_episodic"]
        if not any(m == p or m.startswith(p + ".") for p, _ in LAYERS)
    ] == []
    # The list is ordered and every layer names at least one module.
    assert sorted({layer for _, layer in LAYERS}) == list(range(1, 13))


def test_the_layer_check_sees_imports_inside_functions_and_type_checking() -> None:
    # pipeline imports the memory only under TYPE_CHECKING; the CLI imports lazily.
    assert "langchain_episodic.memory" in package_imports("langchain_episodic.pipeline")
    assert layer_of("langchain_episodic.service.recall") == 7
    assert layer_of("langchain_episodic") == 11
    assert layer_of("langchain_episodic.cli.app") == 12


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
        "'langchain.', 'langchain_classic')))\n"
        "print(loaded)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_command_line_on_the_default_store_loads_no_retriever_nor_runnable(
    tmp_path: Path,
) -> None:
    # LangChain's retrievers, vector stores and runnables' executor cost a command
    # about half its start-up; a command on the default store uses none of them.
    code = (
        "import sys\n"
        "from langchain_episodic.cli.app import main\n"
        f"code = main(['stats', '--path', {str(tmp_path / 'memory')!r}])\n"
        "heavy = ('langchain_core.retrievers', 'langchain_core.vectorstores',\n"
        "         'langchain_episodic.stores.vectorstore')\n"
        "print(code, sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    with ChromaEpisodeStore(path=tmp_path / "memory") as store:
        EpisodicMemory(store=store).record(make_episode())
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "0 []"


def test_no_module_imports_a_layer_above_it() -> None:
    upward = [
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module in [*MODULES, "langchain_episodic"]
        for target in package_imports(module)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_there_is_no_import_cycle() -> None:
    graph = {module: package_imports(module) for module in MODULES}
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
