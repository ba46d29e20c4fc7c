"""``EpisodeWriter``: the write path stores what is new and says how much that was."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory
from tests.unit_tests.factories import make_episode


def test_the_writer_counts_only_new_episodes(memory: EpisodicMemory) -> None:
    writer = memory._s.writer
    first = [make_episode(episode_id="a"), make_episode(episode_id="b", timestamp=1.0)]
    assert writer.write(first, in_time_order=True) == 2
    assert writer.write([make_episode(episode_id="a")], in_time_order=True) == 0
    assert len(memory) == 2


def test_written_episodes_reach_the_short_term_window_and_the_summary(
    memory: EpisodicMemory,
) -> None:
    episodes = [make_episode(episode_id=f"e{i}", timestamp=float(i)) for i in range(3)]
    memory._s.writer.write(episodes, in_time_order=True)
    assert memory.short_term[-1].episode_id == "e2"
    (profile,) = memory.skill_profiles()
    assert profile.total_episodes == 3


def test_a_non_episode_is_a_type_error(memory: EpisodicMemory) -> None:
    with pytest.raises(TypeError):
        memory._s.writer.write(["not an episode"], in_time_order=True)  # type: ignore[list-item]
    assert len(memory) == 0
