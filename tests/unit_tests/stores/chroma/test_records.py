"""A Chroma record and an episode: metadata, filters and rows, against a real Chroma."""

from __future__ import annotations

import chromadb
import pytest

from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.stores.chroma.records import (
    EPISODE_KEY,
    NUMERIC_KEYS,
    episode_metadata,
    episode_rows,
    filter_keys,
    metadata_by_id,
    seq_in,
    seq_rows,
    where_clause,
)
from langchain_episodic.stores.codec import decode_episodes
from tests.unit_tests.factories import make_episode


def test_the_metadata_holds_the_episode_and_only_the_keys_filters_use() -> None:
    episode = make_episode(episode_id="e1", outcome="failure", strategy="defensive")
    metadata = episode_metadata(episode, 7)
    assert set(metadata) == {
        EPISODE_KEY, "seq", "category", "outcome", "strategy_used", *NUMERIC_KEYS,
    }  # fmt: skip
    assert (metadata["reward"], metadata["pass_rate"], metadata["timestamp"]) == (
        episode.feedback.reward, 0.8, episode.timestamp,
    )  # fmt: skip
    assert (metadata["seq"], metadata["outcome"], metadata["strategy_used"]) == (
        7,
        "failure",
        "defensive",
    )
    assert list(decode_episodes([("e1", metadata[EPISODE_KEY])])) == [("e1", episode)]


def test_a_filter_becomes_the_where_chroma_applies() -> None:
    client = chromadb.EphemeralClient()
    collection = client.create_collection("records-where")
    episodes = [
        make_episode(episode_id="a", category="debugging", outcome="success"),
        make_episode(episode_id="b", category="debugging", outcome="failure"),
        make_episode(episode_id="c", category="testing", outcome="success"),
    ]
    collection.add(
        ids=[e.episode_id for e in episodes],
        embeddings=[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
        metadatas=[episode_metadata(e, i) for i, e in enumerate(episodes)],
    )

    def ids(filters: EpisodeFilter | None) -> list[str]:
        return sorted(collection.get(where=where_clause(filters), include=[])["ids"])

    assert where_clause(None) is None
    assert where_clause(EpisodeFilter()) is None
    assert ids(None) == ["a", "b", "c"]
    assert ids(EpisodeFilter(category="debugging")) == ["a", "b"]
    assert ids(EpisodeFilter(category="debugging", outcome="success")) == ["a"]
    assert ids(EpisodeFilter(outcome=["success", "failure"], category="testing")) == ["c"]
    rows = metadata_by_id(collection.get(include=["metadatas"]))
    assert {record_id for record_id, _ in episode_rows(rows)} == {"a", "b", "c"}
    assert [episode.episode_id for _, episode in seq_rows(rows, 1, 3)] == ["b", "c"]


@pytest.mark.parametrize(
    ("seq", "inside"),
    [(1, True), (2.0, True), (0, False), (3, False), (True, False), ("2", False), (None, False)],
)
def test_only_a_number_in_range_is_a_seq_in_range(seq: object, inside: bool) -> None:
    assert seq_in(seq, 1, 3) is inside


def test_a_record_written_before_gets_its_numeric_keys_from_its_json() -> None:
    episode = make_episode(episode_id="e1", reward=0.25, timestamp=42.0)
    metadata = episode_metadata(episode, 0)
    old = {key: value for key, value in metadata.items() if key not in NUMERIC_KEYS}
    assert filter_keys(old) == {key: metadata[key] for key in NUMERIC_KEYS}
    assert filter_keys(metadata) is None  # written today: nothing to give
    assert filter_keys({EPISODE_KEY: "not json"}) is None  # readers skip it anyway


def test_a_rich_filter_becomes_chromas_where_and_chroma_applies_it() -> None:
    collection = chromadb.EphemeralClient().create_collection("records-rich-where")
    episodes = [
        make_episode(episode_id=f"e{i}", reward=i / 10, timestamp=float(i), strategy=s)
        for i, s in enumerate(["iterative", "defensive"] * 5)
    ]
    collection.add(
        ids=[e.episode_id for e in episodes],
        embeddings=[[1.0, float(i)] for i in range(len(episodes))],
        metadatas=[episode_metadata(e, i) for i, e in enumerate(episodes)],
    )
    rich = EpisodeFilter.from_where(
        {
            "$or": [
                {"$and": [{"reward": {"$gte": 0.6}}, {"strategy_used": {"$ne": "iterative"}}]},
                {"timestamp": {"$lt": 2.0}},
            ]
        }
    )
    got = collection.get(where=where_clause(rich))["ids"]
    expected = [
        e.episode_id
        for e in episodes
        if rich.admits(
            {
                "reward": e.feedback.reward,
                "strategy_used": e.strategy_used,
                "timestamp": e.timestamp,
            }
        )
    ]
    assert sorted(got) == sorted(expected) == ["e0", "e1", "e7", "e9"]
