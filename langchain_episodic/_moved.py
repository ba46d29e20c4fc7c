"""Module paths of 0.1 that moved in the layered layout, served for one release.

``import langchain_episodic.episode`` (or ``from langchain_episodic.lessons import
Lesson``) still works and warns with a :class:`DeprecationWarning` naming the new home.
:data:`MOVED` is the move table (the changelog prints the same one); nothing in the
package imports an old path.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Sequence
from importlib import import_module
from typing import Any

__all__ = ["MOVED", "install"]

MOVED: dict[str, tuple[str, ...]] = {
    "langchain_episodic.episode": ("langchain_episodic.model.episode",),
    "langchain_episodic.filters": ("langchain_episodic.model.filters",),
    "langchain_episodic.feedback": ("langchain_episodic.model.feedback",),
    "langchain_episodic.lessons": (
        "langchain_episodic.model.lesson",
        "langchain_episodic.prompting.lessons",
    ),
    "langchain_episodic.quarantine": (
        "langchain_episodic.model.quarantine",
        "langchain_episodic.service.quarantine",
    ),
    "langchain_episodic.relevance": ("langchain_episodic.scoring.relevance",),
    "langchain_episodic.ranking": ("langchain_episodic.scoring.ranking",),
    "langchain_episodic.recall_options": ("langchain_episodic.scoring.options",),
    "langchain_episodic.credit": ("langchain_episodic.scoring.credit",),
    "langchain_episodic.strategy": (
        "langchain_episodic.scoring.strategy",
        "langchain_episodic.pipeline",
    ),
    "langchain_episodic.skills": ("langchain_episodic.scoring.skills",),
    "langchain_episodic.replay": (
        "langchain_episodic.prompting.episodes",
        "langchain_episodic.prompting.sanitize",
    ),
    "langchain_episodic.summary": ("langchain_episodic.service.summary",),
    "langchain_episodic.credit_log": ("langchain_episodic.service.credit_log",),
    "langchain_episodic.lesson_log": ("langchain_episodic.service.lesson_log",),
}
"""Old module path -> the modules its public names live in now (first match wins)."""


class _MovedModule(types.ModuleType):
    """An old module path: each name is looked up in its new homes on first use."""

    def __init__(self, name: str, homes: Sequence[str]) -> None:
        super().__init__(name, f"Moved: import from {', '.join(homes)}.")
        self._homes = tuple(homes)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__"):
            for home in self._homes:
                module = import_module(home)
                if name in getattr(module, "__all__", ()) or hasattr(module, name):
                    return getattr(module, name)
        msg = f"module {self.__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for home in self._homes:
            names.update(getattr(import_module(home), "__all__", ()))
        return sorted(names)


def _caller_stacklevel() -> int:
    """How far up the first frame outside the import machinery and this module is."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen") or frame.f_code.co_filename == __file__
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _MovedModule(spec.name, MOVED[spec.name])

    def exec_module(self, module: types.ModuleType) -> None:
        homes = " and ".join(MOVED[module.__name__])
        warnings.warn(
            f"{module.__name__} moved to {homes}; the old path goes in the next release",
            DeprecationWarning,
            stacklevel=_caller_stacklevel(),
        )


def install() -> None:
    """Serve the old paths (idempotent); the package's ``__init__`` calls it."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
