"""How well the agent does: skill profiles (article, section 9), learning curves (section 11).

Profiles are computed with running sums (:class:`SkillTally`), so they can be built
from a stream of episodes of any length without holding it, and kept up to date by
:class:`~langchain_episodic.EpisodicMemory` as episodes are recorded.

Example:
    .. code-block:: python

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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.model.episode import Episode, OutcomeStatus, TaskCategory

__all__ = [
    "LearningSnapshot",
    "SkillProfile",
    "SkillTally",
    "compute_learning_curve",
    "compute_skill_profiles",
    "identify_weak_skills",
    "profiles_from_tallies",
    "tally_episodes",
]


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
    episodes: Iterable[Episode],
    start: Mapping[TaskCategory, SkillTally] | None = None,
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
    :meth:`~langchain_episodic.EpisodicMemory.episodes`; only the running sums are held.
    """
    return profiles_from_tallies(tally_episodes(episodes))


def identify_weak_skills(
    profiles: Iterable[SkillProfile],
    threshold: float = 0.5,
) -> tuple[SkillProfile, ...]:
    """Profiles whose success rate is below ``threshold``.

    Raises:
        EpisodicValueError: ``threshold`` is not a number in [0, 1].
    """
    check_number("threshold", threshold, 0.0, 1.0)
    return tuple(p for p in profiles if p.success_rate < threshold)


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
    episodes: Iterable[Episode],
    window: int = 5,
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
        snapshots.append(
            LearningSnapshot(
                episode_number=number,
                cumulative_reward=cumulative,
                rolling_success_rate=successes / len(recent),
                rolling_avg_reward=sum(e.feedback.reward for e in recent) / len(recent),
            )
        )
    return tuple(snapshots)
