"""The long-term tier: the store interface, its implementations and the record codec.

This package is the only part of langchain-episodic that talks to a database.

* `EpisodeStore` (`base`): the interface the
  memory depends on, and what a store may assume; `ListsCollections`, the
  optional capability of a store that lists the other collections in its place;
  `OrderedJournal`, that of a store whose journal is read in order and by id;
  `KeyedJournal`, that of a store that reads a run's entries by key;
  `ForgetsRecords`, that of a store that deletes (every store here has it);
  `BatchesPurge`, that of a store whose purge after deletion is batched.
* `ChromaEpisodeStore` (`chroma`): the default;
  embedded on disk, in memory, or on a Chroma server.
* `InMemoryEpisodeStore` (`in_memory`): numpy
  brute force, exact, gone with the process.
* `VectorStoreEpisodeStore` (`vectorstore`):
  any LangChain ``VectorStore``; what it knows of particular backends is in
  `backends`, its ledger in
  `ledger`.
* `LangGraphEpisodeStore` (`langgraph_store`):
  any LangGraph ``BaseStore`` with a vector index; imported on first use, as it needs
  the ``langgraph`` package (the ``agents`` extra brings it).
* `codec`: an episode as a stored record, and back.
"""

import importlib
from typing import TYPE_CHECKING, Any

from langchain_episodic.stores.base import (
    DEFAULT_NAMESPACE,
    BatchesPurge,
    EpisodeStore,
    ForgetsRecords,
    KeyedJournal,
    ListsCollections,
    OrderedJournal,
)
from langchain_episodic.stores.chroma.store import ChromaEpisodeStore
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore

__all__ = [
    "DEFAULT_NAMESPACE",
    "BatchesPurge",
    "ChromaEpisodeStore",
    "EpisodeStore",
    "ForgetsRecords",
    "InMemoryEpisodeStore",
    "KeyedJournal",
    "LangGraphEpisodeStore",
    "ListsCollections",
    "OrderedJournal",
    "VectorStoreEpisodeStore",
]

if TYPE_CHECKING:
    from langchain_episodic.stores.langgraph_store import LangGraphEpisodeStore
    from langchain_episodic.stores.vectorstore import VectorStoreEpisodeStore


# Imported on use: LangGraphEpisodeStore needs langgraph, an optional dependency, and
# VectorStoreEpisodeStore LangChain's vector stores (and retrievers): ~0.5 s of imports
# a process on the default store (the command line) never uses.
_LAZY = {"LangGraphEpisodeStore": "langgraph_store", "VectorStoreEpisodeStore": "vectorstore"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
