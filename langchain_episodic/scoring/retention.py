"""Retention: how much a namespace keeps, and which episodes go first when it keeps less.

Pure logic: `plan_prune` takes the episodes' ids and timestamps and their
credit (`EpisodeUtility`), and returns which
to remove; `prune` removes them through an
erasure (`langchain_episodic.service.erasure`).

What goes first is the least valuable: an episode that never helped a run before one
that did, then the lower utility, then the older. A pinned or quarantined episode is
never pruned: it is counted in `PrunePlan.protected` instead, so the plan says
why a namespace stays above its cap.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.scoring.credit import EpisodeUtility
from langchain_episodic.scoring.decay import episode_age

__all__ = ["PRUNE_SLACK", "PrunePlan", "Retention", "plan_prune"]

PRUNE_SLACK = 0.1
"""With ``on_write``, a namespace is pruned once it holds this fraction more than its
cap (at least one episode more), down to the cap: a prune ranks every episode (from the
timestamps the memory keeps as it writes, not a read of the store) and erases the excess
in one erasure, so it is paid once per tenth of the cap written, not on every write."""


@dataclass(frozen=True)
class Retention:
    """How much a namespace keeps: a maximum age and/or a maximum number of episodes.

    Attributes:
        max_age: Seconds; an episode older than this (by its ``timestamp``, against
            the memory's clock) is removed. ``None``: no age limit.
        max_episodes: At most this many episodes are kept; the least valuable go
            first. ``None``: no cap.
        on_write: Prune after writes too (see `PRUNE_SLACK`), not only when
            `prune` is called.

    Examples:
        >>> Retention(max_age=90 * 86_400, max_episodes=10_000)
        Retention(max_age=7776000, max_episodes=10000, on_write=False)

    Raises:
        EpisodicValueError: Neither limit is given, ``max_age`` is not positive, or
            ``max_episodes`` is below 1 (a policy that keeps nothing is
            ``memory.forgetting.forget_all``, said explicitly).
    """

    max_age: float | None = None
    max_episodes: int | None = None
    on_write: bool = False

    def __post_init__(self) -> None:
        if self.max_age is None and self.max_episodes is None:
            msg = "Retention() is invalid: give max_age (seconds), max_episodes, or both"
            raise EpisodicValueError(msg)
        if self.max_age is not None:
            check_number("max_age", self.max_age, 0.0)
            if self.max_age <= 0:
                msg = (
                    f"max_age={self.max_age!r} is invalid: must be positive (removing every "
                    "episode is memory.forgetting.forget_all, said explicitly)"
                )
                raise EpisodicValueError(msg)
        if self.max_episodes is not None:
            check_int("max_episodes", self.max_episodes, 1)
        if not isinstance(self.on_write, bool):
            msg = f"on_write={self.on_write!r} is invalid: must be True or False"
            raise EpisodicValueError(msg)

    def due(self, count: int, written_since: int) -> bool:
        """Whether a prune is due after writes (``on_write``), given the count now."""
        if not self.on_write:
            return False
        if self.max_episodes is not None:
            slack = max(1, int(self.max_episodes * PRUNE_SLACK))
            if count >= self.max_episodes + slack:
                return True
            if self.max_age is None:
                return False
        return written_since >= max(1, int((self.max_episodes or 1000) * PRUNE_SLACK))


@dataclass(frozen=True)
class PrunePlan:
    """Which episodes a retention policy removes now.

    Attributes:
        expired: Older than ``max_age``, oldest first.
        over_cap: Beyond ``max_episodes`` after the expired ones, least valuable first.
        protected: Pinned or quarantined episodes the policy would have removed and
            keeps.
        kept: How many episodes remain afterwards.
    """

    expired: tuple[str, ...]
    over_cap: tuple[str, ...]
    protected: tuple[str, ...]
    kept: int

    @property
    def episode_ids(self) -> tuple[str, ...]:
        """Every episode the plan removes."""
        return self.expired + self.over_cap


def value_key(
    episode_id: str, timestamp: float, row: EpisodeUtility | None, now: float
) -> tuple[bool, float, float, str]:
    """Sorts the least valuable first: never helpful, then low utility, then old.

    Old by `episode_age`: a date far ahead of
    ``now`` sorts as old as it is far ahead.
    """
    estimate = 0.5 if row is None else row.estimate(now)
    helped = row is not None and row.credited_runs > 0 and estimate > 0.5
    return (helped, estimate, -episode_age(now, timestamp), episode_id)


def plan_prune(
    episodes: Sequence[tuple[str, float]],
    utilities: Mapping[str, EpisodeUtility],
    protected: Collection[str],
    retention: Retention,
    now: float,
) -> PrunePlan:
    """Which of ``episodes`` (``(episode_id, timestamp)``) ``retention`` removes at ``now``.

    Examples:
        >>> plan = plan_prune([("a", 0.0), ("b", 50.0), ("c", 90.0)], {}, (),
        ...                   Retention(max_age=60.0), now=100.0)
        >>> plan.expired, plan.kept
        (('a',), 2)
        >>> plan_prune([("a", 0.0), ("b", 50.0), ("c", 90.0)], {}, {"a"},
        ...            Retention(max_episodes=2), now=100.0).episode_ids
        ('b',)
    """
    shielded: list[str] = []
    expired: list[tuple[float, str]] = []
    alive: list[tuple[str, float]] = []
    for episode_id, timestamp in episodes:
        too_old = retention.max_age is not None and episode_age(now, timestamp) > retention.max_age
        if too_old and episode_id not in protected:
            expired.append((timestamp, episode_id))
            continue
        if too_old:
            shielded.append(episode_id)
        alive.append((episode_id, timestamp))
    over_cap: list[str] = []
    if retention.max_episodes is not None and len(alive) > retention.max_episodes:
        excess = len(alive) - retention.max_episodes
        ranked = sorted(
            value_key(i, t, utilities.get(i), now) for i, t in alive if i not in protected
        )
        over_cap = [key[3] for key in ranked[:excess]]
        if len(over_cap) < excess:  # only protected ones are left to remove
            shielded.extend(i for i, _ in alive if i in protected and i not in shielded)
    return PrunePlan(
        expired=tuple(i for _, i in sorted(expired)),
        over_cap=tuple(over_cap),
        protected=tuple(shielded),
        kept=len(episodes) - len(expired) - len(over_cap),
    )
