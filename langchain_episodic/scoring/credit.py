"""Credit: which recalled episodes help the runs they are shown in (pure logic).

Ranking by an episode's own reward cannot tell a lucky success from a fix that
transfers, or a failure whose warning saves every later attempt from one that only
distracts. Credit closes the loop: each prompt built from recall is noted as an
`Injection` (which episodes a run was shown), and when the run's outcome is
known a `CreditEvent` gives every episode it was shown the run's reward (both, and their
journal entries, are `langchain_episodic.model.credit`).

The statistic (`utility_table`), chosen to be honest:

* **Advantage, not reward.** A run's reward is compared with what runs of the same
  category earned *without* the episode (the mean reward of the category's credited
  runs that did not show it, shrunk towards a neutral 0.5 worth one run). An episode
  shown only on easy tasks gains nothing for their ease, and one shown in every run
  from the start is still compared with something other than itself: it is demoted
  as fast as it is promoted (20 runs at reward 0 take it to 0.05, 20 at 1 to 0.95,
  whichever came first).
* **Counts, not a single run.** Each credited run adds its advantage, mapped to
  ``h = clip(0.5 + ADVANTAGE_SCALE * advantage, 0, 1)``, to a Beta posterior:
  ``h`` to "helped", ``1 - h`` to "hurt", over a prior of
  `PRIOR_HELPED` / `PRIOR_HURT`. One lucky run moves it a little.
* **Forgetting.** Evidence decays with a half-life (`UTILITY_HALF_LIFE`), so a
  fix that stopped working loses its value, and the estimate drifts back to the prior.

The estimate is the posterior mean, in [0, 1]; 0.5 is "earns what runs without it
earn", which is also where a never-credited episode starts, so new episodes compete
with average ones on relevance and value alone (and ahead of those that proved
harmful). Ranking turns it into a factor (`utility_factor`).

Examples:
    >>> credit = CreditEvent("run-1", 1.0, ("fix",), "debugging", at=10.0)
    >>> table = utility_table([credit])
    >>> round(table["fix"].estimate(10.0), 3), table["fix"].credited_runs
    (0.667, 1)
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from langchain_episodic.model.credit import CreditEvent, Injection
from langchain_episodic.model.episode import LESSON_ID_PREFIX
from langchain_episodic.scoring.decay import (
    PRIOR_HELPED,
    PRIOR_HURT,
    beta_mean,
    half_life_decay,
    ranking_mean,
)

__all__ = [
    "ADVANTAGE_SCALE",
    "ALL_CATEGORIES",
    "HOLDOUT_BASELINE_RUNS",
    "LIFT_WINDOW_HOLDOUT",
    "LIFT_WINDOW_WITH_MEMORY",
    "PRESENTATION_WINDOW",
    "PRINCIPAL_POLICY_RUNS",
    "PRIOR_HELPED",
    "PRIOR_HURT",
    "PROBATION_MIN_RUNS",
    "PROBATION_Z",
    "UTILITY_HALF_LIFE",
    "UTILITY_POWER",
    "EpisodeUtility",
    "SubjectKind",
    "UtilityBook",
    "book_from",
    "lesson_evidence",
    "utility_factor",
    "utility_table",
]

SubjectKind = Literal["episode", "lesson"]
"""What a utility row is about: an episode, or a lesson shown above the episodes."""

UTILITY_HALF_LIFE = 90 * 86_400.0
"""Ninety days, in seconds: how fast credit evidence is forgotten."""

ADVANTAGE_SCALE = 1.0
"""How strongly one run's advantage moves it from 0.5 towards helped (1) or hurt (0)."""

HOLDOUT_BASELINE_RUNS = 5
"""Holdout runs a category needs before they alone are the advantage's baseline.

Until then, the baseline is the category's earlier runs that did not show the episode.
"""

PROBATION_MIN_RUNS = 5
"""Credited runs an episode or lesson needs before it can be put on probation."""

PROBATION_Z = 1.645
"""One-sided 95%: how confident "harmful" must be before recall stops showing it."""

