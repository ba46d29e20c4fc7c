"""Turn a test run into feedback and an outcome, and an agent run into an episode.

The rule, stated once: ``reward = tests_passed / tests_total`` (the pass rate), and the
outcome is

* ``SUCCESS`` when every test passed (pass rate >= ``success_at``, default 1.0),
* ``PARTIAL`` when at least half passed (pass rate >= ``partial_at``, default 0.5),
* ``FAILURE`` otherwise, and also when no test ran (nothing was shown to work).

Examples:
    >>> feedback, outcome = feedback_from_tests(7, 10, "3 edge cases fail")
    >>> feedback.reward, outcome.value
    (0.7, 'partial')
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import TypedDict

from langchain_episodic._validation import check_number
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import (
    Episode,
    EpisodeSource,
    Feedback,
    OutcomeStatus,
    TaskDescription,
)

__all__ = ["EpisodeOptions", "episode_from_tests", "feedback_from_tests", "outcome_for_pass_rate"]


def outcome_for_pass_rate(
    pass_rate: float, *, success_at: float = 1.0, partial_at: float = 0.5
) -> OutcomeStatus:
    """Map a pass rate in [0, 1] to an outcome by the module's rule."""
    rate = check_number("pass_rate", pass_rate, 0.0, 1.0)
    success_at = check_number("success_at", success_at, 0.0, 1.0)
    partial_at = check_number("partial_at", partial_at, 0.0, 1.0)
    if partial_at > success_at:
        msg = f"partial_at={partial_at!r} must not exceed success_at={success_at!r}"
        raise EpisodicValueError(msg)
    if rate >= success_at:
        return OutcomeStatus.SUCCESS
    if rate >= partial_at:
        return OutcomeStatus.PARTIAL
    return OutcomeStatus.FAILURE


def feedback_from_tests(
    tests_passed: int,
    tests_total: int,
    message: str = "",
    *,
    success_at: float = 1.0,
    partial_at: float = 0.5,
) -> tuple[Feedback, OutcomeStatus]:
    """Feedback (reward = pass rate) and outcome for a test run.

    Args:
        tests_passed: Tests that passed.
        tests_total: Tests that ran; with 0 the reward is 0 and the outcome a failure.
        message: What the tests said, e.g. the first failing assertion.
        success_at: Pass rate from which the run counts as a success.
        partial_at: Pass rate from which it counts as a partial success.

    Raises:
        EpisodeValidationError: The counts are negative or inconsistent.
    """
    # Validate the counts first, so a bad count is named as such, not as a bad reward.
    counted = Feedback(0.0, message, tests_passed, tests_total)
    feedback = dataclasses.replace(counted, reward=counted.pass_rate)
    # Thresholds are checked even when no test ran: bad arguments never pass silently.
    outcome = outcome_for_pass_rate(feedback.reward, success_at=success_at, partial_at=partial_at)
    return feedback, OutcomeStatus.FAILURE if tests_total == 0 else outcome


class EpisodeOptions(TypedDict, total=False):
    """The keyword-only arguments of `episode_from_tests` but ``source``.

    For a wrapper that takes them on (``**options: Unpack[EpisodeOptions]``) and passes
    them through: it neither repeats the list nor its defaults, so it cannot drift from
    them. A key left out takes `episode_from_tests`'s default; the unit tests
    hold this class to that signature.

    Attributes:
        strategy_used: The strategy the agent followed.
        iterations: Attempts it took.
        episode_id: A unique id; a random UUID when ``None``.
        timestamp: When it finished, in seconds; now when ``None``.
        success_at: Pass rate from which the run counts as a success.
        partial_at: Pass rate from which it counts as a partial success.
    """

    strategy_used: str
    iterations: int
    episode_id: str | None
    timestamp: float | None
    success_at: float
    partial_at: float


def episode_from_tests(
    task: TaskDescription | str,
    solution: str,
    tests_passed: int,
    tests_total: int,
    message: str = "",
    *,
    strategy_used: str = "default",
    iterations: int = 1,
    episode_id: str | None = None,
    timestamp: float | None = None,
    success_at: float = 1.0,
    partial_at: float = 0.5,
    source: EpisodeSource | None = None,
) -> Episode:
    """Build the episode for a finished attempt from its test counts, in one call.

    Examples:
        ```python
        memory.record(episode_from_tests(task, code, passed, total, log_tail,
                                         strategy_used="iterative", iterations=2))
        ```

    Args:
        task: The task (a string counts as category ``unknown``).
        solution: What the agent produced.
        tests_passed: Tests that passed.
        tests_total: Tests that ran.
        message: What the tests said.
        strategy_used: The strategy the agent followed.
        iterations: Attempts it took.
        episode_id: A unique id; a random UUID when ``None``.
        timestamp: When it finished, in seconds; now (``time.time()``) when ``None``,
            as for `Episode`. Pass ``memory.now()`` for a memory on an injected
            clock, and a fixed value when a script with a fixed ``episode_id`` may run
            again, so that the re-run records the identical episode (a no-op).
        success_at: See `feedback_from_tests`.
        partial_at: See `feedback_from_tests`.
        source: Provenance (agent, run id), kept with the episode.

    Raises:
        EpisodeValidationError: A field breaks a rule of `Episode`, e.g. a
            timestamp in milliseconds.
    """
    feedback, outcome = feedback_from_tests(
        tests_passed, tests_total, message, success_at=success_at, partial_at=partial_at
    )
    return Episode(
        episode_id=episode_id if episode_id is not None else uuid.uuid4().hex,
        task=TaskDescription(task) if isinstance(task, str) else task,
        solution=solution,
        feedback=feedback,
        outcome=outcome,
        timestamp=time.time() if timestamp is None else timestamp,  # Episode's default
        iterations=iterations,
        strategy_used=strategy_used,
        source=source,
    )
