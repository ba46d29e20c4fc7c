"""A Chroma record and an episode, one to one: metadata, filters, rows read back.

An episode is stored as one record: its task's vector, its JSON under `EPISODE_KEY` and
the flat keys filters use (`episode_metadata`: every field of `WHERE_FIELDS`); an
`EpisodeFilter` becomes Chroma's ``where`` (`where_clause`); what a ``get`` returns
becomes episodes (`metadata_by_id`, `episode_rows`, `seq_rows`) or journal entries
(`journal_entries`). Records written before 0.2 carry only category, outcome and
strategy flat: `filter_keys` gives one the others, from its JSON.

Examples:
    >>> from langchain_episodic.model.filters import AllOf, AnyOf, Condition, EpisodeFilter
    >>> where_clause(EpisodeFilter(category="debugging", outcome=["success", "partial"]))
    {'$and': [{'category': 'debugging'}, {'outcome': {'$in': ['success', 'partial']}}]}
    >>> where_clause(EpisodeFilter.from_where(
    ...     {"$or": [{"reward": {"$gte": 0.5}}, {"strategy_used": {"$ne": "iterative"}}]}))
    {'$or': [{'reward': {'$gte': 0.5}}, {'strategy_used': {'$ne': 'iterative'}}]}
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from chromadb.api.types import GetResult

from langchain_episodic.model.episode import Episode, pass_rate_of
from langchain_episodic.model.filters import AllOf, AnyOf, Condition, EpisodeFilter
from langchain_episodic.stores.base import JournalEntry
from langchain_episodic.stores.codec import decode_episodes, encode_episode

__all__ = [
    "EPISODE_KEY",
    "NUMERIC_KEYS",
    "episode_metadata",
    "episode_rows",
    "filter_keys",
    "journal_entries",
    "metadata_by_id",
    "seq_in",
    "seq_rows",
    "where_clause",
]

EPISODE_KEY = "episode"
"""The metadata key of an episode's JSON."""

NUMERIC_KEYS = ("reward", "pass_rate", "timestamp")
"""The flat keys records written before 0.2 lack (`filter_keys` gives them)."""


def episode_metadata(episode: Episode, seq: int) -> dict[str, str | int | float]:
    """The metadata of ``episode``'s record: its JSON, its number and what filters use."""
    # Only what filters use is flat; ranking reads the JSON. Three more keys measured
    # 0.99x the query time of a filtered search of 4,000 records (benchmarks/filter_keys.py).
    return {
        EPISODE_KEY: encode_episode(episode),
        "seq": seq,
        "category": episode.task.category.value,
        "outcome": episode.outcome.value,
        "strategy_used": episode.strategy_used,
        "reward": float(episode.feedback.reward),
        "pass_rate": float(episode.feedback.pass_rate),
        "timestamp": float(episode.timestamp),
    }


def filter_keys(metadata: Mapping[str, Any]) -> dict[str, float] | None:
    """The `NUMERIC_KEYS` a record lacks, from its episode JSON; ``None``: it has them.

    A record whose JSON cannot be read gets none (readers skip it anyway).
    """
    if all(key in metadata for key in NUMERIC_KEYS):
        return None
    try:
        data = json.loads(str(metadata.get(EPISODE_KEY)))
        feedback = data["feedback"]
        passed, total = int(feedback["tests_passed"]), int(feedback["tests_total"])
        return {
            "reward": float(feedback["reward"]),
            "pass_rate": pass_rate_of(passed, total),
            "timestamp": float(data["timestamp"]),
        }
    except (ValueError, TypeError, KeyError):
        return None


def where_clause(filters: EpisodeFilter | None) -> dict[str, Any] | None:
    """Chroma's ``where`` for ``filters`` (``None``: no filter), its `where` part too."""
    if filters is None or filters.is_empty:
        return None
    clauses: list[dict[str, Any]] = []
    for key, values in (
        ("category", filters.categories and [c.value for c in filters.categories]),
        ("outcome", filters.outcomes and [o.value for o in filters.outcomes]),
        ("strategy_used", filters.strategies and list(filters.strategies)),
    ):
        if values:
            clauses.append({key: values[0]} if len(values) == 1 else {key: {"$in": values}})
    if filters.where is not None:
        clauses.append(_chroma_where(filters.where))
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _chroma_where(clause: Condition | AllOf | AnyOf) -> dict[str, Any]:
    if isinstance(clause, Condition):
        value = list(clause.value) if isinstance(clause.value, tuple) else clause.value
        return {clause.field: {clause.operator: value}}
    parts = [_chroma_where(part) for part in clause.clauses]
    if len(parts) == 1:  # Chroma wants two clauses or more under $and / $or
        return parts[0]
    return {"$and" if isinstance(clause, AllOf) else "$or": parts}


def metadata_by_id(got: GetResult) -> dict[str, Mapping[str, Any]]:
    """The metadata of each record a Chroma ``get`` found, by id, in its order."""
    metadatas = got["metadatas"] or []
    return {
        record_id: metadata or {} for record_id, metadata in zip(got["ids"], metadatas, strict=True)
    }


def episode_rows(records: Mapping[str, Mapping[str, Any]]) -> Iterator[tuple[str, object]]:
    """``(record_id, episode JSON)`` per record, what the codec decodes."""
    for record_id, metadata in records.items():
        yield record_id, metadata.get(EPISODE_KEY)


def journal_entries(got: Any) -> list[JournalEntry]:
    """The journal entries a Chroma ``get`` of the journal found, in its order."""
    metadatas = got["metadatas"] or [None] * len(got["ids"])
    return [
        JournalEntry(entry_id, str((meta or {}).get("run")), str((meta or {}).get("entry")))
        for entry_id, meta in zip(got["ids"], metadatas, strict=True)
    ]


def seq_rows(records: Mapping[str, Any], start: int, stop: int) -> list[tuple[int, Episode]]:
    """``(seq, episode)`` of the readable records whose seq is in ``[start, stop)``, in order.

    What the where clause ``start <= seq < stop`` keeps, also for records read unfiltered.
    """
    in_range = {
        record_id: metadata
        for record_id, metadata in records.items()
        if seq_in(metadata.get("seq"), start, stop)
    }
    rows = [
        (int(in_range[record_id]["seq"]), episode)
        for record_id, episode in decode_episodes(episode_rows(in_range))
    ]
    # Several writer processes may repeat a seq (each numbers from its own count).
    rows.sort(key=lambda row: (row[0], row[1].timestamp, row[1].episode_id))
    return rows


def seq_in(seq: object, start: int, stop: int) -> bool:
    """Whether a stored ``seq`` is a number in ``[start, stop)``."""
    return isinstance(seq, (int, float)) and not isinstance(seq, bool) and start <= seq < stop
