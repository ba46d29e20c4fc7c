"""The record codec every store shares: an episode as JSON, and back.

Every store keeps the full episode as JSON (:func:`encode_episode`), so it round-trips
exactly, and reads it back through :func:`decode_hit` / :func:`decode_episode`, which
skip a malformed record (written by another tool, say) with a
:class:`~langchain_episodic.errors.MalformedRecordWarning` that names it instead of
failing the whole call.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from math import isfinite
from typing import Any

from langchain_episodic.errors import EpisodeValidationError, MalformedRecordWarning
from langchain_episodic.model.episode import Episode, OutcomeStatus, episode_from_stored
from langchain_episodic.stores.base import StoredHit

__all__ = [
    "collect_malformed",
    "decode_episode",
    "decode_hit",
    "encode_episode",
    "read_record",
]


def encode_episode(episode: Episode) -> str:
    """The episode as compact JSON, the form every store keeps."""
    return json.dumps(episode.to_dict(), ensure_ascii=False, separators=(",", ":"))


# Where the current thread or task also collects what it skips (see collect_malformed).
_collector: ContextVar[list[MalformedRecordWarning] | None] = ContextVar(
    "langchain_episodic_malformed", default=None
)


@contextmanager
def collect_malformed() -> Iterator[list[MalformedRecordWarning]]:
    """Collect the records skipped as malformed inside the block (still warning).

    Per thread and task, unlike ``warnings.catch_warnings``. The memory uses it to
    refuse writing under an id that a malformed record already holds.
    """
    found: list[MalformedRecordWarning] = []
    token = _collector.set(found)
    try:
        yield found
    finally:
        _collector.reset(token)


def _warn(record_id: str, reason: str) -> None:
    warning = MalformedRecordWarning(record_id, reason)
    collected = _collector.get()
    if collected is not None:
        collected.append(warning)
    warnings.warn(warning, stacklevel=3)


def _load(raw: object) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(raw, str):
        return None, f"no episode JSON (found {type(raw).__name__})"
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        return None, f"episode JSON does not parse ({error})"
    except RecursionError:
        return None, "episode JSON is nested too deeply"
    if not isinstance(data, dict):
        return None, f"episode JSON is a {type(data).__name__}, not an object"
    return data, ""


def read_record(record_id: str, raw: object) -> tuple[Episode | None, str]:
    """A record's episode, validated, or ``None`` and the reason it cannot be read.

    Pure (no warning): :func:`decode_episode` warns with the reason, a ``verify``
    step collects it.
    """
    data, reason = _load(raw)
    if data is None:
        return None, reason
    try:
        return episode_from_stored(data), ""
    except EpisodeValidationError as error:
        return None, str(error)


def decode_hit(record_id: str, raw: object, similarity: float) -> StoredHit | None:
    """Read a search hit from a record's episode JSON; ``None`` (and a warning) if malformed.

    Only the fields ranking needs are checked here; the full episode is validated
    when :meth:`StoredHit.episode` builds it.
    """
    data, reason = _load(raw)
    if data is None:
        _warn(record_id, reason)
        return None
    try:
        feedback = data["feedback"]
        hit = StoredHit(
            similarity=float(similarity),
            timestamp=float(data["timestamp"]),
            reward=float(feedback["reward"]),
            outcome=OutcomeStatus(data["outcome"]),
            data=data,
            record_id=record_id,
        )
        if not isinstance(data["episode_id"], str):
            raise TypeError("episode_id is not a string")
    except (KeyError, TypeError, ValueError) as error:
        _warn(record_id, f"not an episode ({type(error).__name__}: {error})")
        return None
    if not (isfinite(hit.timestamp) and isfinite(hit.reward) and isfinite(hit.similarity)):
        _warn(record_id, "timestamp, reward or similarity is not finite")
        return None
    return hit


def decode_episode(record_id: str, raw: object) -> Episode | None:
    """Read a record's episode JSON, validating it; ``None`` (and a warning) if malformed."""
    episode, reason = read_record(record_id, raw)
    if episode is None:
        _warn(record_id, reason)
    return episode
