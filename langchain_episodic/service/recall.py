"""Recall for one namespace: embed once, search, rank, explain.

Candidates come from the store by similarity (quarantined ones left out), ranking is
`rank_candidates` (pure), and only the
winners' episodes are parsed. The same query vector finds the strategy evidence
(``neighbours``) and the lessons.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence

import numpy as np
from numpy.typing import NDArray

from langchain_episodic._validation import check_int
from langchain_episodic.embeddings.categories import default_category_examples
from langchain_episodic.errors import EpisodeValidationError, MalformedRecordWarning
from langchain_episodic.model.episode import (
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
    pass_rate_of,
)
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.scoring.categories import CategoryProbe, features, head
from langchain_episodic.scoring.credit import ALL_CATEGORIES
from langchain_episodic.scoring.evidence import candidate_utilities, near_duplicate_groups
from langchain_episodic.scoring.intervals import memory_hurts
from langchain_episodic.scoring.kind import kind_similarity, signature_of
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import Neighbour, RecallReport, Rejected, rank_candidates
from langchain_episodic.scoring.relevance import Calibration, relevance_threshold
from langchain_episodic.scoring.sharing import SHARED_CANDIDATES, length_factor, shared_order
from langchain_episodic.scoring.skills import success_grade
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import CreditLog
from langchain_episodic.service.lessons import Lessons
from langchain_episodic.service.relevance import RelevanceTest
from langchain_episodic.service.tracing import traced
from langchain_episodic.stores.base import FiltersEveryField, StoredHit

__all__ = ["Recall", "hit_fields", "recall_trace"]

# More candidates than any store holds; vector databases refuse counts past 32 bits.
_MAX_CANDIDATES = 2**31 - 1

# Function names read as words, embedded once each (a few words; names recur).
_NAME_CACHE = 4096


def recall_trace(
    report: RecallReport, *, content: bool
) -> tuple[dict[str, object], dict[str, object]]:
    """A recall's trace outputs and span attributes: what it kept and turned away, scored."""
    kept = [
        {
            "episode_id": r.episode.episode_id,
            "similarity": round(r.similarity, 4),
            "priority": round(r.priority, 4),
            "relevant": r.relevant,
            **({"task": r.episode.task.description} if content else {}),
        }
        for r in report.results
    ]
    rejected = [
        {"episode_id": r.episode_id, "similarity": round(r.similarity, 4), "reason": r.reason}
        for r in report.rejected
    ]
    outputs: dict[str, object] = {
        "results": kept,
        "rejected": rejected,
        "threshold": report.threshold,
        "ranking": report.ranking,
        "candidates": report.candidates,
        "backed_off": report.backed_off,
        "lessons": [lesson.lesson_id for lesson in report.lessons],
    }
    attributes: dict[str, object] = {
        "episodic.shown.ids": [r["episode_id"] for r in kept],
        "episodic.shown.count": len(kept),
        "episodic.rejected.count": len(rejected),
        "episodic.lessons.ids": outputs["lessons"],
    }
    return outputs, attributes


def hit_fields(hit: StoredHit) -> dict[str, object]:
    """A hit's values of the fields a filter may name (`WHERE_FIELDS`)."""
    data = hit.data
    task = data.get("task")
    feedback = data.get("feedback")
    passed = feedback.get("tests_passed") if isinstance(feedback, dict) else None
    total = feedback.get("tests_total") if isinstance(feedback, dict) else None
    counted = isinstance(passed, int) and isinstance(total, int)
    return {
        "category": task.get("category") if isinstance(task, dict) else None,
        "outcome": hit.outcome.value,
        "strategy_used": data.get("strategy_used"),
        "reward": hit.reward,
        "pass_rate": pass_rate_of(passed, total) if counted else 0.0,  # type: ignore[arg-type]
        "timestamp": hit.timestamp,
    }


def _text_at(hit: StoredHit, *path: str) -> str | None:
    """The string at ``path`` in the hit's stored data (``None``: no string there)."""
    value: object = hit.data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else None


