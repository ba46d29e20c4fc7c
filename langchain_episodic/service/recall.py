"""Recall for one namespace: embed once, search, rank, explain.

Candidates come from the store by similarity (quarantined ones left out), ranking is
:func:`~langchain_episodic.scoring.ranking.rank_candidates` (pure), and only the
winners' episodes are parsed. The same query vector finds the strategy evidence
(``neighbours``) and the lessons.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection

import numpy as np
from numpy.typing import NDArray

from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodeValidationError, MalformedRecordWarning
from langchain_episodic.model.episode import TaskDescription
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.model.lesson import Lesson
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import Neighbour, RecallReport, Rejected, rank_candidates
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import CreditLog
from langchain_episodic.service.lessons import Lessons
from langchain_episodic.stores.base import StoredHit

__all__ = ["Recall"]

# More candidates than any store holds; vector databases refuse counts past 32 bits.
_MAX_CANDIDATES = 2**31 - 1


def _task_text(hit: StoredHit) -> str:
    task = hit.data.get("task")
    description = task.get("description") if isinstance(task, dict) else None
    return description if isinstance(description, str) else ""


def _strategy_of(hit: StoredHit) -> str:
    strategy = hit.data.get("strategy_used")
    return strategy if isinstance(strategy, str) else ""


class Recall:
    """Search and rank one namespace's episodes (and lessons) for a task.

    Args:
        context: The namespace.
        quarantined: Returns the ids quarantined now.
        demoted: Returns the ids on probation now: left out when the ranking uses
            credit (``ranking="utility"``, or ``"relevance"`` with ``use_utility``),
            so that a recall without credit stays the plain recall.
        credit: The credit journal (utility scales the relevance ranking).
        lessons: The namespace's lessons.
        floor: The relevance floor of the memory's embedder.
    """

    def __init__(
        self,
        context: NamespaceContext,
        quarantined: Callable[[], Collection[str]],
        credit: CreditLog,
        lessons: Lessons,
        floor: Callable[[], float],
        demoted: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        self._context = context
        self._quarantined = quarantined
        self._demoted = demoted
        self._credit = credit
        self._lessons = lessons
        self._floor = floor

    def report(
        self,
        task: TaskDescription,
        options: RecallOptions,
        evidence_k: int = 0,
        lesson_k: int = 0,
    ) -> RecallReport:
        """The results for ``task``, what was turned away and why, neighbours and lessons.

        Raises:
            TypeError: ``options`` is not a :class:`RecallOptions`.
            EpisodicValueError: ``evidence_k`` or ``lesson_k`` is negative, or the
                embedding is unusable.
        """
        if not isinstance(options, RecallOptions):
            msg = f"options={options!r} is invalid: must be a RecallOptions"
            raise TypeError(msg)
        check_int("evidence_k", evidence_k, 0)
        check_int("lesson_k", lesson_k, 0)
        text = task.description
        now = self._context.now() if options.current_time is None else options.current_time
        vector = self._context.embed_query(text)
        book = self._credit.book
        uses_credit = options.ranking == "utility" or (
            options.use_utility and options.ranking == "relevance"
        )
        credited = uses_credit and (options.ranking == "utility" or bool(book.rows))
        fetch_k = options.fetch_count
        hidden: Collection[str] = self._quarantined()
        if uses_credit and (on_probation := self._demoted()):
            hidden = {*hidden, *on_probation}
        hits = self.search(vector, max(fetch_k, evidence_k), options.filters, text, hidden)
        default_floor = self._floor()
        floor = options.relevance_floor(default_floor)
        neighbours = tuple(
            Neighbour(hit.episode_id, hit.similarity, _strategy_of(hit), hit.outcome)
            for hit in hits[:evidence_k]
            if hit.similarity >= floor
        )
        # Rank on the stored scalars, then parse only the winners' episodes.
        ranked = rank_candidates(
            hits[:fetch_k],
            now,
            options,
            default_floor,
            (lambda hit: book.estimate(hit.episode_id, now)) if credited else None,
        )
        results: list[PrioritizedResult] = []
        for priority, hit, relevant in ranked.ordered:
            if len(results) == options.top_k:
                break
            try:
                episode = hit.episode()
            except EpisodeValidationError as error:
                # Written by something else into our collection: skip it, say which.
                warnings.warn(MalformedRecordWarning(hit.record_id, str(error)), stacklevel=4)
                continue
            results.append(PrioritizedResult(episode, hit.similarity, priority, relevant))
        rejected = tuple(
            Rejected(hit.episode_id, _task_text(hit), hit.similarity, reason)
            for hit, reason in ranked.rejected
        )
        utility = {
            r.episode.episode_id: book.rows[r.episode.episode_id]
            for r in results
            if credited and r.episode.episode_id in book.rows
        }
        lessons = self._lessons.near(vector, lesson_k, floor) if lesson_k else ()
        return RecallReport(
            tuple(results),
            rejected,
            ranked.threshold,
            options.ranking,
            neighbours,
            utility,
            now,
            lessons,
        )

    def lessons(self, task: TaskDescription, k: int) -> tuple[Lesson, ...]:
        """The ``k`` lessons worth showing for ``task``, at the memory's relevance floor."""
        check_int("k", k, 1)
        return self._lessons.near(self._context.embed_query(task.description), k, self._floor())

    def search(
        self,
        vector: NDArray[np.float32],
        fetch_k: int,
        filters: EpisodeFilter | None,
        query_text: str | None,
        hidden: Collection[str] | None = None,
    ) -> list[StoredHit]:
        """The ``fetch_k`` nearest stored hits not ``hidden`` (default: not quarantined)."""
        # Hidden records stay stored; asking for that many more candidates and
        # dropping them returns exactly the fetch_k nearest of the others.
        quarantined = self._quarantined() if hidden is None else hidden
        wanted = min(fetch_k + len(quarantined), _MAX_CANDIDATES)
        context = self._context
        hits = context.store.search_hits(
            context.namespace, vector, wanted, filters, query_text=query_text
        )
        if quarantined:
            hits = [hit for hit in hits if hit.episode_id not in quarantined]
        return hits[:fetch_k]
