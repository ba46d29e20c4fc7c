"""What every service of one namespace shares: its store, embeddings, clock and lock.

The services (`langchain_episodic.service`) each own one job; they reach the
namespace only through a `NamespaceContext`, so a job never holds another's
state, and the memory object that wires them (`EpisodicMemory`)
stays a façade.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray

from langchain_episodic._validation import describe, finite_float
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.service.locks import WritesLock
from langchain_episodic.stores.base import EpisodeStore

__all__ = ["NamespaceContext", "check_vectors"]

_QUERY_CACHE = 8


def check_vectors(vectors: Sequence[Sequence[float]], names: Sequence[str]) -> NDArray[np.float32]:
    """The vectors as one float32 matrix (Chroma's own precision), checked row by row.

    Raises:
        EpisodicValueError: Not one non-empty vector per name, of equal length, or a
            vector that is not finite or is zero (it has no cosine); the message
            names the first offending text.
    """
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError):
        matrix = np.empty((0, 0), dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(names) or matrix.shape[1] == 0:
        msg = (
            f"the embeddings model returned {len(vectors)} vectors of unusable shape for "
            f"{len(names)} texts; expected one non-empty vector of equal length per text"
        )
        raise EpisodicValueError(msg)
    finite = np.asarray(np.isfinite(matrix).all(axis=1), dtype=np.bool_)
    nonzero = np.asarray(np.abs(matrix).max(axis=1) > 0, dtype=np.bool_)
    for index in np.flatnonzero(~(finite & nonzero))[:1]:
        rule = (
            "must be a vector of finite numbers"
            if not finite[index]
            else "is the zero vector, which has no cosine similarity"
        )
        msg = f"the embedding of {names[index]} is invalid: it {rule}"
        raise EpisodicValueError(msg)
    return matrix


@dataclass
class NamespaceContext:
    """One namespace of one store, as the services see it.

    Attributes:
        store: The long-term tier.
        namespace: The namespace every call reads and writes.
        embeddings: The namespace's checked embedding model.
        clock: "Now" in seconds.
        lock: Guards what the services hold in memory (counts, the credit book, open
            runs, the window); held across a store call only where that state must
            not move meanwhile.
        writes: Its shared side is held around a write of episodes to the store and
            the checks after it, its exclusive side around an erasure, so neither meets
            the other half done; records do not wait for each other. Taken before
            ``lock``.
        turn: A condition on ``lock``: runs' outcomes are written without it and
            folded in in time order; what reads the journal waits on it for those in
            flight (`settle`).
        trace_content: Traces (`langchain_episodic.service.tracing`) may carry the
            text the memory stores, not only ids and scores.
    """

    store: EpisodeStore
    namespace: str
    embeddings: Embeddings
    clock: Callable[[], float]
    trace_content: bool = False
    lock: threading.RLock = field(default_factory=threading.RLock)
    writes: WritesLock = field(default_factory=WritesLock)
    turn: threading.Condition = field(init=False, repr=False)
    # The latest query vectors: a run's task is embedded to infer its category and
    # again to recall for it; an embedder is deterministic, so once is enough.
    _queries: OrderedDict[str, NDArray[np.float32]] = field(default_factory=OrderedDict, repr=False)
    _queries_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.turn = threading.Condition(self.lock)

    def now(self) -> float:
        """The current time in seconds.

        Raises:
            EpisodicValueError: The memory's clock returned something other than a
                finite number of seconds (the clock is named, and what it returned).
        """
        reading = self.clock()
        seconds = finite_float(reading)
        if seconds is None:
            msg = (
                f"the memory's clock returned {describe(reading)}: it must return a finite "
                "number of seconds (EpisodicMemory(clock=...))"
            )
            raise EpisodicValueError(msg)
        return seconds

    def embed_documents(self, texts: Sequence[str], names: Sequence[str]) -> NDArray[np.float32]:
        """One checked vector per text (``names`` say which text, in errors)."""
        return check_vectors(self.embeddings.embed_documents(list(texts)), names)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The checked query vector of ``text`` (the latest few are kept, read-only)."""
        with self._queries_lock:
            found = self._queries.get(text)
            if found is not None:
                self._queries.move_to_end(text)
                return found
        vector: NDArray[np.float32] = check_vectors(
            [self.embeddings.embed_query(text)], [f"query={text!r}"]
        )[0]
        vector.setflags(write=False)
        with self._queries_lock:
            self._queries[text] = vector
            while len(self._queries) > _QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector
