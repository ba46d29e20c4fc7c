"""The long-term tier: the store interface, its implementations and the record codec.

This package is the only part of langchain-episodic that talks to a database.

* :class:`EpisodeStore` (:mod:`~langchain_episodic.stores.base`): the interface the
  memory depends on, and what a store may assume.
* :class:`ChromaEpisodeStore` (:mod:`~langchain_episodic.stores.chroma`): the default;
  embedded on disk, in memory, or on a Chroma server.
* :class:`InMemoryEpisodeStore` (:mod:`~langchain_episodic.stores.in_memory`): numpy
  brute force, exact, gone with the process.
* :class:`VectorStoreEpisodeStore` (:mod:`~langchain_episodic.stores.vectorstore`):
  any LangChain ``VectorStore``; what it knows of particular backends is in
  :mod:`~langchain_episodic.stores.backends`, its ledger in
  :mod:`~langchain_episodic.stores.ledger`.
* :mod:`~langchain_episodic.stores.codec`: an episode as a stored record, and back.
"""

from langchain_episodic.stores.base import DEFAULT_NAMESPACE, EpisodeStore
from langchain_episodic.stores.chroma import ChromaEpisodeStore
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore
from langchain_episodic.stores.vectorstore import VectorStoreEpisodeStore

__all__ = [
    "DEFAULT_NAMESPACE",
    "ChromaEpisodeStore",
    "EpisodeStore",
    "InMemoryEpisodeStore",
    "VectorStoreEpisodeStore",
]
