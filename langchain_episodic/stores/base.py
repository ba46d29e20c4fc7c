"""The store interface :class:`~langchain_episodic.EpisodicMemory` depends on.

A long-term tier is anything that implements :class:`EpisodeStore`: nine methods,
drawn from what the memory actually calls, nothing more. The memory embeds, validates,
checks immutability, numbers records and ranks; a store only keeps records and finds
neighbours. Three ship with the package (in :mod:`langchain_episodic.stores`):

* :class:`~langchain_episodic.stores.ChromaEpisodeStore` (the default): embedded on
  disk, in memory, or on a Chroma server.
* :class:`~langchain_episodic.stores.InMemoryEpisodeStore`: numpy brute force, exact.
* :class:`~langchain_episodic.stores.VectorStoreEpisodeStore`: any LangChain ``VectorStore``.

Records are encoded and decoded by :mod:`langchain_episodic.stores.codec`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.episode import Episode, OutcomeStatus, episode_from_stored
from langchain_episodic.errors import EpisodeConflictError, EpisodicValueError
from langchain_episodic.filters import EpisodeFilter

__all__ = [
    "DEFAULT_NAMESPACE",
    "EpisodeStore",
    "StoredHit",
    "check_batch",
    "new_episodes",
    "unit_rows",
]

DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class StoredHit:
    """A search hit before its episode is built: what ranking needs, and the record.

    Attributes:
        similarity: Cosine similarity to the query, in [-1, 1].
        timestamp: The episode's timestamp.
        reward: The episode's reward.
        outcome: The episode's outcome.
        data: The stored episode as a dict (``Episode.to_dict()`` form).
        record_id: The record's id in the store (the ``episode_id`` for the
            package's own stores).
    """

    similarity: float
    timestamp: float
    reward: float
    outcome: OutcomeStatus
    data: Mapping[str, Any]
    record_id: str = ""

    @property
    def episode_id(self) -> str:
        """The stored episode's id."""
        return str(self.data["episode_id"])

    def episode(self) -> Episode:
        """Build the stored episode (validated when it was recorded).

        Raises:
            EpisodeValidationError: The record was not written by this package and
                breaks a rule of the data model.
        """
        return episode_from_stored(self.data)


def check_batch(
    episodes: Sequence[Episode], embeddings: NDArray[np.float32] | Sequence[Sequence[float]]
) -> None:
    """Refuse a write whose episodes and vectors differ in number."""
    if len(episodes) != len(embeddings):
        msg = f"{len(episodes)} episodes but {len(embeddings)} embeddings"
        raise EpisodicValueError(msg)


def unit_rows(vectors: object, name: str) -> NDArray[np.float64]:
    """Vectors (one, or a matrix of rows) scaled to unit length; refuses unusable ones.

    Stores that compute cosine themselves, or convert a backend's L2 or inner-product
    score into it, keep and query unit vectors.
    """
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim not in (1, 2) or matrix.shape[-1] == 0:
        msg = f"{name} has shape {matrix.shape}; expected (records, dimensions)"
        raise EpisodicValueError(msg)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0.0))
    if bad.size:
        where = f"[{int(bad[0])}]" if matrix.ndim == 2 else ""
        msg = f"{name}{where} is invalid: must be a finite, non-zero vector"
        raise EpisodicValueError(msg)
    unit: NDArray[np.float64] = matrix / norms
    return unit


def new_episodes(
    namespace: str,
    episodes: Sequence[Episode],
    encoded: Sequence[str],
    stored: Mapping[str, str],
) -> list[int]:
    """Positions of the episodes to write: not stored yet, and first in the batch.

    ``stored`` maps the ids already stored to their encoded form. An identical episode
    (stored, or earlier in the batch) is skipped; a different one under a taken id
    raises :class:`EpisodeConflictError` before anything is written.
    """
    seen = dict(stored)
    new: list[int] = []
    for index, episode in enumerate(episodes):
        existing = seen.get(episode.episode_id)
        if existing is not None:
            if existing != encoded[index]:
                raise EpisodeConflictError(episode.episode_id, namespace)
            continue
        seen[episode.episode_id] = encoded[index]
        new.append(index)
    return new


@runtime_checkable
class EpisodeStore(Protocol):
    """The long-term tier's interface: what :class:`EpisodicMemory` calls, nothing more.

    Every method takes the ``namespace`` first; no method may read or count another
    namespace's records. Vectors arrive already computed, checked finite and non-zero,
    as a float32 matrix; similarities must come back as cosine similarity.

    The memory guarantees, so a store need not check: episodes passed to :meth:`add`
    are validated and their ids are new in the namespace; ``first_seq`` is the
    namespace's count before the write.
    """

    def namespaces(self) -> tuple[str, ...]:
        """Every namespace that holds at least one record, or was opened, sorted."""
        ...

    def count(self, namespace: str) -> int:
        """Number of records in ``namespace``."""
        ...

    def get(self, namespace: str, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id; missing ids are left out."""
        ...

    def add(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        embeddings: NDArray[np.float32],
        first_seq: int,
    ) -> None:
        """Write new episodes with their vectors; record ``i`` gets number ``first_seq + i``.

        A store that numbers records itself under a lock (the in-memory and vector-store
        stores do) gives the same numbers with one writer and never repeats one with
        several. When this returns, the records must be durable as far as the backend
        allows.
        """
        ...

    def search_hits(
        self,
        namespace: str,
        embedding: NDArray[np.float32],
        k: int,
        filters: EpisodeFilter | None = None,
    ) -> list[StoredHit]:
        """The ``k`` records nearest to ``embedding`` by cosine, most similar first."""
        ...

    def latest(self, namespace: str, n: int, total: int) -> list[Episode]:
        """The last ``n`` of the ``total`` records in recording order, oldest first."""
        ...

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        """Episodes in recording order from the ``start``-th on, read in pages."""
        ...

    def read_state(self, namespace: str, key: str) -> str | None:
        """A small string the memory saved for ``namespace`` under ``key``, or ``None``."""
        ...

    def write_state(self, namespace: str, key: str, value: str) -> None:
        """Save a small string for ``namespace`` under ``key``, replacing the old one."""
        ...