UTILITY_POWER = 4.0
"""How strongly utility scales a relevant candidate's priority: by ``(2 * utility) **
UTILITY_POWER``, 1 at the prior's 0.5. Strong on purpose: value has room to act only if
an episode that keeps helping can overtake a closer look-alike that keeps failing
(utility 0.7 against 0.4: a factor 3.8 against 0.41). Chosen in the credit simulation
(``benchmarks/learning_value.py``): 4 against 1, 2, 3, 6 and 8, and the earlier
``1 + 0.5 * (2 * utility - 1)``; without credit evidence every factor is 1, so recall
is similarity scaled by value, as before."""

_BASELINE_PRIOR_WEIGHT = 1.0
_NEUTRAL_REWARD = 0.5
_RECENT_CHANGES = 4096

LIFT_WINDOW_WITH_MEMORY = 100
"""Recent credited runs shown memory that the lift guard compares, per category."""

LIFT_WINDOW_HOLDOUT = 40
"""Recent credited holdout runs the lift guard compares them with, per category."""

PRESENTATION_WINDOW = 200
"""Recent credited runs per presentation policy (per category, and for all) that the
presentation chooser reads (`presentation`): bounded
whatever the history, so a policy that stopped paying is seen to."""

ALL_CATEGORIES = "*"
"""The lift window's key for every category at once."""
# ---------------------------------------------------------------- the statistic


@dataclass
class EpisodeUtility:
    """What credit says about one episode.

    Attributes:
        episode_id: The episode.
        helped: Decayed "helped" evidence at `updated_at` (prior excluded).
        hurt: Decayed "hurt" evidence at `updated_at` (prior excluded).
        injections: Runs it was shown in (credited, open or closed).
        credited_runs: Runs it was shown in whose outcome was credited.
        reward_sum: Sum of those runs' rewards.
        advantage_sum: Sum of their advantages over runs without it.
        updated_at: When the evidence was last added (``None``: never credited).
        half_life: How fast the evidence is forgotten, in seconds.
    """

    episode_id: str
    helped: float = 0.0
    hurt: float = 0.0
    injections: int = 0
    credited_runs: int = 0
    reward_sum: float = 0.0
    advantage_sum: float = 0.0
    updated_at: float | None = None
    half_life: float = UTILITY_HALF_LIFE
    # Credited runs in a row, latest first, that earned less than their baseline: all
    # the history failing_streak needs (the row stays the same size however long it lives).
    _streak: int = field(default=0, repr=False)

    def estimate(self, now: float) -> float:
        """The posterior mean at ``now``: 0.5 is "earns what runs without it earn".

        Examples:
            >>> EpisodeUtility("e").estimate(0.0)
            0.5
        """
        decay = self.decay(now)
        return beta_mean(self.helped * decay, self.hurt * decay)

    def ranking_estimate(self, now: float) -> float:
        """What recall ranks it by at ``now``: shrunk harder towards 0.5 than `estimate`.

        `ranking_mean` of the decayed evidence.

        Examples:
            >>> row = EpisodeUtility("e", helped=0.1, hurt=0.9, credited_runs=1, updated_at=0.0)
            >>> round(row.estimate(0.0), 3), round(row.ranking_estimate(0.0), 3)
            (0.367, 0.476)
        """
        decay = self.decay(now)
        return ranking_mean(self.helped * decay, self.hurt * decay)

    def decay(self, now: float) -> float:
        """How much of the evidence is left at ``now`` (1 when never credited)."""
        at = self.updated_at
        return 1.0 if at is None else half_life_decay(now - at, self.half_life)

    @property
    def kind(self) -> SubjectKind:
        """``"lesson"`` or ``"episode"``: what was shown (no episode id looks like a lesson's)."""
        return "lesson" if self.episode_id.startswith(LESSON_ID_PREFIX) else "episode"

    @property
    def mean_reward(self) -> float | None:
        """Mean reward of the credited runs it was shown in, or ``None``."""
        return self.reward_sum / self.credited_runs if self.credited_runs else None

    @property
    def mean_advantage(self) -> float | None:
        """Mean advantage of those runs over runs without it, or ``None``."""
        return self.advantage_sum / self.credited_runs if self.credited_runs else None

    @property
    def failing_streak(self) -> int:
        """How many of its latest credited runs in a row earned less than their baseline."""
        return self._streak

    def upper_bound(self, now: float) -> float:
        """The one-sided 95% upper bound of its utility at ``now`` (normal approximation).

        Examples:
            >>> row = EpisodeUtility("e", hurt=5.0, credited_runs=5, updated_at=0.0)
            >>> round(row.upper_bound(0.0), 3), row.demoted(0.0)
            (0.346, True)
        """
        decay = self.decay(now)
        helped, hurt = PRIOR_HELPED + self.helped * decay, PRIOR_HURT + self.hurt * decay
        total = helped + hurt
        spread = math.sqrt(helped * hurt / (total * total * (total + 1.0)))
        return helped / total + PROBATION_Z * spread

    def demoted(self, now: float, min_runs: int = PROBATION_MIN_RUNS) -> bool:
        """On probation: credited in ``min_runs`` runs and confidently harmful.

        Its utility's 95% upper bound is below the prior's 0.5: the runs that showed
        it did worse than comparable runs without it, beyond chance. Recall stops
        showing it (unless pinned); evidence fading or later runs can lift it again.
        """
        return self.credited_runs >= min_runs and self.upper_bound(now) < 0.5

    def add(self, h: float, reward: float, advantage: float, at: float) -> None:
        """Add one credited run: ``h`` helped, ``1 - h`` hurt, over decayed evidence."""
        decay = self.decay(at)
        self.helped = self.helped * decay + h
        self.hurt = self.hurt * decay + (1.0 - h)
        self.updated_at = max(at, self.updated_at or at)
        self.credited_runs += 1
        self.reward_sum += reward
        self.advantage_sum += advantage
        self._streak = self._streak + 1 if advantage < 0 else 0


