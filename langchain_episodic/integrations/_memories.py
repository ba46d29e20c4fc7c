"""Which memory an agent run recalls from and records to.

The middleware's own ``memory``; its twin for the run's namespace when runs are scoped
per user; or, with ``memory=None``, a memory over the agent's own LangGraph store
(``runtime.store``), opened once per store and namespace.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_episodic.errors import StoreConfigurationError
from langchain_episodic.integrations._run_state import replay_of
from langchain_episodic.integrations._scope import (
    NamespaceScope,
    check_scope,
    resolve_namespace,
)
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.stores.base import DEFAULT_NAMESPACE
from langchain_episodic.stores.langgraph_store import LangGraphEpisodeStore

__all__ = ["RunMemories"]


class RunMemories:
    """The memory of each run: ``memory``, scoped by ``namespace``, or the agent's store.

    Args and their checks are `EpisodicMemoryMiddleware`'s
    of the same names.
    """

    def __init__(
        self,
        memory: EpisodicMemory | None,
        namespace: NamespaceScope | None,
        embeddings: Embeddings | None,
    ) -> None:
        if memory is not None and not isinstance(memory, EpisodicMemory):
            msg = f"memory={memory!r} is invalid: must be an EpisodicMemory or None"
            raise TypeError(msg)
        if memory is not None and embeddings is not None:
            msg = "embeddings= is for memory=None (the agent's own store): give one of them"
            raise TypeError(msg)
        if embeddings is not None and not isinstance(embeddings, Embeddings):
            msg = f"embeddings={embeddings!r} is invalid: must be a LangChain Embeddings"
            raise TypeError(msg)
        self.memory = memory
        self.embeddings = embeddings
        self.namespace = None if namespace is None else check_scope(namespace)
        # memory=None: one memory per agent store (runtime.store), opened on first use.
        self._store_memories: dict[tuple[int, str], tuple[object, EpisodicMemory]] = {}
        self._store_lock = threading.Lock()

    def for_run(self, runtime: object) -> EpisodicMemory:
        """The memory a run uses (see ``EpisodicMemoryMiddleware.memory_for``)."""
        # Resolved first: a run without its context field fails before anything opens.
        namespace = None if self.namespace is None else resolve_namespace(self.namespace, runtime)
        return self._on(runtime, namespace)

    def for_recording(self, state: Mapping[str, Any], runtime: object) -> EpisodicMemory:
        """The memory a finished run records to: the namespace it recalled from."""
        # Whatever the runtime says by now, the run records where it recalled.
        replay = replay_of(state)
        namespace = None if replay is None else replay.get("namespace")
        if namespace is not None and self.namespace is not None:
            return self._on(runtime, namespace)
        return self.for_run(runtime)

    def _on(self, runtime: object, namespace: str | None) -> EpisodicMemory:
        """The memory of ``namespace`` (``None``: the memory's own) for this run."""
        if self.memory is not None:
            return self.memory if namespace is None else self.memory.for_namespace(namespace)
        store = getattr(runtime, "store", None)
        if store is None:
            msg = (
                "EpisodicMemoryMiddleware(memory=None) keeps episodes in the agent's own "
                "store, and this run has none: create_agent(..., store=InMemoryStore("
                "index={'dims': ..., 'embed': ...})), or pass memory="
            )
            raise StoreConfigurationError(msg)
        # Opened on the run's namespace itself, one memory per store and namespace: no
        # other namespace (not "default") is ever written for a per-user run.
        key = (id(store), namespace or DEFAULT_NAMESPACE)
        with self._store_lock:
            found = self._store_memories.get(key)
            if found is None or found[0] is not store:
                memory = EpisodicMemory(
                    store=LangGraphEpisodeStore(store),
                    embeddings=self.embeddings,
                    namespace=key[1],
                )
                found = self._store_memories[key] = (store, memory)
            return found[1]
