"""Exceptions raised by langchain-episodic.

Every error is a subclass of a built-in so callers can catch what they already know::

    ValueError
     └── EpisodicValueError          bad input: names the field and the value
          ├── EpisodeValidationError an Episode (or part of one) breaks a rule
          └── EpisodeConflictError   another episode already holds that episode_id
    RuntimeError
     └── StoreConfigurationError     an existing collection cannot hold episodes
"""

from __future__ import annotations

__all__ = [
    "EpisodeConflictError",
    "EpisodeValidationError",
    "EpisodicValueError",
    "StoreConfigurationError",
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
    """An existing Chroma collection is configured in a way episodes cannot use."""
