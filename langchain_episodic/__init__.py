"""langchain-episodic: episodic memory with prioritized experience replay for LangChain.

An agent records each finished task as an `Episode`; on a new task,
`EpisodicMemory` recalls the few past episodes that matter most (similar,
recent, rewarded, successful) and `build_replay` turns them into a replay
prompt (and, when asked, a strategy) for the model. Episodes live in ChromaDB: on
disk, in memory, or on a Chroma server.

Where to start:

- ``EpisodicMemory(store=ChromaEpisodeStore(path="./agent-memory"))``: ``record``,
  ``recall``, ``build_replay(memory, task).text`` (the prompt to inject);
- ``EpisodicMemoryMiddleware(memory, record_episode=...)`` for a ``create_agent``
  agent, ``memory.as_retriever()``, ``memory.as_runnable()``,
  ``create_recall_tool(memory)``;
- ``memory.runs`` (credit from outcomes, holdout runs, lift), ``memory.lessons``,
  ``memory.quarantine``, ``memory.forgetting``;
- the ``langchain-episodic`` command looks inside a memory on disk;
- ``README.md`` and ``docs/`` (``mkdocs serve``) say the rest, with runnable examples.

For contributors: the package is layered. Each layer imports only from itself and the
layers listed before it, imports inside functions and under ``TYPE_CHECKING`` included
(the test suite reads this list and checks every import against it):

1. base: `langchain_episodic.errors`, `langchain_episodic._validation`,
   `langchain_episodic._async` (async twins), `langchain_episodic._extras` (which extra
   brings an integration), `langchain_episodic._finalizing` (what a collected object
   leaves to do, off the collector's thread)
2. model, pure data and rules: `langchain_episodic.model`
3. scoring, pure maths: `langchain_episodic.scoring`
4. prompting, pure text: `langchain_episodic.prompting`
5. embeddings: `langchain_episodic.embeddings`
6. stores, the only modules that talk to a database: `langchain_episodic.stores`
7. services, one job each over a namespace: `langchain_episodic.service`
   (``memory.runs``, ``.lessons``, ``.quarantine``, ... are services themselves)
8. the façade: `langchain_episodic.memory`, and the LangChain faces it builds on
   first use (over ``memory.replay``, never the memory's internals):
   `langchain_episodic.retriever`, `langchain_episodic.runnable` and their helpers
   `langchain_episodic._fields`, `langchain_episodic._run`
9. with a memory: `langchain_episodic.pipeline` (one recall per replay, strategy
   choices), `langchain_episodic.reflection`, `langchain_episodic.migration`
10. LangChain integrations, loaded on first use: `langchain_episodic.integrations`
11. the package: ``langchain_episodic`` itself (the curated names)
12. the command line: `langchain_episodic.cli`, `langchain_episodic.__main__`

Everything not listed in ``__all__`` is importable from its module.
"""

from __future__ import annotations

from importlib import import_module, metadata
from typing import TYPE_CHECKING, Any

from langchain_episodic._extras import EXTRA_OF, available, missing_extra

if TYPE_CHECKING:
    from langchain_episodic.embeddings import HashingEmbeddings, StaticEmbeddings
    from langchain_episodic.errors import (
        CreditError,
        EpisodeConflictError,
        EpisodicError,
        EpisodicValueError,
        StoreConfigurationError,
        StoreDamagedError,
        StoreLockedError,
    )
    from langchain_episodic.integrations.classic import EpisodicChainMemory
    from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
    from langchain_episodic.integrations.tools import create_recall_tool
    from langchain_episodic.memory import EpisodicMemory
    from langchain_episodic.migration import migrate_namespace
    from langchain_episodic.model.episode import (
        Episode,
        EpisodeSource,
        Feedback,
        OutcomeStatus,
        TaskCategory,
        TaskDescription,
    )
    from langchain_episodic.model.feedback import episode_from_tests
    from langchain_episodic.model.filters import EpisodeFilter
    from langchain_episodic.pipeline import Replay, abuild_replay, build_replay, choose_strategy
    from langchain_episodic.retriever import EpisodicRetriever
    from langchain_episodic.runnable import create_replay_runnable
    from langchain_episodic.scoring.options import RecallOptions
    from langchain_episodic.scoring.priority import ReplayWeights
    from langchain_episodic.stores import ChromaEpisodeStore

try:
    __version__ = metadata.version("langchain-episodic")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

# Every public name loads on first use: ``import langchain_episodic`` (and so the
# ``langchain-episodic`` command, whose ``--help`` imports no numpy, Chroma or LangChain)
# costs next to nothing, and the integrations that need an extra (middleware, classic)
# fail only when asked for.
_LAZY = {
    "ChromaEpisodeStore": "langchain_episodic.stores",
    "CreditError": "langchain_episodic.errors",
    "Episode": "langchain_episodic.model.episode",
    "EpisodeConflictError": "langchain_episodic.errors",
    "EpisodeFilter": "langchain_episodic.model.filters",
    "EpisodeSource": "langchain_episodic.model.episode",
    "EpisodicChainMemory": "langchain_episodic.integrations.classic",
    "EpisodicError": "langchain_episodic.errors",
    "EpisodicMemory": "langchain_episodic.memory",
    "EpisodicMemoryMiddleware": "langchain_episodic.integrations.middleware",
    "EpisodicRetriever": "langchain_episodic.retriever",
    "EpisodicValueError": "langchain_episodic.errors",
    "Feedback": "langchain_episodic.model.episode",
    "HashingEmbeddings": "langchain_episodic.embeddings",
    "OutcomeStatus": "langchain_episodic.model.episode",
    "RecallOptions": "langchain_episodic.scoring.options",
    "Replay": "langchain_episodic.pipeline",
    "ReplayWeights": "langchain_episodic.scoring.priority",
    "StaticEmbeddings": "langchain_episodic.embeddings",
    "StoreConfigurationError": "langchain_episodic.errors",
    "StoreDamagedError": "langchain_episodic.errors",
    "StoreLockedError": "langchain_episodic.errors",
    "TaskCategory": "langchain_episodic.model.episode",
    "TaskDescription": "langchain_episodic.model.episode",
    "abuild_replay": "langchain_episodic.pipeline",
    "build_replay": "langchain_episodic.pipeline",
    "choose_strategy": "langchain_episodic.pipeline",
    "create_recall_tool": "langchain_episodic.integrations.tools",
    "create_replay_runnable": "langchain_episodic.runnable",
    "episode_from_tests": "langchain_episodic.model.feedback",
    "migrate_namespace": "langchain_episodic.migration",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'langchain_episodic' has no attribute {name!r}"
        raise AttributeError(msg)
    if name in EXTRA_OF and not available(name):
        raise missing_extra(name, EXTRA_OF[name][0])
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # The public API only (not the helpers this module imports), and not the names whose
    # extra is missing: help() reads every name dir() lists.
    usable = {name for name in _LAZY if name not in EXTRA_OF or available(name)}
    return sorted(usable | {name for name in globals() if name.startswith("__")})


__all__ = [
    "ChromaEpisodeStore",
    "CreditError",
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
# What `from langchain_episodic import *` and help() read: every public name whose
# extra is installed (a core install leaves out the middleware and the classic memory,
# which raise ImportError naming their extra when asked for by name).
for _name in [name for name in EXTRA_OF if name in __all__ and not available(name)]:
    __all__.remove(_name)