def lesson_evidence(
    row: EpisodeUtility, carried: tuple[float, float], created_at: float, now: float
) -> tuple[float, float]:
    """A lesson's (helped, hurt) evidence at ``now``, prior excluded.

    Its own credit (``row``), decayed, plus what a merge ``carried`` over into it,
    which fades from the lesson's creation on at the same half-life. Its utility is
    `beta_mean` of the two.
    """
    decay = row.decay(now)
    faded = half_life_decay(now - created_at, row.half_life)
    return (carried[0] * faded + row.helped * decay, carried[1] * faded + row.hurt * decay)


def utility_factor(estimate: float, power: float = UTILITY_POWER) -> float:
    """The factor utility scales a relevant episode's priority by: 1 at the prior's 0.5.

    Examples:
        >>> utility_factor(0.5), utility_factor(1.0), utility_factor(0.0)
        (1.0, 16.0, 0.0)
        >>> round(utility_factor(0.7), 2), round(utility_factor(0.4), 2)
        (3.84, 0.41)
    """
    return float((2.0 * min(1.0, max(0.0, estimate))) ** power)


# What the book's state keeps of a row, in order (the half-life is the book's own).
_ROW_STATE = [column.name for column in fields(EpisodeUtility) if column.name != "half_life"]

PRINCIPAL_POLICY_RUNS = 20
"""In a shared memory, one principal's runs that count as evidence for a presentation
policy at most (per category): a tenth of the chooser's window."""

_POLICY_KEY = "\x00policy\x00"  # keys the policy counts apart from episode ids


