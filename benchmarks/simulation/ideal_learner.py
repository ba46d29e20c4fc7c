"""A ceiling for any learner of a credit world: Bayes with the world's own rules.

The oracles of :mod:`simulation.credit_world` know each episode's hidden kind. No
memory can: it sees only the outcomes of the runs an episode was shown in. How much of
the oracle's gain can those outcomes give at all? This learner answers it generously.
It knows everything about the world except the hidden kinds and variants:

* each task's sub-topic and its base success probability;
* the world's kind mix (which kinds a success or a failure can hide, how often);
* each kind's exact effect, and the attempt's exact outcome model.

After every run it updates, for each shown episode, the posterior over that episode's
kind by the likelihood of the run's outcome (tests passed of tests run), with the other
shown episodes held at their expected effects (mean field). A misleading episode's
effect depends on the task's hidden variant, so its likelihood averages over variants.
For a task it shows, of the candidates the oracles choose among (the relevant
candidates of the default recall, same sub-topic only), up to ``top_k`` with the largest
expected effect, and only those whose expected effect is positive.

The memory has none of that knowledge: it must learn the baseline from its own runs and
cannot tell a sub-topic from a look-alike. What this learner closes of the gap between
plain top-3 recall and the oracle is therefore about the most any credit rule could
close in the same world: a ceiling up to its approximations (mean field, a greedy
choice; drawing kinds from the posterior instead, Thompson sampling, did worse). Every
figure it gives is simulated.

Example:
    .. code-block:: python

        from simulation.credit_world import READER_WORLD
        from simulation.ideal_learner import run_ideal_learner

        run = run_ideal_learner(READER_WORLD, n_tasks=60, seed=0)
        print(run.mean_reward)
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from types import MappingProxyType

from langchain_episodic import EpisodicMemory, HashingEmbeddings, OutcomeStatus
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.stores import InMemoryEpisodeStore
from simulation.credit_world import (
    EPISODE_KINDS,
    CreditAttempt,
    CreditRun,
    CreditWorld,
    CreditWorldEnvironment,
    HiddenEpisode,
)
from simulation.environment import START_TIME, TASK_INTERVAL

__all__ = ["IDEAL_LEARNER", "IdealLearner", "run_ideal_learner"]

IDEAL_LEARNER = "ideal_learner"
"""The diagnostic's name in reports."""

_MIN_P, _MAX_P = 0.02, 0.98  # the world's clip


class IdealLearner:
    """Posteriors over each recorded episode's hidden kind, from the runs that showed it.

    Args:
        world: The world whose rules the learner knows.
    """

    def __init__(self, world: CreditWorld) -> None:
        self.world = world
        share = 1.0 / world.hidden_variants
        # Effect on a task of the episode's sub-topic: (probability, effect) per variant case.
        self._cases = {
            kind: ((share, world.effects[kind].own), (1.0 - share, world.effects[kind].lookalike))
            for kind in EPISODE_KINDS
        }
        self._log_posterior: dict[str, dict[str, float]] = {}

    def add(self, episode_id: str, outcome: OutcomeStatus) -> None:
        """A new episode: its prior is the world's kind mix for its outcome."""
        success = outcome is OutcomeStatus.SUCCESS
        kinds = self.world.success_kinds if success else self.world.failure_kinds
        self._log_posterior[episode_id] = {k: math.log(p) for k, p in kinds.items() if p > 0}

    def kind_probabilities(self, episode_id: str) -> dict[str, float]:
        """The posterior probability of each kind the episode may hide."""
        logs = self._log_posterior[episode_id]
        top = max(logs.values())
        weights = {kind: math.exp(value - top) for kind, value in logs.items()}
        total = sum(weights.values())
        return {kind: weight / total for kind, weight in weights.items()}

    def expected_effect(self, episode_id: str) -> float:
        """The episode's expected effect on a task of its sub-topic."""
        return sum(
            p * sum(share * effect for share, effect in self._cases[kind])
            for kind, p in self.kind_probabilities(episode_id).items()
        )

    def choose(self, candidates: Sequence[str], top_k: int) -> list[str]:
        """Up to ``top_k`` candidates with the largest positive expected effect."""
        scored = sorted(((self.expected_effect(c), c) for c in candidates), reverse=True)
        return [c for effect, c in scored[:top_k] if effect > 0]

    def update(self, shown: Sequence[str], base: float, attempt: CreditAttempt) -> None:
        """Weigh each shown episode's kinds by the likelihood of ``attempt``'s outcome."""
        passed, total = attempt.feedback.tests_passed, attempt.feedback.tests_total
        success = attempt.outcome is OutcomeStatus.SUCCESS

        def likelihood(p: float) -> float:
            p = min(_MAX_P, max(_MIN_P, p))
            if success:
                return p
            q, n = 0.2 + 0.6 * p, total - 1
            return (1.0 - p) * math.comb(n, passed) * q**passed * (1.0 - q) ** (n - passed)

        expected = {episode_id: self.expected_effect(episode_id) for episode_id in shown}
        for episode_id in shown:
            rest = base + sum(e for other, e in expected.items() if other != episode_id)
            logs = self._log_posterior[episode_id]
            for kind in logs:
                found = sum(
                    share * likelihood(rest + effect) for share, effect in self._cases[kind]
                )
                logs[kind] += math.log(max(found, 1e-300))


def run_ideal_learner(
    world: CreditWorld, n_tasks: int = 300, seed: int = 0, top_k: int = 3
) -> CreditRun:
    """Run the ideal learner over ``n_tasks`` tasks of ``world``, as
    `run_credit_variant` runs a variant (the same tasks and luck per seed)."""
    env = CreditWorldEnvironment(world, seed)
    now = [START_TIME]
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: now[0]
    )
    options = RecallOptions(top_k=top_k)
    pool = options.candidate_count(learning=True)
    learner = IdealLearner(world)
    hidden: dict[str, HiddenEpisode] = {}
    probabilities: list[float] = []
    rewards: list[float] = []
    shown_slots: Counter[str] = Counter()
    ever_shown: set[str] = set()
    started = time.perf_counter()
    for index in range(n_tasks):
        now[0] = START_TIME + index * TASK_INTERVAL
        task = env.task_at(index)
        # The oracles' candidates: the relevant ones of the default recall.
        report = memory.recall(
            task.task, options=options.replace(top_k=pool, fetch_k=pool), explain=True
        )
        candidates = [
            r.episode.episode_id
            for r in report.results
            if hidden[r.episode.episode_id].subtopic == task.subtopic
        ]
        shown = learner.choose(candidates, top_k)
        attempt = env.attempt(task, [hidden[i] for i in shown])
        probabilities.append(attempt.probability)
        rewards.append(attempt.feedback.reward)
        shown_slots.update(hidden[i].kind for i in shown)
        ever_shown.update(shown)
        learner.update(shown, env.base_probability(task), attempt)
        episode_id = f"ideal-{seed}-{index:05d}"
        hidden[episode_id] = env.record(memory, episode_id, task, attempt, now[0])
        learner.add(episode_id, attempt.outcome)
    return CreditRun(
        variant=IDEAL_LEARNER,
        world=world.name,
        seed=seed,
        rewards=tuple(rewards),
        probabilities=tuple(probabilities),
        shown=MappingProxyType(dict(shown_slots)),
        shown_episodes=len(ever_shown),
        recorded=len(hidden),
        seconds=time.perf_counter() - started,
    )
