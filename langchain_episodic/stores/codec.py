"""The record codec every store shares: an episode as JSON, and back.

Every store keeps the full episode as JSON (`encode_episode`), so it round-trips
exactly, and reads records back through `decode_hits` / `decode_episodes`
(one record: `decode_hit` / `decode_episode`), which skip a malformed
record (written by another tool, say) with a
`MalformedRecordWarning` that names it instead of
failing the whole call. Those two loops are the only ones: a store says how to read
its backend's rows, never how to skip them.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from math import isfinite
from typing import Any

import orjson

from langchain_episodic.errors import EpisodeValidationError, MalformedRecordWarning
from langchain_episodic.model.episode import Episode, OutcomeStatus, episode_from_stored
from langchain_episodic.stores.base import StoredHit

__all__ = [
    "collect_malformed",
    "decode_episode",
    "decode_episodes",
    "decode_hit",
    "decode_hits",
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
    # Points at the store that read the record: above _warn are _decode_hit (or
    # _decode_episode), then decode_hit or the decode_hits generator, then the store.
    warnings.warn(warning, stacklevel=4)


def _load(raw: object) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(raw, str):
        return None, f"no episode JSON (found {type(raw).__name__})"
    try:
        # orjson (chromadb's own dependency) reads a recall's candidates several times
        # faster; what it refuses (NaN, huge integers, deep nesting) the standard
        # parser reads or refuses as before, so the result is the same.
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    try:
        data = json.loads(raw) if data is None else data
    except json.JSONDecodeError as error:
        return None, f"episode JSON does not parse ({error})"
    except RecursionError:
        return None, "episode JSON is nested too deeply"
    if not isinstance(data, dict):
        return None, f"episode JSON is a {type(data).__name__}, not an object"
    return data, ""


def read_record(record_id: str, raw: object) -> tuple[Episode | None, str]:
    """A record's episode, validated, or ``None`` and the reason it cannot be read.

    Pure (no warning): `decode_episode` warns with the reason, a ``verify``
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
    when `StoredHit.episode` builds it.
    """
    return _decode_hit(record_id, raw, similarity)


def _decode_hit(record_id: str, raw: object, similarity: float) -> StoredHit | None:
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
    return _decode_episode(record_id, raw)


def _decode_episode(record_id: str, raw: object) -> Episode | None:
    episode, reason = read_record(record_id, raw)
    if episode is None:
        _warn(record_id, reason)
    return episode


def decode_hits(rows: Iterable[tuple[str, object, float]]) -> Iterator[StoredHit]:
    """The search hits of backend rows, in their order, skipping the malformed ones.

    Lazy, so that each row is read (and a malformed one warned about) only when the
    caller gets that far, and the warnings come in the rows' order.

    Args:
        rows: ``(record_id, raw, similarity)`` per record: its id in the store, its
            stored episode JSON (any object; what is not a string is malformed) and
            its cosine similarity to the query.

    Yields:
        A `StoredHit` per readable row. Each other row is skipped with a
        `MalformedRecordWarning` naming its id (also
        collected by `collect_malformed`), as `decode_hit` does.
    """
    for record_id, raw, similarity in rows:
        hit = _decode_hit(record_id, raw, similarity)
        if hit is not None:
            yield hit


def decode_episodes(rows: Iterable[tuple[str, object]]) -> Iterator[tuple[str, Episode]]:
    """The episodes of backend rows, validated, in their order, skipping the malformed ones.

    Lazy, as `decode_hits`.

    Args:
        rows: ``(record_id, raw)`` per record: its id in the store and its stored
            episode JSON (any object; what is not a string is malformed).

    Yields:
        ``(record_id, episode)`` per readable row. Each other row is skipped with a
        `MalformedRecordWarning` naming its id (also
        collected by `collect_malformed`), as `decode_episode` does.
    """
    for record_id, raw in rows:
        episode = _decode_episode(record_id, raw)
        if episode is not None:
            yield record_id, episode