class UtilityBook:
    """Every episode's `EpisodeUtility`, kept up to date one event at a time.

    Credits must arrive in time order (`utility_table` sorts them); a run's
    advantage for an episode is its reward minus the mean reward of the same
    category's earlier credited runs that did not show the episode, shrunk towards a
    neutral 0.5 worth one run; once the category has `HOLDOUT_BASELINE_RUNS` holdout
    runs (shown no memory by chance), the mean reward of those instead: a causal
    baseline, not one confounded with what recall happens to retrieve.

    In a shared memory (``principal_runs`` set) one principal's runs (the outcome's
    ``by``) are evidence for an episode ``principal_runs`` times at most, and for a
    presentation policy `PRINCIPAL_POLICY_RUNS` times (per category): a principal
    cannot raise nor lower an episode, nor steer what the memory shows, with many runs
    of its own.

    Args:
        half_life: How fast evidence is forgotten, in seconds.
        principal_runs: The runs of one principal that count for one episode, or
            ``None``: every run counts (a memory that is not shared).
    """

    def __init__(
        self, half_life: float = UTILITY_HALF_LIFE, principal_runs: int | None = None
    ) -> None:
        self.half_life = half_life
        self.principal_runs = principal_runs
        # (episode, principal) -> that principal's runs counted for the episode.
        self._by: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.rows: dict[str, EpisodeUtility] = {}
        self._category: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        self._shown: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
        self._holdout: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        self.version = 0  # bumped by every credit: what was derived from the book is stale
        # (version, subject) of the latest credits: what changed since a version, for
        # whoever keeps something derived from a few rows (bounded: RAM stays flat).
        self._recent: deque[tuple[int, str]] = deque(maxlen=_RECENT_CHANGES)
        self._forgotten_before = 0  # a book restored from a state knows no change before it
        # The latest rewards with memory and without (holdout), per category and for all
        # (ALL_CATEGORIES): what the lift guard reads, bounded whatever the history.
        self._lift: defaultdict[str, tuple[deque[float], deque[float]]] = defaultdict(
            lambda: (deque(maxlen=LIFT_WINDOW_WITH_MEMORY), deque(maxlen=LIFT_WINDOW_HOLDOUT))
        )
        # The latest rewards of runs shown with each presentation policy, per category
        # and for all: what the presentation chooser reads, bounded the same way.
        self._presented: defaultdict[tuple[str, str], deque[float]] = defaultdict(
            lambda: deque(maxlen=PRESENTATION_WINDOW)
        )

    def row(self, episode_id: str) -> EpisodeUtility:
        """The episode's row, created empty (the prior) when it has none yet."""
        found = self.rows.get(episode_id)
        if found is None:
            found = self.rows[episode_id] = EpisodeUtility(episode_id, half_life=self.half_life)
        return found

    def add_injection(self, injection: Injection, shown_before: Iterable[str] = ()) -> None:
        """Count one more run shown each of ``injection``'s episodes.

        Args:
            injection: What one prompt of a run was shown.
            shown_before: Episodes earlier prompts of the same run were shown: not
                counted again (a run is one run, however many prompts showed it).
        """
        before = set(shown_before)
        for episode_id in dict.fromkeys(injection.episode_ids):
            if episode_id not in before:
                self.row(episode_id).injections += 1

    def add_credit(self, event: CreditEvent) -> None:
        """Credit ``event``'s reward to every episode its run was shown."""
        if event.reward is None:
            return
        self.version += 1
        reward, category = event.reward, event.category
        for key in (category, ALL_CATEGORIES):
            self._lift[key][1 if event.holdout else 0].append(reward)
            if event.policy is not None and not event.holdout and self._presents(key, event):
                self._presented[key, event.policy].append(reward)
        total, held = self._category[category], self._holdout[category]
        if event.holdout:
            held[0] += reward
            held[1] += 1.0
        for episode_id in event.episode_ids:
            if self.principal_runs is not None and event.by is not None:
                counted = self._by[(episode_id, event.by)]
                if counted >= self.principal_runs:
                    continue  # this principal has had its say on this episode
                self._by[(episode_id, event.by)] = counted + 1
            shown = self._shown[(episode_id, category)]
            if held[1] >= HOLDOUT_BASELINE_RUNS:
                # Runs that saw no memory by chance: a baseline nothing was chosen for.
                without = held
            else:
                without = [total[0] - shown[0], total[1] - shown[1]]
            # Shrunk towards the neutral 0.5, not the category's mean: that mean holds
            # the episode's own runs, so an episode shown in every run from the start
            # would be compared with itself and never move (demoted as fast as promoted).
            baseline = (without[0] + _NEUTRAL_REWARD * _BASELINE_PRIOR_WEIGHT) / (
                without[1] + _BASELINE_PRIOR_WEIGHT
            )
            advantage = reward - baseline
            h = min(1.0, max(0.0, 0.5 + ADVANTAGE_SCALE * advantage))
            self.row(episode_id).add(h, reward, advantage, event.at)
            self._recent.append((self.version, episode_id))
            shown[0] += reward
            shown[1] += 1.0
        total[0] += reward
        total[1] += 1.0

    def _presents(self, key: str, event: CreditEvent) -> bool:
        """Whether ``event`` counts as evidence for its policy (a shared memory caps it)."""
        if self.principal_runs is None or event.by is None:
            return True
        counted = (f"{_POLICY_KEY}{key}\x00{event.policy}", event.by)
        if self._by[counted] >= PRINCIPAL_POLICY_RUNS:
            return False
        self._by[counted] += 1
        return True

    def forget(self, subjects: Iterable[str]) -> None:
        """Drop what the book counted for ``subjects``: erased episodes (or lessons).

        The book is then the one a replay of the redacted journal builds (the same
        runs and rewards, without the subjects' ids): each episode's row and
        per-category sums depend on its own runs only, so only the subjects' go.

        Examples:
            >>> book = UtilityBook()
            >>> book.add_credit(CreditEvent("r1", 1.0, ("a", "b"), "debugging", at=0.0))
            >>> book.forget(["a"])
            >>> sorted(book.rows), book.changed_since(1)
            (['b'], {'a'})
        """
        gone = set(subjects)
        dropped = [subject for subject in gone if self.rows.pop(subject, None) is not None]
        for key in [key for key in self._shown if key[0] in gone]:
            del self._shown[key]
        for counted in [counted for counted in self._by if counted[0] in gone]:
            del self._by[counted]
        if dropped:
            self.version += 1
            self._recent.extend((self.version, subject) for subject in sorted(dropped))

    def lift_window(self, category: str = ALL_CATEGORIES) -> tuple[list[float], list[float]]:
        """The latest rewards of runs with memory and of holdout runs in ``category``.

        At most `LIFT_WINDOW_WITH_MEMORY` and `LIFT_WINDOW_HOLDOUT`, oldest
        first; `ALL_CATEGORIES` for every category.

        Examples:
            >>> book = UtilityBook()
            >>> book.add_credit(CreditEvent("r1", 0.9, ("a",), "debugging", at=0.0))
            >>> book.add_credit(CreditEvent("r2", 0.4, (), "debugging", at=1.0, holdout=True))
            >>> book.lift_window("debugging"), book.lift_window("testing")
            (([0.9], [0.4]), ([], []))
        """
        found = self._lift.get(category)
        return ([], []) if found is None else (list(found[0]), list(found[1]))

    def presented(self, category: str = ALL_CATEGORIES) -> dict[str, list[float]]:
        """The latest rewards of runs in ``category`` shown with each presentation policy.

        At most `PRESENTATION_WINDOW` a policy, oldest first; `ALL_CATEGORIES`
        for every category.

        Examples:
            >>> book = UtilityBook()
            >>> book.add_credit(CreditEvent("r1", 0.9, ("a",), "debugging", 0.0, policy="ranked"))
            >>> book.presented("debugging"), book.presented("testing")
            ({'ranked': [0.9]}, {})
        """
        return {
            policy: list(window)
            for (key, policy), window in sorted(self._presented.items())
            if key == category
        }

    def estimate(self, episode_id: str, now: float) -> float:
        """The episode's utility estimate at ``now`` (0.5, the prior, when never credited)."""
        found = self.rows.get(episode_id)
        return 0.5 if found is None else found.estimate(now)

    def changed_since(self, version: int) -> set[str] | None:
        """The subjects credited after ``version``; ``None`` when that is too long ago to say.

        Examples:
            >>> book = UtilityBook()
            >>> book.add_credit(CreditEvent("r1", 1.0, ("a",), "debugging", at=0.0))
            >>> book.changed_since(0), book.changed_since(1)
            ({'a'}, set())
        """
        if version >= self.version:
            return set()
        if version < self._forgotten_before:
            return None
        if len(self._recent) == self._recent.maxlen and self._recent[0][0] > version:
            return None
        return {subject for at, subject in self._recent if at > version}

    def to_state(self) -> dict[str, Any]:
        """Everything the book has counted, as JSON-ready data (see `from_state`).

        Examples:
            >>> book = UtilityBook(3600.0)
            >>> book.add_credit(CreditEvent("r1", 1.0, ("a",), "debugging", at=0.0))
            >>> again = UtilityBook.from_state(book.to_state())
            >>> again.rows == book.rows, again.version, again.half_life
            (True, 1, 3600.0)
        """
        state: dict[str, Any] = {
            "half_life": self.half_life,
            "version": self.version,
            "rows": [[getattr(row, name) for name in _ROW_STATE] for row in self.rows.values()],
            "category": sorted([key, *total] for key, total in self._category.items()),
            "holdout": sorted([key, *total] for key, total in self._holdout.items()),
            "shown": sorted([*key, *total] for key, total in self._shown.items()),
            "lift": sorted(
                [key, list(shown), list(held)] for key, (shown, held) in self._lift.items()
            ),
            "presented": sorted(
                [key, policy, list(window)] for (key, policy), window in self._presented.items()
            ),
        }
        if self.principal_runs is not None or self._by:  # a shared memory's book
            state["principal_runs"] = self.principal_runs
            state["by"] = sorted([*key, count] for key, count in self._by.items())
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> UtilityBook:
        """The book `to_state` described, ready to count on.

        Raises:
            KeyError, TypeError, ValueError: ``state`` is not what `to_state` wrote.
        """
        cap = state.get("principal_runs")  # absent before shared memories
        book = cls(float(state["half_life"]), None if cap is None else int(cap))
        book.version = book._forgotten_before = int(state["version"])
        for episode_id, principal, count in state.get("by", ()):
            book._by[(str(episode_id), str(principal))] = int(count)
        for episode_id, helped, hurt, shown, runs, rewards, advantages, at, streak in state["rows"]:
            evidence = (float(helped), float(hurt), int(shown), int(runs))
            totals = (float(rewards), float(advantages), None if at is None else float(at))
            row = EpisodeUtility(str(episode_id), *evidence, *totals, book.half_life, int(streak))
            book.rows[row.episode_id] = row
        for name, sums in (("category", book._category), ("holdout", book._holdout)):
            for category, total, count in state[name]:
                sums[str(category)] = [float(total), float(count)]
        for episode_id, category, total, count in state["shown"]:
            book._shown[(str(episode_id), str(category))] = [float(total), float(count)]
        for key, *rewards in state.get("lift", ()):  # absent from states written before it
            for window, values in zip(book._lift[str(key)], rewards, strict=True):
                window.extend(float(r) for r in values)
        for key, policy, rewards in state.get("presented", ()):  # absent before policies
            book._presented[str(key), str(policy)].extend(float(r) for r in rewards)
        return book


