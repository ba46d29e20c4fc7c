"""langchain-episodic: episodic memory with prioritized experience replay for LangChain.

An agent records each finished task as an :class:`Episode`; on a new task,
:class:`EpisodicMemory` recalls the few past episodes that matter most (similar,
recent, rewarded, successful) and :func:`build_replay` turns them into a replay
prompt (and, when asked, a strategy) for the model. Episodes live in ChromaDB: on
disk, in memory, or on a Chroma server.

The package is layered; each layer imports only the ones above it in this list:

* data model and pure logic: :mod:`~langchain_episodic.episode`,
  :mod:`~langchain_episodic.filters`, :mod:`~langchain_episodic.feedback`,
  :mod:`~langchain_episodic.scoring`, :mod:`~langchain_episodic.recall_options`,
  :mod:`~langchain_episodic.replay`, :mod:`~langchain_episodic.skills`,
  :mod:`~langchain_episodic.strategy`, :mod:`~langchain_episodic.quarantine`,
  :mod:`~langchain_episodic.credit`
* embeddings: :mod:`langchain_episodic.embeddings`
* stores, the only modules that talk to a database: :mod:`langchain_episodic.stores`
* the memory service: :mod:`~langchain_episodic.memory` (with
  :mod:`~langchain_episodic.summary` and :mod:`~langchain_episodic.credit_log`),
  :mod:`~langchain_episodic.pipeline` (one
  recall per replay), :mod:`~langchain_episodic.migration`
* LangChain integrations, loaded on first use: :mod:`langchain_episodic.integrations`
* tooling: :mod:`langchain_episodic.cli`, :mod:`langchain_episodic.simulation`

Everything not listed in ``__all__`` is importable from its module.
"""

from __future__ import annotations

from importlib import import_module, metadata
from typing import TYPE_CHECKING, Any

from langchain_episodic.embeddings import HashingEmbeddings, StaticEmbeddings
from langchain_episodic.episode import (
    Episode,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langchain_episodic.errors import (
    CreditError,
    EpisodeConflictError,
    EpisodicError,
    EpisodicValueError,
    StoreConfigurationError,
    StoreLockedError,
)
from langchain_episodic.feedback import episode_from_tests
from langchain_episodic.filters import EpisodeFilter
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.migration import migrate_namespace
from langchain_episodic.pipeline import Replay, abuild_replay, build_replay
from langchain_episodic.recall_options import RecallOptions
from langchain_episodic.scoring import ReplayWeights
from langchain_episodic.stores import ChromaEpisodeStore
from langchain_episodic.strategy import choose_strategy

if TYPE_CHECKING:
    from langchain_episodic.integrations.classic import EpisodicChainMemory
    from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
    from langchain_episodic.integrations.retriever import EpisodicRetriever
    from langchain_episodic.integrations.runnable import create_replay_runnable
    from langchain_episodic.integrations.tools import create_recall_tool

try:
    __version__ = metadata.version("langchain-episodic")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

# LangChain integrations load on first use: importing the package pulls in none of
# them, and those that need an extra (middleware, classic) fail only when asked for.
_LAZY = {
    "EpisodicChainMemory": "langchain_episodic.integrations.classic",
    "EpisodicMemoryMiddleware": "langchain_episodic.integrations.middleware",
    "EpisodicRetriever": "langchain_episodic.integrations.retriever",
    "create_recall_tool": "langchain_episodic.integrations.tools",
    "create_replay_runnable": "langchain_episodic.integrations.runnable",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'langchain_episodic' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ChromaEpisodeStore",
    "CreditError",
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
