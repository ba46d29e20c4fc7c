"""Writing episodes: validated as a batch, checked against the store, embedded once.

Episodes are immutable: an identical episode recorded again is skipped; a different
one under a stored id is refused (`EpisodeConflictError`)
before anything is written. A new episode whose ``source.run_id`` names a run closes
that run with the episode's reward (`close`).

A new episode whose task names no category (``unknown``) is stored with the category
its text says (`Recall.with_categories`, the rule the middleware reads tasks by), unless
the memory or the call turns that off. The same episode recorded again, without its
category, is the one stored: a no-op, never a conflict.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.errors import (
    EpisodeConflictError,
    EpisodeForgottenError,
    EpisodicValueError,
)
from langchain_episodic.model.episode import Episode, TaskCategory, TaskDescription
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit import Runs
from langchain_episodic.service.erasure import Eraser
from langchain_episodic.service.summary import Summary
from langchain_episodic.stores.codec import collect_malformed

__all__ = ["EpisodeWriter"]


class EpisodeWriter:
    """Stores episodes of one namespace in both tiers and keeps the summary current.

    Args:
        context: The namespace.
        summary: Its per-category summary (gives the running count).
        window: The short-term window.
        runs: Its credit loop, to close the runs new episodes name.
        eraser: Its erasures: an erased id is not stored again, and the retention
            policy may prune after a write.
        categorize: Gives the tasks without a category the one their text says (a
            batch at once, with their descriptions' vectors); ``None``: episodes are
            stored with the category given.
    """

    def __init__(
        self,
        context: NamespaceContext,
        summary: Summary,
        window: deque[Episode],
        runs: Runs,
        eraser: Eraser,
        categorize: Callable[
            [Sequence[TaskDescription], NDArray[np.float32]], list[TaskDescription]
        ]
        | None = None,
    ) -> None:
        self._context = context
        self.categorize = categorize
        self._summary = summary
        self._window = window
        self._runs = runs
        self._eraser = eraser
        # The ids being written now: a write checks its ids against the store after
        # any write of the same ids in this memory has finished.
        self._claims: set[str] = set()
        self._claims_changed = threading.Condition()
        # A store that numbers records itself under its own lock takes batches at once
        # (``concurrent_adds``); any other gets one at a time, numbered from the count.
        self._adding: AbstractContextManager[object] = (
            nullcontext()
            if getattr(context.store, "concurrent_adds", False) is True
            else threading.Lock()
        )

    def write(
        self, batch: Sequence[Episode], *, in_time_order: bool, infer_category: bool = True
    ) -> int:
        """Store the new episodes of ``batch``; how many were new.

        ``infer_category=False`` stores an ``unknown`` category as it is (so does a
        writer without ``categorize``).

        Raises:
            TypeError: An item is not an `Episode`.
            EpisodeConflictError: Two different episodes share an ``episode_id``, in
                the batch or against the store. Nothing is written.
            EpisodicValueError: A stored record that is no episode holds an id, or
                the embeddings model returned unusable vectors. Nothing is written.
            EpisodeForgottenError: An erasure removed an episode under one of the
                ids. Nothing is written (checked again after writing: an erasure by
                another process in between removes what was written, then raises).
        """
        context = self._context
        with self._claimed(episode.episode_id for episode in batch if isinstance(episode, Episode)):
            # Reads and embedding run at once with other runs' writes: only a write of
            # the same ids waits (the claim), so each id is checked after the last.
            new = self._new(batch, in_time_order=in_time_order)
            if not new:
                return 0
            ids = [episode.episode_id for episode in new]
            self._eraser.refuse_forgotten(ids)
            vectors = context.embed_documents(
                [episode.task.description for episode in new],
                [f"episode_id={e.episode_id!r}" for e in new],
            )
            if infer_category and self.categorize is not None:
                tasks = self.categorize([episode.task for episode in new], vectors)
                new = [
                    episode if task is episode.task else dataclasses.replace(episode, task=task)
                    for episode, task in zip(new, tasks, strict=True)
                ]
            # Records share the writes lock (an erasure of this memory's holds it alone);
            # the memory's lock, which runs' counting and credit take too, is held only
            # to count what was written, not across the store's round trip.
            with context.writes.shared():
                with self._adding:
                    context.store.add(
                        context.namespace, new, vectors, first_seq=self._summary.next_seq
                    )
                    with context.lock:
                        self._summary.add(new)
                        self._window.extend(new)
                # Another process's erasure may have tombstoned an id since it was
                # checked: looked at again once written (still under the writes lock, so
                # no erasure of this memory's meets the write half counted), and what it
                # names is removed again.
                late = self._eraser.forgotten(ids)
                if late:
                    new = self._eraser.remove_late(new, late)
        for episode in new:
            if episode.source is not None and episode.source.run_id is not None:
                # by its principal: in a shared memory, no evidence for its own episodes
                self._runs.close(
                    episode.source.run_id, episode.feedback.reward, by=episode.source.principal
                )
        if late:
            raise EpisodeForgottenError(context.namespace, late)
        if self._eraser.noted_write(new):
            self._eraser.prune()
        return len(new)

    @contextmanager
    def _claimed(self, episode_ids: Iterable[str]) -> Iterator[None]:
        """Hold ``episode_ids`` for one write: another write of any of them waits."""
        wanted = set(episode_ids)
        with self._claims_changed:
            self._claims_changed.wait_for(lambda: self._claims.isdisjoint(wanted))
            self._claims |= wanted
        try:
            yield
        finally:
            with self._claims_changed:
                self._claims -= wanted
                self._claims_changed.notify_all()

    def _new(self, batch: Sequence[Episode], *, in_time_order: bool) -> list[Episode]:
        """The episodes of ``batch`` the store does not hold yet, checked."""
        namespace = self._context.namespace
        unique: dict[str, Episode] = {}
        for index, episode in enumerate(batch):
            if not isinstance(episode, Episode):
                msg = f"episodes[{index}]={episode!r} is not an Episode"
                raise TypeError(msg)
            seen = unique.setdefault(episode.episode_id, episode)
            if seen != episode:
                raise EpisodeConflictError(
                    episode.episode_id, namespace, seen.differences(episode), in_batch=True
                )
        if not unique:
            return []
        with collect_malformed() as malformed:
            stored = self._context.store.get(namespace, list(unique))
        occupied = [warning for warning in malformed if warning.record_id in unique]
        if occupied:
            # A store keeps the first record under an id: writing would do nothing.
            msg = (
                f"episode_id={occupied[0].record_id!r} is held in namespace="
                f"{namespace!r} by a stored record that is not a readable episode "
                f"({occupied[0].reason}); nothing was written. Find such records with "
                "'langchain-episodic verify' and delete them, or use another episode_id"
            )
            raise EpisodicValueError(msg)
        for episode_id, existing in stored.items():
            given = unique[episode_id]
            if not _same(existing, given):
                if given.task.category is TaskCategory.UNKNOWN:  # not a difference: unsaid
                    task = dataclasses.replace(given.task, category=existing.task.category)
                    given = dataclasses.replace(given, task=task)
                differences = existing.differences(given)
                raise EpisodeConflictError(episode_id, namespace, differences)
        new = [episode for episode_id, episode in unique.items() if episode_id not in stored]
        if in_time_order:
            new.sort(key=lambda episode: episode.timestamp)
        return new


def _same(stored: Episode, given: Episode) -> bool:
    """Whether ``given`` is the ``stored`` episode (its category left out, or the same)."""
    if stored == given:
        return True
    if given.task.category is not TaskCategory.UNKNOWN:
        return False
    return (
        dataclasses.replace(given, task=stored.task) == stored
        and dataclasses.replace(stored.task, category=TaskCategory.UNKNOWN) == given.task
    )