def utility_table(
    credits: Iterable[CreditEvent],
    injections: Iterable[Injection] = (),
    *,
    half_life: float = UTILITY_HALF_LIFE,
) -> dict[str, EpisodeUtility]:
    """Every credited or injected episode's `EpisodeUtility`, from the journal.

    Credits are replayed in time order (ties by run id), so the table is the same
    whichever process reads the journal (see `UtilityBook`).

    Args:
        credits: The outcome events; those closed without credit count nothing.
        injections: The injection records, counted in ``injections``.
        half_life: How fast evidence is forgotten, in seconds.
    """
    return book_from(credits, injections, half_life=half_life).rows


def book_from(
    credits: Iterable[CreditEvent],
    injections: Iterable[Injection] = (),
    *,
    half_life: float = UTILITY_HALF_LIFE,
    principal_runs: int | None = None,
) -> UtilityBook:
    """A `UtilityBook` holding every event given, credits in time order."""
    book = UtilityBook(half_life, principal_runs)
    shown: dict[str, set[str]] = defaultdict(set)
    for injection in injections:
        book.add_injection(injection, shown[injection.run_id])
        shown[injection.run_id].update(injection.episode_ids)
    for event in sorted(credits, key=lambda e: (e.at, e.run_id)):
        book.add_credit(event)
    return book
