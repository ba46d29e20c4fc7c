"""How well the agent does: skill profiles (article, section 9), learning curves (section 11).

Profiles are computed with running sums (`SkillTally`), so they can be built
from a stream of episodes of any length without holding it, and kept up to date by
`EpisodicMemory` as episodes are recorded.

**How much of a success an episode was** is `success_grade`, stated once: a
success counts 1, a failure 0, and a partial success its pass rate (its reward when no
test ran), so one attempt passing 9 of 10 tests is 0.9 of a success, not a failure.
Strategy evidence (`strategy_evidence`)
counts episodes by it.

**What "weak" means** is `is_weak`, stated once and used by the strategy rule,
`identify_weak_skills`, the CLI's ``skills`` command and the examples: a category
is weak when fewer than half (`WEAK_THRESHOLD`) of at least
`MIN_WEAK_EPISODES` (3) episodes succeeded. The article's rule (section 9: the
same rate over any number of episodes) flagged a category after one attempt that
passed 9 of 10 tests. A partial success does not count here: weak means the agent
rarely *finishes* a task of the category, which is what the defensive strategy is for.
Measured in the learning simulation (``benchmarks/results/strategy_evidence.md``),
counting partial successes by their grade here too flagged fewer categories and lost
reward: -2.3 with the default rule, -7.9 with the article's hierarchy, over 300 tasks x
5 seeds.

Examples:
    ```python
    from langchain_episodic.scoring.skills import (
        compute_learning_curve,
        compute_skill_profiles,
        identify_weak_skills,
    )

    profiles = compute_skill_profiles(memory.episodes())
    for weak in identify_weak_skills(profiles):
        print(weak.category.value, f"{weak.success_rate:.0%}")
    for point in compute_learning_curve(memory.episodes(), window=5):
        print(point.episode_number, f"{point.rolling_success_rate:.0%}")
    ```
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.model.episode import Episode, OutcomeStatus, TaskCategory

__all__ = [
    "MIN_WEAK_EPISODES",
    "WEAK_THRESHOLD",
    "LearningSnapshot",
    "SkillProfile",
    "SkillTally",
    "compute_learning_curve",
    "compute_skill_profiles",
    "episode_grade",
    "identify_weak_skills",
    "is_weak",
    "profiles_from_tallies",
    "success_grade",
    "tally_episodes",
]

WEAK_THRESHOLD = 0.5
"""A category is weak when its success rate is below this (strictly)..."""

MIN_WEAK_EPISODES = 3
"""...over at least this many episodes: one or two attempts say too little."""

PARTIAL_GRADE = 0.5
"""The grade of a partial success whose pass rate and reward are unknown."""


def success_grade(
    outcome: OutcomeStatus, reward: float | None = None, tests_passed: int = 0, tests_total: int = 0
) -> float:
    """How much of a success one episode was, in [0, 1]: the evidence it gives.

    ``SUCCESS`` counts 1.0 and ``FAILURE`` 0.0, as in the article. A ``PARTIAL``
    success counts its pass rate (``tests_passed / tests_total``), or its ``reward``
    when no test ran, or `PARTIAL_GRADE` when neither is known. A failure
    counts nothing even when some tests passed: an attempt that failed most of its
    tests is no evidence that its strategy works (measured in the learning
    simulation: counting failures' pass rates too kept a poor strategy in use).

    Args:
        outcome: How the episode ended.
        reward: Its reward in [0, 1], used when no test ran.
        tests_passed: Tests that passed.
        tests_total: Tests that ran.

    Examples:
        >>> success_grade(OutcomeStatus.PARTIAL, 0.9, tests_passed=9, tests_total=10)
        0.9
        >>> success_grade(OutcomeStatus.PARTIAL, 0.7)
        0.7
        >>> success_grade(OutcomeStatus.FAILURE, 0.3, tests_passed=3, tests_total=10)
        0.0
        >>> success_grade(OutcomeStatus.SUCCESS)
        1.0
    """
    if outcome is OutcomeStatus.SUCCESS:
        return 1.0
    if outcome is not OutcomeStatus.PARTIAL:
        return 0.0
    if tests_total > 0:
        return min(1.0, max(0.0, tests_passed / tests_total))
    if reward is not None:
        return min(1.0, max(0.0, float(reward)))
    return PARTIAL_GRADE


def episode_grade(episode: Episode) -> float:
    """`success_grade` of an episode, from its outcome and feedback.

    Examples:
        >>> from langchain_episodic import TaskDescription, episode_from_tests
        >>> episode = episode_from_tests(
        ...     TaskDescription("Add a CSV export"), "...", 9, 10, timestamp=0.0
        ... )
        >>> episode.outcome.value, episode_grade(episode)
        ('partial', 0.9)
    """
    feedback = episode.feedback
    return success_grade(
        episode.outcome, feedback.reward, feedback.tests_passed, feedback.tests_total
    )


@dataclass(frozen=True)
class SkillProfile:
    """How the agent has done on one category of task.

    Attributes:
        category: The task category.
        total_episodes: Episodes recorded in this category.
        successes: Of those, how many succeeded.
        avg_reward: Mean reward.
        avg_iterations: Mean number of iterations.
    """

    category: TaskCategory
    total_episodes: int
    successes: int
    avg_reward: float
    avg_iterations: float

    @property
    def success_rate(self) -> float:
        """Share of episodes that succeeded, or 0.0 with no episode."""
        return self.successes / self.total_episodes if self.total_episodes > 0 else 0.0


@dataclass(frozen=True)
class SkillTally:
    """Running sums for one category; add episodes one at a time.

    Attributes:
        total: Episodes counted.
        successes: Of those, how many succeeded.
        reward_sum: Sum of their rewards.
        iterations_sum: Sum of their iterations.
    """

    total: int = 0
    successes: int = 0
    reward_sum: float = 0.0
    iterations_sum: int = 0

    def add(self, episode: Episode) -> SkillTally:
        """Return the tally with ``episode`` counted too."""
        return SkillTally(
            total=self.total + 1,
            successes=self.successes + (episode.outcome is OutcomeStatus.SUCCESS),
            reward_sum=self.reward_sum + episode.feedback.reward,
            iterations_sum=self.iterations_sum + episode.iterations,
        )

    def profile(self, category: TaskCategory) -> SkillProfile:
        """The profile these sums describe."""
        total = max(self.total, 1)
        return SkillProfile(
            category=category,
            total_episodes=self.total,
            successes=self.successes,
            avg_reward=self.reward_sum / total,
            avg_iterations=self.iterations_sum / total,
        )


def tally_episodes(
    episodes: Iterable[Episode], start: Mapping[TaskCategory, SkillTally] | None = None
) -> dict[TaskCategory, SkillTally]:
    """Count ``episodes`` per category, on top of ``start`` when given."""
    tallies = dict(start or {})
    for episode in episodes:
        category = episode.task.category
        tallies[category] = tallies.get(category, SkillTally()).add(episode)
    return tallies


def profiles_from_tallies(tallies: Mapping[TaskCategory, SkillTally]) -> tuple[SkillProfile, ...]:
    """Profiles of every counted category, sorted by category value."""
    return tuple(
        tallies[category].profile(category)
        for category in sorted(tallies, key=lambda c: c.value)
        if tallies[category].total > 0
    )


def compute_skill_profiles(episodes: Iterable[Episode]) -> tuple[SkillProfile, ...]:
    """Group episodes by task category into profiles, sorted by category value.

    Accepts any iterable, including the stream of
    `episodes`; only the running sums are held.
    """
    return profiles_from_tallies(tally_episodes(episodes))


def is_weak(
    profile: SkillProfile, threshold: float = WEAK_THRESHOLD, min_episodes: int = MIN_WEAK_EPISODES
) -> bool:
    """Whether a category is weak: the one definition every part of the package uses.

    Weak means a `success_rate` below ``threshold`` over at
    least ``min_episodes`` episodes: too few episodes are never weak, so a single
    attempt (a 9/10 partial success, or even a failure) flags nothing. A partial
    success is not a success here (see the module's docstring for why and what was
    measured).

    Args:
        profile: The category's profile.
        threshold: The success rate a category needs to not be weak.
        min_episodes: Episodes a category needs before it can count as weak.

    Raises:
        EpisodicValueError: ``threshold`` is not a number in [0, 1], or
            ``min_episodes`` is not an integer >= 1.

    Examples:
        >>> one_partial = SkillProfile(TaskCategory.DEBUGGING, 1, 0, 0.9, 2.0)
        >>> is_weak(one_partial)
        False
        >>> one_in_three = SkillProfile(TaskCategory.DEBUGGING, 3, 1, 0.6, 3.0)
        >>> is_weak(one_in_three)
        True
    """
    check_number("threshold", threshold, 0.0, 1.0)
    check_int("min_episodes", min_episodes, 1)
    return profile.total_episodes >= min_episodes and profile.success_rate < threshold


def identify_weak_skills(
    profiles: Iterable[SkillProfile],
    threshold: float = WEAK_THRESHOLD,
    min_episodes: int = MIN_WEAK_EPISODES,
) -> tuple[SkillProfile, ...]:
    """The weak profiles (`is_weak`), in the order given.

    The article's rule (any number of episodes) is ``min_episodes=1``.

    Args:
        profiles: Skill profiles, e.g. ``memory.skill_profiles()``.
        threshold: The success rate a category needs to not be weak.
        min_episodes: Episodes a category needs before it can count as weak.

    Raises:
        EpisodicValueError: ``threshold`` is not a number in [0, 1], or
            ``min_episodes`` is not an integer >= 1.

    Examples:
        >>> profiles = [
        ...     SkillProfile(TaskCategory.TESTING, 1, 0, 0.9, 2.0),
        ...     SkillProfile(TaskCategory.ARCHITECTURE, 4, 1, 0.4, 3.0),
        ... ]
        >>> [p.category.value for p in identify_weak_skills(profiles)]
        ['architecture']
        >>> [p.category.value for p in identify_weak_skills(profiles, min_episodes=1)]
        ['testing', 'architecture']
    """
    check_number("threshold", threshold, 0.0, 1.0)
    check_int("min_episodes", min_episodes, 1)
    return tuple(p for p in profiles if is_weak(p, threshold, min_episodes))


@dataclass(frozen=True)
class LearningSnapshot:
    """The learning curve after one more episode.

    Attributes:
        episode_number: 1-based position of the episode.
        cumulative_reward: Sum of rewards up to and including it.
        rolling_success_rate: Success rate over the last ``window`` episodes.
        rolling_avg_reward: Mean reward over the last ``window`` episodes.
    """

    episode_number: int
    cumulative_reward: float
    rolling_success_rate: float
    rolling_avg_reward: float


def compute_learning_curve(
    episodes: Iterable[Episode], window: int = 5
) -> tuple[LearningSnapshot, ...]:
    """One snapshot per episode, with rolling averages over ``window`` episodes.

    Accepts any iterable, including the stream of ``memory.episodes()``; only the
    window is held besides the snapshots.

    Raises:
        EpisodicValueError: ``window`` is not an integer >= 1.
    """
    check_int("window", window, 1)
    recent: deque[Episode] = deque(maxlen=window)
    snapshots = []
    cumulative = 0.0
    for number, episode in enumerate(episodes, start=1):
        cumulative += episode.feedback.reward
        recent.append(episode)
        successes = sum(1 for e in recent if e.outcome is OutcomeStatus.SUCCESS)
        rolling_reward = sum(e.feedback.reward for e in recent) / len(recent)
        snapshots.append(
            LearningSnapshot(number, cumulative, successes / len(recent), rolling_reward)
        )
    return tuple(snapshots)
