"""Turning a test run into Feedback + OutcomeStatus, and an agent run into an Episode."""

from __future__ import annotations

import inspect
import time
import typing

import pytest

from langchain_episodic import (
    EpisodeConflictError,
    EpisodicMemory,
    EpisodicValueError,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
    episode_from_tests,
)
from langchain_episodic.errors import EpisodeValidationError
from langchain_episodic.model.feedback import (
    EpisodeOptions,
    feedback_from_tests,
    outcome_for_pass_rate,
)


@pytest.mark.parametrize(
    ("passed", "total", "reward", "outcome"),
    [
        (10, 10, 1.0, OutcomeStatus.SUCCESS),
        (9, 10, 0.9, OutcomeStatus.PARTIAL),
        (5, 10, 0.5, OutcomeStatus.PARTIAL),
        (4, 10, 0.4, OutcomeStatus.FAILURE),
        (0, 3, 0.0, OutcomeStatus.FAILURE),
        (0, 0, 0.0, OutcomeStatus.FAILURE),
    ],
)
def test_rule_for_outcomes(passed: int, total: int, reward: float, outcome: OutcomeStatus) -> None:
    feedback, got = feedback_from_tests(passed, total, "log tail")
    assert (feedback.reward, got) == (pytest.approx(reward), outcome)
    assert (feedback.tests_passed, feedback.tests_total, feedback.message) == (
        passed,
        total,
        "log tail",
    )


def test_thresholds_are_adjustable() -> None:
    assert feedback_from_tests(9, 10, success_at=0.9)[1] is OutcomeStatus.SUCCESS
    assert feedback_from_tests(3, 10, partial_at=0.3)[1] is OutcomeStatus.PARTIAL
    assert outcome_for_pass_rate(0.95, success_at=0.95) is OutcomeStatus.SUCCESS


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"success_at": 1.5}, "success_at=1.5"),
        ({"partial_at": -0.1}, "partial_at=-0.1"),
        ({"success_at": 0.4, "partial_at": 0.6}, "partial_at=0.6"),
    ],
)
def test_bad_thresholds_are_named(kwargs: dict[str, float], named: str) -> None:
    with pytest.raises(EpisodicValueError, match=named):
        feedback_from_tests(5, 10, **kwargs)


@pytest.mark.parametrize(
    ("passed", "total", "field"), [(11, 10, "tests_passed=11"), (-1, 5, "tests_passed=-1")]
)
def test_inconsistent_counts_are_refused(passed: int, total: int, field: str) -> None:
    with pytest.raises(EpisodeValidationError, match=field):
        feedback_from_tests(passed, total)


def test_episode_from_tests_in_one_call() -> None:
    task = TaskDescription("Add OAuth login", TaskCategory.CODE_GENERATION, 0.7)
    episode = episode_from_tests(
        task,
        "def oauth(): ...",
        7,
        10,
        "3 redirect tests fail",
        strategy_used="iterative",
        iterations=2,
        episode_id="oauth-1",
        timestamp=123.0,
    )
    assert episode.task == task
    assert episode.outcome is OutcomeStatus.PARTIAL
    assert episode.feedback.reward == pytest.approx(0.7)
    assert (episode.episode_id, episode.timestamp, episode.iterations) == ("oauth-1", 123.0, 2)


def test_episode_from_tests_defaults_id_and_time() -> None:
    before = time.time()
    first = episode_from_tests("Fix a bug", "patch", 1, 1)
    second = episode_from_tests("Fix a bug", "patch", 1, 1)
    assert first.episode_id != second.episode_id
    assert before <= first.timestamp <= second.timestamp <= time.time()
    assert first.task.category is TaskCategory.UNKNOWN
    assert first.outcome is OutcomeStatus.SUCCESS


@pytest.mark.parametrize(
    ("timestamp", "says"),
    [(1_780_000_000_000.0, "milliseconds"), (-1.0, "before 1970"), (9e9, "2200-01-01")],
)
def test_episode_from_tests_refuses_a_timestamp_that_is_not_seconds(
    timestamp: float, says: str
) -> None:
    with pytest.raises(EpisodeValidationError, match=rf"^Episode\.timestamp=.*{says}"):
        episode_from_tests("Fix a bug", "patch", 1, 1, timestamp=timestamp)


def test_a_re_run_with_fixed_ids_is_a_no_op_with_a_fixed_timestamp_and_clear_without() -> None:
    memory = EpisodicMemory()

    def run(**when: float) -> int:  # a script that records fixed ids
        episodes = [
            episode_from_tests(f"Task {i}", "patch", 1, 1, episode_id=f"script-{i}", **when)
            for i in range(3)
        ]
        return memory.record_many(episodes)

    assert run(timestamp=1_780_000_000.0) == 3
    assert run(timestamp=1_780_000_000.0) == 0  # the identical episodes: a no-op
    with pytest.raises(EpisodeConflictError) as caught:
        run()  # dated now: different episodes under the same ids
    message = str(caught.value)
    assert "episode_id='script-0' already holds a different episode" in message
    assert "timestamp 1780000000.0 (stored) vs " in message
    assert "pass a fixed timestamp=" in message
    assert [field for field, _, _ in caught.value.differences] == ["timestamp"]
    assert len(memory) == 3


def test_episode_options_are_the_keyword_only_arguments_of_episode_from_tests() -> None:
    # Wrappers take **options: Unpack[EpisodeOptions]: the two lists must not drift.
    hints = typing.get_type_hints(episode_from_tests)
    keyword_only = {
        name: hints[name]
        for name, parameter in inspect.signature(episode_from_tests).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "source"
    }
    assert typing.get_type_hints(EpisodeOptions) == keyword_only
    assert EpisodeOptions.__optional_keys__ == frozenset(keyword_only)
