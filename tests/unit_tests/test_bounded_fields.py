"""A replay degrades, never blanks: one long field cannot starve the rest of a prompt.

Every stored text field is shown cut to a bound with a marker (``prompting.sanitize.
bounded``): a task to ``TASK_CHARS``, a strategy to ``STRATEGY_CHARS``, a feedback message
to ``MESSAGE_CHARS`` (the compact replay's feedback line to ``FEEDBACK_CHARS``). Episodes
are stored whole; only what is shown is cut.
"""

from __future__ import annotations

import dataclasses

import pytest

from langchain_episodic import EpisodicMemory, build_replay, episode_from_tests
from langchain_episodic.prompting.sanitize import TASK_CHARS, bounded
from langchain_episodic.stores import InMemoryEpisodeStore

QUERY = "Parse the yaml config and check keys"


def victim_and(long_episode_id: str, **fields: str) -> EpisodicMemory:
    memory = EpisodicMemory(store=InMemoryEpisodeStore())
    memory.record(
        episode_from_tests(
            "Parse the yaml config and check required keys",
            "def parse(path): ...",
            5,
            5,
            episode_id="victim",
        )
    )
    long = episode_from_tests(QUERY, "def other(): ...", 5, 5, episode_id=long_episode_id)
    memory.record(dataclasses.replace(long, **fields) if fields else long)
    return memory


@pytest.mark.parametrize("renderer", ["auto", "detailed", "ranked"])
@pytest.mark.parametrize("size", [16_000, 2_000_000])
def test_one_long_task_cannot_blank_the_replay(renderer: str, size: int) -> None:
    stuffed = (QUERY + ". ") * (size // 38)
    memory = victim_and("long")
    memory.record(episode_from_tests(stuffed, "def other(): ...", 5, 5, episode_id="long-2"))
    replay = build_replay(memory, QUERY, renderer=renderer)
    assert "victim" in replay.shown
    assert "long-2" in replay.shown  # cut, not dropped
    assert "[cut: " in replay.text
    assert len(replay.text) < 6 * 1200  # within the default budget of tokens
    assert memory.get_episodes(["long-2"])["long-2"].task.description == stuffed  # stored whole


def test_a_huge_strategy_cannot_fill_the_detailed_prompt() -> None:
    memory = victim_and("strategy", strategy_used="S" * 20_000)
    replay = build_replay(memory, QUERY, renderer="detailed")
    assert set(replay.shown) == {"strategy", "victim"}
    assert replay.text.count("S" * 81) == 0


def test_a_huge_feedback_message_is_cut_in_the_detailed_prompt() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore())
    memory.record(episode_from_tests(QUERY, "def a(): ...", 1, 5, "E" * 50_000, episode_id="noisy"))
    memory.record(
        episode_from_tests(
            "Parse the yaml config and check required keys",
            "def parse(path): ...",
            5,
            5,
            episode_id="victim",
        )
    )
    replay = build_replay(memory, QUERY, renderer="detailed")
    assert set(replay.shown) == {"noisy", "victim"}
    assert "[cut: 50,000 characters in all]" in replay.text


def test_bounded_cuts_with_a_marker_and_keeps_short_text() -> None:
    assert bounded("x" * (TASK_CHARS + 1), TASK_CHARS).endswith("[cut: 501 characters in all]")
    assert bounded("Fix the login form", TASK_CHARS) == "Fix the login form"
    assert "\n" in bounded("line one\nline two", 100, lines=True)
    assert "\n" not in bounded("line one\nline two", 100)
