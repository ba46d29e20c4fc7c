"""``EpisodeFilter``: restrict recall to episodes whose fields take one of the given values."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory, OutcomeStatus, TaskCategory
from langchain_episodic.model.filters import EpisodeFilter
from tests.unit_tests.factories import make_episode


def test_one_value_or_several_are_kept_as_enum_members() -> None:
    one = EpisodeFilter(category="debugging")
    several = EpisodeFilter(category=[TaskCategory.DEBUGGING, "testing"])
    assert one.categories == (TaskCategory.DEBUGGING,)
    assert set(several.categories or ()) == {TaskCategory.DEBUGGING, TaskCategory.TESTING}
    assert EpisodeFilter().is_empty
    assert not one.is_empty


def test_fields_combine_with_and_values_with_or() -> None:
    rule = EpisodeFilter(category="debugging", outcome=["success", "partial"])
    assert rule.matches("debugging", "partial", "iterative")
    assert not rule.matches("debugging", "failure", "iterative")
    assert not rule.matches("testing", "success", "iterative")
    assert EpisodeFilter(strategy_used="tdd").matches("testing", "failure", "tdd")


def test_an_unknown_value_is_refused() -> None:
    with pytest.raises(ValueError, match="nonsense"):
        EpisodeFilter(outcome="nonsense")


def test_recall_keeps_only_the_episodes_the_filter_allows(memory: EpisodicMemory) -> None:
    memory.record_many(
        [
            make_episode(episode_id="ok", description="Fix the login bug", outcome="success"),
            make_episode(
                episode_id="bad", description="Fix the login bug again", outcome="failure"
            ),
        ]
    )
    only_failures = EpisodeFilter(outcome=OutcomeStatus.FAILURE)
    hits = memory.recall("Fix the login bug", top_k=5, filters=only_failures, ranking="article")
    assert [hit.episode.episode_id for hit in hits] == ["bad"]
