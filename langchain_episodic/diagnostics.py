"""Learning curves: is the agent getting better? (article, section 11).

Example:
    .. code-block:: python

        from langchain_episodic import compute_learning_curve

        for point in compute_learning_curve(memory.episodes(), window=5):
            print(point.episode_number, f"{point.rolling_success_rate:.0%}")
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from langchain_episodic._validation import check_int
from langchain_episodic.episode import Episode, OutcomeStatus

__all__ = ["LearningSnapshot", "compute_learning_curve"]


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
