"""``memory.lessons``: distilled lessons, recalled beside the episodes they came from.

Lessons of one namespace are added with their lineage checked, revised, merged and
recalled.

Lessons are kept in the journal (`lesson_log`); what a
lesson is and how it is consolidated is `langchain_episodic.model.lesson`; how
lessons are ranked for a prompt is `top_lessons`.
Trust follows lineage: a lesson whose source is quarantined is quarantined with it.

Recall does not scan the lessons: the active ones, their unit vectors stacked in a
`LessonMatrix` and what their utility
is made of are kept in an `_ActiveIndex`, built again only when the lessons, the
quarantine or the credit change. A replay then bounds every lesson's similarity cheaply
and scores exactly only the lessons that could be among the best.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import hashlib
import math
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from langchain_episodic._async import async_twin
from langchain_episodic._validation import check_int, check_number
from langchain_episodic.embeddings.fingerprint import fingerprint_embeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import TaskDescription, as_task
from langchain_episodic.model.lesson import (
    MERGE_SIMILARITY,
    Lesson,
    LessonBook,
    LessonStatus,
    lesson_status,
    merge_lessons,
    plan_consolidation,
)
from langchain_episodic.scoring.credit import lesson_evidence, utility_factor
from langchain_episodic.scoring.decay import (
    RANKING_PRIOR,
    beta_mean,
    half_life_decay,
    ranking_mean,
)
from langchain_episodic.scoring.lesson_search import CreditFactors, LessonMatrix
from langchain_episodic.scoring.priority import check_time
from langchain_episodic.scoring.ranking import PLAIN_FLOATS_UP_TO, utility_factors
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import CreditLog
from langchain_episodic.service.lesson_log import LessonLog
from langchain_episodic.service.relevance import RelevanceTest

__all__ = ["Lessons"]

_REVISABLE = frozenset({"title", "applies_when", "do", "avoid", "by"})


@dataclass(frozen=True)
class _ActiveIndex:
    """The active lessons, ready for recall; valid while its sources are the same objects.

    Attributes:
        book: The lesson book it was built from (a write replaces the book).
        quarantined: The quarantine mapping it was built from (a change replaces it).
        credit: The credit book its evidence was read from (a reload replaces it).
        credit_version: That book's version when it was read (a credit bumps it).
        dimension: The query dimension its vectors have.
        lessons: The active lessons, oldest first.
        ids: Their ids.
        rows: Row of each id.
        matrix: Their unit vectors, one row each, and the search over them.
        evidence: Per row: own helped, own hurt (at ``updated``), carried helped,
            carried hurt, ``updated`` (the time the own evidence refers to, ``nan``
            when never credited), ``created``.
    """

    book: LessonBook
    quarantined: object
    credit: object
    credit_version: int
    dimension: int
    lessons: tuple[Lesson, ...]
    ids: tuple[str, ...]
    rows: Mapping[str, int]
    matrix: LessonMatrix
    evidence: NDArray[np.float64]
    # (half-life, time, lowest, highest): the factor bounds from that time on.
    _bounds: list[tuple[float, float, Any, Any]] = field(
        default_factory=list, compare=False, repr=False
    )

    def credit_factors(self, now: float, half_life: float) -> CreditFactors:
        """The utility factors of the `with_evidence` rows at ``now``.

        Bounds for all, exact for the rows asked. Once ``now`` is past a lesson's
        last credit and its creation, all its evidence fades at one rate, so its
        utility only moves towards the prior (0.5), never past it: its factor at that
        time and 1 bound its factor at every later time. The bounds are computed once
        per credit (again only if the clock is set back before that time).
        """
        rows = self.with_evidence
        found = self._bounds[-1] if self._bounds else None
        if found is None or found[0] != half_life or now < found[1]:
            at = self._factors_of(rows.tolist(), now, half_life)
            latest = float(np.nanmax(self.evidence[rows][:, 4:], initial=-np.inf))
            if now < latest:  # the clock is behind the evidence: the factors now, exactly
                return CreditFactors(rows, at, at, self._exact(now, half_life))
            if isinstance(at, list):
                bounds = [min(one, 1.0) for one in at], [max(one, 1.0) for one in at]
            else:
                bounds = np.minimum(at, 1.0), np.maximum(at, 1.0)
            found = (half_life, now, *bounds)
            self._bounds[:] = [found]
        return CreditFactors(rows, found[2], found[3], self._exact(now, half_life))

    def _exact(self, now: float, half_life: float) -> Callable[[list[int]], list[float]]:
        credited = self.credited_positions
        found: dict[int, float] = {}  # a search asks for some rows twice

        def exact(named: list[int]) -> list[float]:
            wanted = [row for row in named if row in credited and row not in found]
            if wanted:
                found.update(zip(wanted, self._factors_of(wanted, now, half_life), strict=True))
            return [found.get(row, 1.0) for row in named]

        return exact

    def _factors_of(self, rows: list[int], now: float, half_life: float) -> Any:
        """The factors of credited ``rows`` at ``now`` (recall ranks by them): list or array."""
        utilities = self._utilities_at(rows, now, half_life)
        if isinstance(utilities, list):
            return [utility_factor(utility) for utility in utilities]
        return utility_factors(utilities)

    def _utilities_at(self, rows: list[int], now: float, half_life: float) -> Any:
        """The utilities of credited ``rows`` at ``now``: a list when few, an array when many."""
        if len(self.with_evidence) > PLAIN_FLOATS_UP_TO:
            return self._utilities_of(self.evidence[rows], now, half_life)
        evidence = self.credited_evidence
        return [self._utility_of(evidence[row], now, half_life) for row in rows]

    @functools.cached_property
    def credited_positions(self) -> frozenset[int]:
        """The `with_evidence` rows, for membership."""
        return frozenset(self.with_evidence.tolist())

    @functools.cached_property
    def credited_evidence(self) -> dict[int, list[float]]:
        """The evidence of each `with_evidence` row, in plain floats."""
        rows = self.with_evidence
        return dict(zip(rows.tolist(), self.evidence[rows].tolist(), strict=True))

    def utilities(self, now: float, half_life: float) -> NDArray[np.float64]:
        """Every active lesson's ranking utility at ``now``, as recall computes it.

        `ranking_mean` of the evidence behind
        `Lessons.utility`: shrunk harder towards 0.5, as episodes are at recall; a
        lesson without evidence is at 0.5 whatever the time.
        """
        utilities = np.full(len(self.evidence), 0.5)
        rows = self.with_evidence
        utilities[rows] = self._utilities_at(rows.tolist(), now, half_life)
        return utilities

    @functools.cached_property
    def with_evidence(self) -> NDArray[np.intp]:
        """The rows of the lessons with any evidence (the others sit at the prior)."""
        return np.flatnonzero(self.evidence[:, :4].any(axis=1))

    @staticmethod
    def _utility_of(evidence: list[float], now: float, half_life: float) -> float:
        """One row of `_utilities_of`, in plain floats."""
        helped, hurt, carried_helped, carried_hurt, updated, created = evidence
        decay = half_life_decay(0.0 if math.isnan(updated) else now - updated, half_life)
        faded = half_life_decay(now - created, half_life)
        return ranking_mean(
            carried_helped * faded + helped * decay, carried_hurt * faded + hurt * decay
        )

    @staticmethod
    def _utilities_of(
        evidence: NDArray[np.float64], now: float, half_life: float
    ) -> NDArray[np.float64]:
        helped, hurt, carried_helped, carried_hurt, updated, created = evidence.T
        # half_life_decay and lesson_evidence, for every row at once.
        age = np.where(np.isnan(updated), 0.0, np.maximum(0.0, now - updated))
        decay = np.exp2(-age / half_life)
        faded = np.exp2(-np.maximum(0.0, now - created) / half_life)
        evidence_helped = carried_helped * faded + helped * decay
        evidence_hurt = carried_hurt * faded + hurt * decay
        # ranking_mean, for every row at once: what lessons are ranked by.
        utilities: NDArray[np.float64] = (RANKING_PRIOR + evidence_helped) / (
            2.0 * RANKING_PRIOR + evidence_helped + evidence_hurt
        )
        return utilities


class Lessons:
    """The lessons of a namespace: what to do when, each traced to its source episodes.

    Lessons come from `reflect` (a model reads
    judged episodes) or are added by hand; the active ones are recalled beside the
    episodes (``build_replay(..., lesson_k=2)``), credited like them, merged when
    near-duplicates and archived when revised, never deleted but by erasure.

    Examples:
        >>> from langchain_episodic import EpisodicMemory, episode_from_tests
        >>> from langchain_episodic.model.lesson import Lesson, LessonSource
        >>> memory = EpisodicMemory()
        >>> _ = memory.record(episode_from_tests("Add a login form", "def login(): ...", 7, 10,
        ...                                      episode_id="login-1", timestamp=1.0))
        >>> memory.lessons.add([Lesson.create(
        ...     title="Strip e-mail addresses before validating them",
        ...     applies_when="a form validates an e-mail address", do="call .strip() first",
        ...     sources=[LessonSource("login-1")], created_at=2.0)])
        1
        >>> memory.lessons.list()[0].title
        'Strip e-mail addresses before validating them'

    Args:
        context: The namespace.
        log: Its lessons, from the journal.
        credit: Its credit journal (a lesson's utility is its credit).
        quarantined: Returns the ids quarantined now (episodes and lessons).
        relevance: The relevance test a recalled lesson must pass.
        demoted: Returns the ids on probation now (never recalled, unless pinned).
    """

    def __init__(
        self,
        context: NamespaceContext,
        log: LessonLog,
        credit: CreditLog,
        quarantined: Callable[[], Collection[str]],
        relevance: RelevanceTest,
        demoted: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        self._context = context
        self._log = log
        self._credit = credit
        self._quarantined = quarantined
        self._relevance = relevance
        self._demoted = demoted
        self._index: _ActiveIndex | None = None
        self._index_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<lessons of namespace {self._context.namespace!r}>"

    def ids(self) -> Collection[str]:
        """Every stored lesson id (active or not)."""
        return self._log.book.lessons.keys()

    def add(self, lessons: Iterable[Lesson]) -> int:
        """Store lessons, each embedded for recall, all or nothing; how many were new.

        Every source must be an episode stored here and every superseded lesson
        stored, or nothing is written.

        Raises:
            TypeError: An item is not a `Lesson`.
            EpisodicValueError: A source episode is not stored in this namespace, or a
                superseded lesson is unknown. Nothing is written.
        """
        batch = list(lessons)
        for index, lesson in enumerate(batch):
            if not isinstance(lesson, Lesson):
                msg = f"lessons[{index}]={lesson!r} is not a Lesson"
                raise TypeError(msg)
        context = self._context
        with context.lock:
            known = self._log.book.lessons
            fresh = list(
                {one.lesson_id: one for one in batch if one.lesson_id not in known}.values()
            )
            if not fresh:
                return 0
            cited = sorted({i for lesson in fresh for i in lesson.source_ids})
            stored = context.store.get(context.namespace, cited)
            missing = [i for i in cited if i not in stored]
            if missing:
                msg = (
                    f"lessons cite episode_ids={missing!r}, which are not stored in "
                    f"namespace={context.namespace!r}; no lesson was stored"
                )
                raise EpisodicValueError(msg)
            pending = {lesson.lesson_id for lesson in fresh}
            unknown = sorted(
                old
                for lesson in fresh
                for old in lesson.supersedes
                if old not in known and old not in pending
            )
            if unknown:
                msg = f"lessons supersede unknown lesson ids {unknown!r}; no lesson was stored"
                raise EpisodicValueError(msg)
            vectors = context.embed_documents(
                [lesson.embedding_text for lesson in fresh],
                [f"lesson_id={lesson.lesson_id!r}" for lesson in fresh],
            )
            return self._log.write(fresh, vectors, self._embedder_tag)

    def list(self, status: LessonStatus | None = "active") -> tuple[Lesson, ...]:
        """Lessons of one status (``None``: all), oldest first.

        ``"active"`` ones are recalled; ``"archived"`` ones were superseded;
        ``"quarantined"`` ones are, or derive from a quarantined episode.
        """
        return tuple(
            lesson
            for lesson, found in self._log.book.with_status(self._quarantined())
            if status is None or found == status
        )

    def get(self, lesson_id: str) -> Lesson:
        """The stored lesson ``lesson_id``.

        Raises:
            EpisodicValueError: No such lesson in this namespace.
        """
        found = self._log.book.lessons.get(lesson_id)
        if found is None:
            msg = f"lesson_id={lesson_id!r} is not stored in namespace={self._context.namespace!r}"
            raise EpisodicValueError(msg)
        return found

    def status(self, lesson_id: str) -> LessonStatus:
        """Whether ``lesson_id`` is active, archived or quarantined."""
        return lesson_status(self.get(lesson_id), self._log.book.superseded, self._quarantined())

    def _evidence(self, lesson: Lesson, now: float) -> tuple[float, float]:
        row = self._credit.utility(lesson.lesson_id)
        return lesson_evidence(row, (lesson.helped, lesson.hurt), lesson.created_at, now)

    def utility(self, lesson_id: str, current_time: float | None = None) -> float:
        """The lesson's utility: its credit plus what the lessons it merged carried.

        Read at ``current_time`` (the memory's clock when ``None``): evidence fades
        with age.
        """
        at = (
            self._context.now()
            if current_time is None
            else check_time("current_time", current_time)
        )
        return beta_mean(*self._evidence(self.get(lesson_id), at))

    def revise(self, lesson_id: str, /, **changes: Any) -> Lesson:
        """Store a revision of an active lesson (``title``, ``applies_when``, ``do``, ...).

        The new lesson supersedes the old one, which is archived.

        Raises:
            EpisodicValueError: Unknown lesson, a lesson not active, or a bad field.
            TypeError: A field that cannot be revised.
        """
        old = self.get(lesson_id)
        status = self.status(lesson_id)
        if status != "active":
            msg = f"lesson_id={lesson_id!r} is {status}: only an active lesson is revised"
            raise EpisodicValueError(msg)
        unknown = sorted(set(changes) - _REVISABLE)
        if unknown:
            msg = f"revise_lesson got unknown fields {unknown}; allowed: {sorted(_REVISABLE)}"
            raise TypeError(msg)
        kept = (*_REVISABLE, "sources", "helped", "hurt")  # its lineage and evidence stay
        fields = {name: getattr(old, name) for name in kept} | changes
        new = Lesson.create(**fields, created_at=self._context.now(), supersedes=(old.lesson_id,))
        self.add([new])
        return new

    def consolidate(self, threshold: float = MERGE_SIMILARITY) -> tuple[Lesson, ...]:
        """Merge near-duplicate active lessons (cosine >= ``threshold``), keeping evidence.

        The merges supersede them (they are archived); running it again changes nothing.
        """
        check_number("threshold", threshold, -1.0, 1.0)
        with self._context.lock:
            active = self.list("active")
            groups = []
            if active:
                book = self._log.book
                dimensions = {book.vectors[lesson.lesson_id].shape[0] for lesson in active}
                # Lessons migrated from another model's namespace: compare in this one's.
                dimension = (
                    dimensions.pop()
                    if len(dimensions) == 1
                    else self._embed([active[0].embedding_text]).shape[1]
                )
                vectors = self._log.vectors_for(active, dimension, self._embed, self._embedder_tag)
                groups = plan_consolidation(active, vectors, threshold)
            now = self._context.now()
            credit = {}
            for group in groups:
                for lesson in group:
                    # merge_lessons adds what each lesson carried to its credit: pass
                    # the rest of its evidence as it stands now.
                    helped, hurt = self._evidence(lesson, now)
                    credit[lesson.lesson_id] = (helped - lesson.helped, hurt - lesson.hurt)
            merged = [merge_lessons(group, credit, now) for group in groups]
            self.add(merged)
            return tuple(merged)

    def recall(self, query: str | TaskDescription, k: int = 2) -> tuple[Lesson, ...]:
        """The ``k`` active lessons at the relevance floor, by similarity scaled by utility."""
        check_int("k", k, 1)
        vector = self._context.embed_query(as_task(query, "query").description)
        return self.near(vector, k, self._relevance.bar(vector))

    aadd, arevise = async_twin(add), async_twin(revise)
    aconsolidate, arecall = async_twin(consolidate), async_twin(recall)

    def near(self, vector: NDArray[np.float32], k: int, floor: float) -> tuple[Lesson, ...]:
        """The ``k`` active lessons most worth showing for a query ``vector``, best first."""
        query = np.asarray(vector, dtype=np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        index = self.active_index(query.shape[0])
        if not index.lessons:
            return ()
        demoted = [row for row in map(index.rows.get, self._demoted()) if row is not None]
        credit = index.credit_factors(self._context.now(), self._credit.half_life)
        rows = index.matrix.best(query, credit, demoted, index.ids, floor, k)
        return tuple(index.lessons[row] for row in rows)

    def active_index(self, dimension: int) -> _ActiveIndex:
        """The active lessons with their vectors and evidence, built again only on change."""
        book, hidden = self._log.book, self._quarantined()
        credit = self._credit.book
        version = credit.version
        with self._index_lock:
            index = self._index
            if (
                index is None
                or index.book is not book
                or index.quarantined is not hidden
                or index.dimension != dimension
            ):
                index = self._build_index(book, hidden, dimension, index)
            elif index.credit is not credit or index.credit_version != version:
                changed: Collection[str] | None = (
                    credit.changed_since(index.credit_version) if index.credit is credit else None
                )
                evidence = index.evidence.copy()
                if changed is None:  # another book, or too many credits since:
                    # every lesson's own credit again (what merges carried stays).
                    evidence[:, :2] = 0.0
                    evidence[:, 4] = np.nan
                    changed = credit.rows.keys()
                # Only the rows credit touched since.
                touched = [index.rows[i] for i in changed if i in index.rows]
                if touched:
                    evidence[touched] = self._evidence_rows(
                        tuple(index.lessons[row] for row in touched)
                    )
                # The same lessons, book, quarantine and dimension: a fresh bounds cache.
                index = dataclasses.replace(
                    index, credit=credit, credit_version=version, evidence=evidence, _bounds=[]
                )
            self._index = index
            return index

    def _build_index(
        self,
        book: LessonBook,
        hidden: Collection[str],
        dimension: int,
        previous: _ActiveIndex | None = None,
    ) -> _ActiveIndex:
        superseded = book.superseded
        by_age = sorted(book.lessons.values(), key=lambda one: (one.created_at, one.lesson_id))
        lessons = tuple(one for one in by_age if lesson_status(one, superseded, hidden) == "active")
        # A lesson stored with another model's vectors (another dimension) is
        # embedded again with this memory's model, once, so migrated lessons recall.
        matrix = self._log.vectors_for(lessons, dimension, self._embed, self._embedder_tag)
        ids = tuple(lesson.lesson_id for lesson in lessons)
        rows = {lesson_id: row for row, lesson_id in enumerate(ids)}
        if previous is not None and previous.dimension == dimension:
            # After a reload the same lessons come back: the same matrix, searched as before.
            search = previous.matrix.renewed(matrix)
        else:
            search = LessonMatrix(matrix)
        credit, evidence = self._credit.book, self._evidence_rows(lessons)
        return _ActiveIndex(
            book, hidden, credit, credit.version, dimension, lessons, ids, rows, search, evidence
        )

    def _evidence_rows(self, lessons: tuple[Lesson, ...]) -> NDArray[np.float64]:
        rows = self._credit.book.rows
        evidence = np.empty((len(lessons), 6), dtype=np.float64)
        for index, lesson in enumerate(lessons):
            row = rows.get(lesson.lesson_id)
            updated = np.nan if row is None or row.updated_at is None else row.updated_at
            own = (0.0, 0.0) if row is None else (row.helped, row.hurt)
            evidence[index] = (*own, lesson.helped, lesson.hurt, updated, lesson.created_at)
        return evidence

    @functools.cached_property
    def _embedder_tag(self) -> str | None:
        """A digest of the embeddings' fingerprint: which model made a lesson's vector.

        Computed once, on first use (one probe embedding), only with lessons.
        """
        fingerprint = fingerprint_embeddings(self._context.embeddings)
        if fingerprint is None:
            return None
        return hashlib.sha256(fingerprint.to_json().encode("utf-8")).hexdigest()[:16]

    def _embed(self, texts: builtins.list[str]) -> NDArray[np.float32]:
        return self._context.embed_documents(texts, [f"lesson {t!r}" for t in texts])