def _task_text(hit: StoredHit) -> str:
    return _text_at(hit, "task", "description") or ""


_PROBES: dict[tuple[str, tuple[str, ...]], CategoryProbe] = {}  # (model, background) -> probe
_PROBES_LIMIT = 16
_PROBES_LOCK = threading.Lock()


def _neighbour(hit: StoredHit) -> Neighbour:
    """The hit as a strategy's evidence: its strategy, outcome and success grade."""
    feedback = hit.data.get("feedback")
    counts = feedback if isinstance(feedback, dict) else {}
    passed, total = counts.get("tests_passed", 0), counts.get("tests_total", 0)
    if not (isinstance(passed, int) and isinstance(total, int) and 0 <= passed <= total):
        passed = total = 0  # not written by this package: grade by the reward
    strategy = _text_at(hit, "strategy_used") or ""
    grade = success_grade(hit.outcome, hit.reward, passed, total)
    return Neighbour(hit.episode_id, hit.similarity, strategy, hit.outcome, grade)


def _winners(
    ordered: Sequence[tuple[float, StoredHit, bool]], top_k: int
) -> list[PrioritizedResult]:
    """The first ``top_k`` ranked hits as results, parsing only their episodes."""
    results: list[PrioritizedResult] = []
    for priority, hit, relevant in ordered:
        if len(results) == top_k:
            break
        try:
            episode = hit.episode()
        except EpisodeValidationError as error:
            # Written by something else into our collection: skip it, say which.
            warnings.warn(MalformedRecordWarning(hit.record_id, str(error)), stacklevel=5)
            continue
        results.append(PrioritizedResult(episode, hit.similarity, priority, relevant))
    return results


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
        relevance: The relevance test (calibration and background).
        rng: The memory's random generator (``explore`` draws utilities from it).
        shared: Several principals record into the namespace: recall applies
            `sharing`'s rules.
    """

    def __init__(
        self,
        context: NamespaceContext,
        quarantined: Callable[[], Collection[str]],
        credit: CreditLog,
        lessons: Lessons,
        relevance: RelevanceTest,
        demoted: Callable[[], Collection[str]] = frozenset,
        rng: np.random.Generator | None = None,
        shared: bool = False,
    ) -> None:
        self.shared = shared
        self._context = context
        self._quarantined = quarantined
        self._demoted = demoted
        self._credit = credit
        self._lessons = lessons
        self.relevance = relevance
        self._probe: CategoryProbe | None = None
        self._rng = rng
        self._hurts: dict[str, tuple[int, bool]] = {}  # category -> (book version, verdict)
        self._names: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._names_lock = threading.Lock()

    def backing_off(self, category: str) -> bool:
        """Whether the latest holdout runs say memory hurts ``category`` (or everything).

        `memory_hurts` on the credit book's lift
        windows, cached until the next credit.
        """
        book = self._credit.book
        cached = self._hurts.get(category)
        if cached is not None and cached[0] == book.version:
            return cached[1]
        verdict = any(memory_hurts(*book.lift_window(key)) for key in (category, ALL_CATEGORIES))
        self._hurts[category] = (book.version, verdict)
        return verdict

    @property
    def namespace(self) -> str:
        """The namespace recalled from."""
        return self._context.namespace

    @property
    def trace_content(self) -> bool:
        """Whether traces may carry the text the memory stores (``trace_content``)."""
        return self._context.trace_content

    @property
    def calibration(self) -> Calibration:
        """How the relevance test reads this embedder's similarities (floor and offset)."""
        return self.relevance.calibration

    @property
    def background_texts(self) -> tuple[str, ...]:
        """The texts the relevance test compares each task against (empty: no such test)."""
        return self.relevance.background_texts

    def with_category(self, task: TaskDescription) -> TaskDescription:
        """``task``, its category inferred from its text when it has none (``unknown``).

        The category probe (`CategoryProbe`,
        fitted on the packaged labelled examples and this memory's background) says which
        category the text is about; a task that reads more like the background than like
        any of them stays ``unknown`` (a memory without a background always infers one).
        """
        if task.category is not TaskCategory.UNKNOWN:
            return task
        text, embed = task.description, self._context.embed_query
        row = features(embed(text), embed(head(text) or text))
        label = self.category_probe().classify(row[0])
        if label is None:
            return task
        return TaskDescription(text, TaskCategory(label), task.complexity)

    def with_categories(
        self,
        tasks: Sequence[TaskDescription],
        vectors: NDArray[np.float32] | None = None,
    ) -> list[TaskDescription]:
        """`with_category` for many tasks at once, as the write path infers them.

        The texts are read as documents (the probe was fitted on documents' vectors):
        ``vectors``, one row per task, are their descriptions' when the caller has
        them (the write path embedded them to store them); only the openings are
        embedded here, in one call.
        """
        unknown = [i for i, task in enumerate(tasks) if task.category is TaskCategory.UNKNOWN]
        found = list(tasks)
        if not unknown:
            return found
        texts = [tasks[i].description for i in unknown]
        names = [f"the task {text[:60]!r}" for text in texts]
        openings = [head(text) or text for text in texts]
        if vectors is None:
            matrix = self._context.embed_documents(texts + openings, names + names)
            whole, opening = matrix[: len(texts)], matrix[len(texts) :]
        else:
            whole = np.asarray(vectors)[unknown]
            opening = self._context.embed_documents(openings, names)
        for i, label in zip(
            unknown, self.category_probe().classify_many(features(whole, opening)), strict=True
        ):
            if label is not None:
                task = tasks[i]
                found[i] = TaskDescription(task.description, TaskCategory(label), task.complexity)
        return found

    def category_probe(self) -> CategoryProbe:
        """The probe over the packaged examples and the background, fitted on first use.

        Shared by every memory over the same model and background (one fit per process).
        """
        if self._probe is None:
            fingerprint = self.relevance.fingerprint
            model = fingerprint.to_json() if fingerprint else f"id:{id(self._context.embeddings)}"
            key = (model, self.background_texts)
            with _PROBES_LOCK:
                found = _PROBES.get(key)
            if found is None:
                found = self._fit_probe()
                with _PROBES_LOCK:
                    if len(_PROBES) >= _PROBES_LIMIT:
                        _PROBES.pop(next(iter(_PROBES)))
                    _PROBES[key] = found
            self._probe = found
        return self._probe

    def _fit_probe(self) -> CategoryProbe:
        def rows(texts: Sequence[str]) -> NDArray[np.float64]:
            vectors = self.relevance.vectors
            return features(vectors(texts), vectors([head(t) or t for t in texts]))

        examples = default_category_examples()
        labelled = rows([text for _, text in examples])
        background = rows(self.background_texts) if self.background_texts else None
        return CategoryProbe.fit(labelled, [category for category, _ in examples], background)

    def report(
        self,
        task: TaskDescription,
        options: RecallOptions,
        evidence_k: int = 0,
        lesson_k: int = 0,
        keep: int | None = None,
    ) -> RecallReport:
        """The results for ``task``, what was turned away and why, neighbours and lessons.

        ``keep``: how many ranked results to return (``options.top_k`` when ``None``).
        Traced as an ``episodic_recall`` run (`langchain_episodic.service.tracing`).

        Raises:
            TypeError: ``options`` is not a `RecallOptions`.
            EpisodicValueError: ``evidence_k`` or ``lesson_k`` is negative, or the
                embedding is unusable.
        """
        inputs: dict[str, object] = {
            "category": task.category.value,
            "top_k": getattr(options, "top_k", None),
            "ranking": getattr(options, "ranking", None),
        }
        if self._context.trace_content:
            inputs["task"] = task.description
        with traced("recall", self._context.namespace, inputs) as trace:
            report = self._report(task, options, evidence_k, lesson_k, keep)
            if trace.active:
                trace.done(*recall_trace(report, content=self._context.trace_content))
            return report

    def _report(
        self,
        task: TaskDescription,
        options: RecallOptions,
        evidence_k: int = 0,
        lesson_k: int = 0,
        keep: int | None = None,
    ) -> RecallReport:
        """`report`, untraced."""
        if not isinstance(options, RecallOptions):
            msg = f"options={options!r} is invalid: must be a RecallOptions"
            raise TypeError(msg)
        check_int("evidence_k", evidence_k, 0)
        check_int("lesson_k", lesson_k, 0)
        text = task.description
        now = self._context.now() if options.current_time is None else options.current_time
        vector = self._context.embed_query(text)
        book = self._credit.book
        exploring = options.learns and options.explore and self._rng is not None
        learning = exploring or (options.learns and bool(book.rows))
        fetch_k = max(options.candidate_count(learning), SHARED_CANDIDATES if self.shared else 0)
        hidden: Collection[str] = self._quarantined()
        if options.learns and (on_probation := self._demoted()):
            hidden = {*hidden, *on_probation}
        default_floor = self.calibration.floor
        floor = options.relevance_floor(default_floor)
        background = self.relevance.background_bar(vector) if lesson_k else None
        bar = relevance_threshold(floor, background=background)
        # Before the store's query, where the background bar measured faster (57 µs, 94 after).
        lessons = self._lessons.near(vector, lesson_k, bar) if lesson_k else ()
        hits = self.search(vector, max(fetch_k, evidence_k), options.filters, text, hidden)
        if hits and not lesson_k:
            background = self.relevance.background_bar(vector)
            bar = relevance_threshold(floor, background=background)
        neighbours = tuple(_neighbour(hit) for hit in hits[:evidence_k] if hit.similarity >= bar)
        candidates = hits[:fetch_k]
        estimates: dict[str, float] = {}
        if learning:
            ids = [hit.episode_id for hit in candidates]
            if exploring or any(episode_id in book.rows for episode_id in ids):
                groups = near_duplicate_groups([_task_text(hit) for hit in candidates])
                rng = self._rng if exploring else None
                values = candidate_utilities(ids, groups, book.rows, now, rng)
            else:  # no candidate has evidence, nor a near-duplicate with some: the prior
                values = [0.5] * len(ids)
            estimates = dict(zip(ids, values, strict=True))
        backed_off = (
            options.use_lift
            and options.ranking == "relevance"
            and self.backing_off(task.category.value)
        )
        kinds = self.kind_similarities(text, candidates) if options.ranking == "relevance" else {}
        # Rank on the stored scalars, then parse only the winners' episodes.
        ranked = rank_candidates(
            candidates,
            now,
            options,
            default_floor,
            (lambda hit: estimates[hit.episode_id]) if estimates else None,
            background,
            (lambda hit: kinds.get(hit.episode_id, hit.similarity)) if kinds else None,
        )
        ordered = self._showable(ranked.ordered, backed_off, options)
        results = _winners(ordered, options.top_k if keep is None else check_int("keep", keep, 1))
        rejected = tuple(
            Rejected(hit.episode_id, _task_text(hit), hit.similarity, reason)
            for hit, reason in ranked.rejected
        )
        shown = [r.episode.episode_id for r in results]
        utility = {i: book.rows[i] for i in shown if estimates and i in book.rows}
        shown_estimates = {i: estimates[i] for i in shown if i in estimates}
        return RecallReport(
            tuple(results),
            rejected,
            ranked.threshold,
            options.ranking,
            neighbours,
            utility,
            now,
            lessons,
            background,
            shown_estimates,
            fetch_k,
            backed_off,
        )

    def kind_similarities(self, text: str, hits: Sequence[StoredHit]) -> dict[str, float]:
        """The kind similarity of each hit that names a signature, when ``text`` names one.

        `kind_similarity`: the hit's similarity
        mixed with that of the two function names, lowered when their numbers of
        parameters differ. Empty when the task names no function (the ranking is then
        the plain one).
        """
        mine = signature_of(text)
        if mine is None:
            return {}
        theirs = {hit.episode_id: signature_of(_task_text(hit)) for hit in hits}
        named = {episode_id: sig for episode_id, sig in theirs.items() if sig is not None}
        if not named:
            return {}
        vectors = self._name_vectors([mine.words, *(sig.words for sig in named.values())])
        query = vectors[mine.words]
        similarity = {hit.episode_id: hit.similarity for hit in hits}
        return {
            episode_id: kind_similarity(
                similarity[episode_id],
                float(query @ vectors[sig.words]),
                same_arity=sig.arity == mine.arity,
            )
            for episode_id, sig in named.items()
        }

    def _name_vectors(self, names: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        """Unit vectors of ``names`` (function names read as words), embedded once each."""
        with self._names_lock:
            found = {name: self._names[name] for name in names if name in self._names}
        missing = list(dict.fromkeys(name for name in names if name not in found))
        if missing:
            raw = self._context.embed_documents(missing, [f"name={n!r}" for n in missing])
            norms = np.linalg.norm(raw, axis=1, keepdims=True)
            unit = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
            with self._names_lock:
                for name, vector in zip(missing, unit, strict=True):
                    found[name] = self._names[name] = vector
                while len(self._names) > _NAME_CACHE:
                    self._names.popitem(last=False)
        return found

    def _showable(
        self,
        ordered: list[tuple[float, StoredHit, bool]],
        backed_off: bool,
        options: RecallOptions,
    ) -> list[tuple[float, StoredHit, bool]]:
        """The ranked rows a replay may show, in order."""
        if backed_off:  # memory hurts here: only what worked, one at most
            ordered = [row for row in ordered if row[1].outcome is OutcomeStatus.SUCCESS][:1]
        if self.shared:
            ordered = shared_order(
                ordered,
                lambda row: _task_text(row[1]),
                lambda row: _text_at(row[1], "source", "principal"),
                options.top_k,
                lambda row: row[1].timestamp,
                options.principal,
            )
        return ordered

    def search(
        self,
        vector: NDArray[np.float32],
        fetch_k: int,
        filters: EpisodeFilter | None,
        query_text: str | None,
        hidden: Collection[str] | None = None,
    ) -> list[StoredHit]:
        """The ``fetch_k`` nearest stored hits not ``hidden`` (default: not quarantined).

        In a shared memory each hit's similarity is scaled by its task's
        `length_factor` (and the hits re-sorted).
        """
        # Hidden records stay stored; asking for that many more candidates and
        # dropping them returns exactly the fetch_k nearest of the others.
        quarantined = self._quarantined() if hidden is None else hidden
        wanted = min(fetch_k + len(quarantined), _MAX_CANDIDATES)
        context = self._context
        native = None if filters is None else filters.pushdown()
        rest = None if filters is None or filters.where is None else filters
        store = context.store
        if (
            rest is not None
            and isinstance(store, FiltersEveryField)
            and store.filters_every_field(context.namespace)
        ):
            native, rest = filters, None  # the store applies it all
        while True:
            found = context.store.search_hits(
                context.namespace, vector, wanted, native, query_text=query_text
            )
            hits = [hit for hit in found if hit.episode_id not in quarantined]
            if rest is not None:
                hits = [hit for hit in hits if rest.admits(hit_fields(hit))]
            # What the store cannot filter is filtered here, before candidates are
            # chosen: asked for more until fetch_k pass or the store has no more.
            done = rest is None or len(hits) >= fetch_k or len(found) < wanted
            if done or wanted >= _MAX_CANDIDATES:
                break
            wanted = min(wanted * 4, _MAX_CANDIDATES)
        if self.shared:  # a text that says everything is no evidence about one task
            scaled = (
                dataclasses.replace(
                    hit, similarity=hit.similarity * length_factor(len(_task_text(hit)))
                )
                for hit in hits
            )
            hits = sorted(scaled, key=lambda hit: -hit.similarity)
        return hits[:fetch_k]
