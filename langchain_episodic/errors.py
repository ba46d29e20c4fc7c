"""Exceptions raised by langchain-episodic.

Every error is a subclass of a built-in so callers can catch what they already know::

    ValueError
     └── EpisodicValueError          bad input: names the field and the value
          ├── EpisodeValidationError an Episode (or part of one) breaks a rule
          └── EpisodeConflictError   another episode already holds that episode_id
    RuntimeError
     ├── StoreConfigurationError     a store cannot hold episodes as configured
     └── StoreLockedError            another process holds the embedded store's folder
"""

from __future__ import annotations

__all__ = [
    "EpisodeConflictError",
    "EpisodeValidationError",
    "EpisodicValueError",
    "StoreConfigurationError",
    "StoreLockedError",
]


class EpisodicValueError(ValueError):
    """A value given to langchain-episodic is out of range or of the wrong shape."""


class EpisodeValidationError(EpisodicValueError):
    """An episode, task or feedback breaks one of the data model's rules."""


class EpisodeConflictError(EpisodicValueError):
    """A different episode is already stored under the same ``episode_id``.

    Episodes are immutable: recording the identical episode again is a no-op, but
    recording other content under an existing id is refused and the stored episode
    is left as it was.
    """

    def __init__(self, episode_id: str, namespace: str) -> None:
        self.episode_id = episode_id
        self.namespace = namespace
        super().__init__(
            f"episode_id={episode_id!r} already holds a different episode in "
            f"namespace={namespace!r}; episodes are immutable, record the new one "
            "under a new episode_id"
        )


class StoreConfigurationError(RuntimeError):
    """A store cannot hold episodes as configured.

    For example a Chroma collection in another distance space, a vector store without
    ``get_by_ids``, or a backend whose score cannot be read as cosine similarity.
    """


class StoreLockedError(RuntimeError):
    """Another process holds the lock on an embedded store's folder.

    Chroma's embedded mode is not safe for writers in several processes, so one
    process at a time opens a ``ChromaEpisodeStore(path=...)``; several processes
    share a Chroma server (``chroma run``) through ``chromadb.HttpClient`` instead.

    Attributes:
        path: The store's folder.
        holder: Who holds it, as ``"pid 1234"`` (``"pid unknown"`` if unreadable).
        timeout: How many seconds this process waited.
    """

    def __init__(self, path: str, holder: str, timeout: float) -> None:
        self.path = path
        self.holder = holder
        self.timeout = timeout
        waited = f" after waiting {timeout:g} s" if timeout > 0 else ""
        super().__init__(
            f"path={path!r} is locked by another process ({holder}){waited}: an embedded "
            "Chroma store takes one process at a time. Close the other process, pass "
            "lock_timeout= to wait for it, or use a Chroma server (chroma run + "
            "chromadb.HttpClient) for several processes"
        )
