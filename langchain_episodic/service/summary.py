"""The per-category summary of a namespace, persisted beside its episodes.

The summary holds the episode count and running per-category tallies behind
`skill_profiles`, so opening a memory reads
one small state string instead of every episode. It is saved lazily (every
`SUMMARY_INTERVAL_EPISODES` episodes or `SUMMARY_INTERVAL_SECONDS`
seconds); a summary that lags behind costs only a catch-up count of the newer
episodes on the next open, and one that does not add up is recounted.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_episodic.model.episode import Episode, OutcomeStatus, TaskCategory
from langchain_episodic.scoring.skills import SkillTally, tally_episodes
from langchain_episodic.stores.base import EpisodeStore

__all__ = ["SUMMARY_INTERVAL_EPISODES", "SUMMARY_INTERVAL_SECONDS", "Summary"]

_COUNT_KEY = "count"
_NEXT_KEY = "next"
_SKIPPED_KEY = "skipped"
_SUMMARY_STATE = "summary"
SUMMARY_INTERVAL_EPISODES = 1000
"""Save the per-category summary at least every this many recorded episodes..."""
SUMMARY_INTERVAL_SECONDS = 5.0
"""...or when this many seconds have passed since it was last saved."""
_TALLY_FIELDS = ("total", "successes", "reward_sum", "iterations_sum")


def _tallies_from_summary(summary: Mapping[str, int | float]) -> dict[TaskCategory, SkillTally]:
    tallies: dict[TaskCategory, SkillTally] = {}
    for category in TaskCategory:
        values = [summary.get(f"{category.value}.{field}") for field in _TALLY_FIELDS]
        if all(value is not None for value in values):
            total, successes, reward_sum, iterations = (value or 0 for value in values)
            tallies[category] = SkillTally(
                int(total), int(successes), float(reward_sum), int(iterations)
            )
    return tallies


def _read_summary(store: EpisodeStore, namespace: str) -> dict[str, int | float]:
    packed = store.read_state(namespace, _SUMMARY_STATE)
    try:
        summary = json.loads(packed) if packed is not None else {}
    except json.JSONDecodeError:
        return {}
    if not isinstance(summary, dict):
        return {}
    return {
        str(key): value
        for key, value in summary.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }


def _write_summary(
    store: EpisodeStore,
    namespace: str,
    count: int,
    tallies: Mapping[TaskCategory, SkillTally] | None,
    next_seq: int,
) -> None:
    """Save the summary; ``tallies=None``: one that does not add up (the next open recounts)."""
    # Records that are not readable episodes count but are not tallied; saying how many
    # keeps the summary consistent, so the next open does not recount.
    tallied = {} if tallies is None else tallies
    skipped = -1 if tallies is None else count - sum(tally.total for tally in tallied.values())
    summary: dict[str, Any] = {_COUNT_KEY: count, _SKIPPED_KEY: skipped}
    if next_seq != count:  # written only once deletion left gaps in the numbers
        summary[_NEXT_KEY] = next_seq
    for category, tally in tallied.items():
        for field in _TALLY_FIELDS:
            summary[f"{category.value}.{field}"] = getattr(tally, field)
    store.write_state(namespace, _SUMMARY_STATE, json.dumps(summary, separators=(",", ":")))


def _load(store: EpisodeStore, namespace: str) -> tuple[int, dict[TaskCategory, SkillTally], int]:
    stored = _read_summary(store, namespace)
    actual = store.count(namespace)
    counted = stored.get(_COUNT_KEY)
    skipped = stored.get(_SKIPPED_KEY, 0)
    saved_next = stored.get(_NEXT_KEY, counted)
    tallies = _tallies_from_summary(stored)
    consistent = (
        isinstance(counted, int)
        and isinstance(skipped, int)
        and isinstance(saved_next, int)
        and 0 <= skipped <= counted <= saved_next
        and counted == skipped + sum(t.total for t in tallies.values())
    )
    # The next record number: the count, unless deletion left gaps (then saved).
    next_seq = max(saved_next, actual) if isinstance(saved_next, int) else actual
    if consistent and counted == actual:
        return actual, tallies, next_seq
    caught_up = None
    if consistent and isinstance(counted, int) and isinstance(saved_next, int) and counted < actual:
        # The summary is written lazily: count only what was recorded after it.
        newer = _Counted(store.iter_episodes(namespace, start=saved_next))
        caught_up = tally_episodes(newer, tallies)
        if counted + newer.count != actual:
            caught_up = None  # several writer processes numbered records alike
        next_seq = max(saved_next + newer.count, actual)
    # Otherwise missing, corrupt, ahead of the store, or written by several processes
    # (whose record numbers overlap): recount once, streaming.
    tallies = caught_up if caught_up is not None else tally_episodes(store.iter_episodes(namespace))
    if actual:
        _write_summary(store, namespace, actual, tallies, next_seq)
    return actual, tallies, next_seq


class _Counted(Iterator[Episode]):
    """Passes episodes through, counting them."""

    def __init__(self, episodes: Iterator[Episode]) -> None:
        self._episodes = episodes
        self.count = 0

    def __next__(self) -> Episode:
        episode = next(self._episodes)
        self.count += 1
        return episode


class Summary:
    """Episode count and per-category tallies of a namespace, saved to the store lazily.

    Saving after every record would add a round trip per call; a summary that lags
    behind costs only a catch-up count of the newer episodes on the next open.
    """

    def __init__(
        self,
        store: EpisodeStore,
        namespace: str,
        count: int,
        tallies: dict[TaskCategory, SkillTally],
        next_seq: int | None = None,
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.count = count
        self.tallies = tallies
        # The number the next record gets: the count, until deletion leaves gaps.
        self.next_seq = count if next_seq is None else next_seq
        self._saved_count = count
        self._saved_at = time.monotonic()

    @classmethod
    def open(cls, store: EpisodeStore, namespace: str) -> Summary:
        """Read the namespace's saved summary, catching up or recounting as needed."""
        return cls(store, namespace, *_load(store, namespace))

    def add(self, episodes: Sequence[Episode]) -> None:
        """Count newly recorded episodes, and save if due."""
        self.count += len(episodes)
        self.next_seq += len(episodes)
        self.tallies = tally_episodes(episodes, self.tallies)
        self.save()

    def remove(self, episodes: Sequence[Episode]) -> None:
        """Uncount erased episodes (their numbers are not given again), and save now."""
        if not episodes:
            return
        self.count -= len(episodes)
        tallies = dict(self.tallies)
        for episode in episodes:
            category = episode.task.category
            tally = tallies.get(category, SkillTally())
            tallies[category] = SkillTally(
                total=tally.total - 1,
                successes=tally.successes - (episode.outcome is OutcomeStatus.SUCCESS),
                reward_sum=tally.reward_sum - episode.feedback.reward,
                iterations_sum=tally.iterations_sum - episode.iterations,
            )
            if tallies[category].total <= 0:
                del tallies[category]
        self.tallies = tallies
        self._saved_count = -1  # whatever was saved counted them: save now
        # Without counting the store (a count costs a scan of the namespace, the dearest
        # part of a small erasure at 100k episodes): an open checks a saved summary
        # against the store's count and catches up or recounts what does not add up,
        # which also covers another writer's records the check below would have caught.
        self.save(force=True, counted=False)

    def save(self, *, force: bool = False, counted: bool = True) -> None:
        """Write the summary if it is due (or ``force``) and anything is unsaved.

        ``counted``: compare with the store's count first, and leave a summary that
        does not add up when another writer recorded too (the next open recounts).
        """
        pending = self.count - self._saved_count
        due = time.monotonic() - self._saved_at >= SUMMARY_INTERVAL_SECONDS
        if pending and (force or due or pending >= SUMMARY_INTERVAL_EPISODES):
            actual = self.store.count(self.namespace) if counted else self.count
            if actual == self.count:
                _write_summary(self.store, self.namespace, self.count, self.tallies, self.next_seq)
            else:
                # Another writer (a second memory on this namespace) recorded too: these
                # tallies miss its episodes. Leave a summary that does not add up, so the
                # next open recounts instead of trusting either writer's tallies.
                _write_summary(self.store, self.namespace, actual, None, max(self.next_seq, actual))
            self._saved_count = self.count
            self._saved_at = time.monotonic()

    def save_quietly(self) -> None:
        """`save` now, ignoring failures (for ``weakref.finalize``)."""
        # Runs from weakref.finalize (collection or interpreter exit), when the store may
        # already be closed: a failure here only means a catch-up on the next open.
        with contextlib.suppress(Exception):
            self.save(force=True)
