"""The record codec: an episode as the JSON every store keeps, and malformed records skipped
with a warning that names them."""

from __future__ import annotations

import json

import pytest

from langchain_episodic.errors import MalformedRecordWarning
from langchain_episodic.stores.codec import (
    collect_malformed,
    decode_episode,
    decode_episodes,
    decode_hits,
    encode_episode,
    read_record,
)
from tests.unit_tests.factories import make_episode


def test_an_episode_round_trips_through_its_record() -> None:
    episode = make_episode(episode_id="ep-1", description="Fix the login bug", reward=0.25)
    raw = encode_episode(episode)
    assert json.loads(raw)["episode_id"] == "ep-1"
    assert decode_episode("ep-1", raw) == episode


def test_a_malformed_record_is_none_with_a_warning_naming_it() -> None:
    with pytest.warns(MalformedRecordWarning, match="bad-1"):
        assert decode_episode("bad-1", "not json") is None
    episode, reason = read_record("bad-2", '{"episode_id": "bad-2"}')
    assert episode is None
    assert reason  # says why, for the warning and the verify command


def test_decoding_rows_keeps_their_order_and_skips_the_malformed_ones() -> None:
    first, second = make_episode(episode_id="a"), make_episode(episode_id="b")
    rows = [("a", encode_episode(first)), ("x", "{"), ("b", encode_episode(second))]
    with collect_malformed() as skipped, pytest.warns(MalformedRecordWarning):
        decoded = list(decode_episodes(rows))
    assert decoded == [("a", first), ("b", second)]
    assert [warning.record_id for warning in skipped] == ["x"]


def test_hits_carry_their_similarity_and_ranking_fields() -> None:
    episode = make_episode(episode_id="a", reward=0.75, timestamp=42.0)
    with pytest.warns(MalformedRecordWarning, match="'x'"):
        hits = list(decode_hits([("a", encode_episode(episode), 0.5), ("x", None, 0.9)]))
    (hit,) = hits
    assert (hit.similarity, hit.timestamp, hit.reward) == (0.5, 42.0, 0.75)
    assert hit.outcome == episode.outcome
