"""RecallOptions: every option of a recall but the query, checked once, in one place.

`recall` validates its arguments by building
a `RecallOptions`; the replay pipeline and every LangChain integration
(retriever, runnable, tool, middleware, classic memory) take one, so they accept and
check exactly the same options.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass
from typing import Any, TypedDict

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import OutcomeStatus, TaskCategory
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.scoring.priority import (
    DEFAULT_HALF_LIFE,
    ReplayWeights,
    check_half_life,
    check_time,
)
from langchain_episodic.scoring.relevance import (
    DEFAULT_RANKING,
    RELEVANCE_FLOOR,
    RELEVANCE_HALF_LIFE,
    Ranking,
)

__all__ = ["RECALL_OPTION_NAMES", "RELEVANCE_FETCH_FACTOR", "RecallKeywords", "RecallOptions"]

RELEVANCE_FETCH_FACTOR = 4
"""Once credit has evidence, the relevance ranking chooses among ``4 * top_k``
candidates (12 for the default 3): room for credit to choose the few worth showing.
Measured in the credit simulation (``benchmarks/learning_value.py``): among 6
candidates credit closed about 40% of the gap to an oracle, among 12 about half.
Without evidence there is nothing to choose by, and recall fetches the article's
``2 * top_k`` (each extra candidate costs Chroma time: 12 cost 1.2x what 6 do)."""

CategoryArg = TaskCategory | str | Iterable[TaskCategory | str] | None
OutcomeArg = OutcomeStatus | str | Iterable[OutcomeStatus | str] | None


@dataclass(frozen=True)
class RecallOptions:
    """How to recall: how many, from how many candidates, ranked how, filtered how.

    Immutable and validated on construction: a bad value raises
    `EpisodicValueError` naming the field, a value of the
    wrong type raises ``TypeError``.

    Examples:
        >>> from langchain_episodic import RecallOptions, ReplayWeights
        >>> options = RecallOptions(top_k=2, category="debugging")
        >>> options.fetch_count, options.filters.categories[0].value
        (4, 'debugging')
        >>> options.replace(top_k=5, weights=ReplayWeights.for_phase("early")).top_k
        5

    Attributes:
        top_k: How many episodes to return at most, at least 1. The relevance
            ranking returns fewer, or none, when fewer candidates are relevant.
        fetch_k: Candidates fetched by similarity before ranking, at least ``top_k``;
            when ``None``, ``2 * top_k`` (the article's), and ``4 * top_k`` for
            ``"relevance"`` with ``use_utility`` once credit has evidence (room for
            credit to choose; `candidate_count`).
        weights: Priority weights; the article's defaults when ``None``. The
            relevance ranking mixes their recency, reward and outcome parts into
            each episode's value.
        half_life: Recency half-life in seconds; ``None`` means the ranking's own
            (30 days for ``"relevance"``, the article's one day for ``"article"``).
        min_similarity: Similarity floor in [-1, 1]. ``None`` means the ranking's
            own: the floor suited to the memory's embedder
            (`relevance_floor_for`) for
            ``"relevance"``, no floor for ``"article"``.
        ranking: ``"relevance"`` (default): candidates must pass the relevance test
            (the floor and the task's background, calibrated per embedder), then
            value and credit order them (`langchain_episodic.scoring.relevance`).
            ``"article"``: the source article's additive priority, exactly as it
            defines it.
        relevance_margin: How far below the most similar candidate a relevant one
            may lie, an extra rule on top of the calibrated test; ``None`` (the
            default): no such rule. ``0.15`` gives the margin of earlier releases.
            Only for ``"relevance"``.
        use_utility: Let credit (`langchain_episodic.scoring.credit`) scale each
            relevant episode's priority by how much recalling it has helped earlier
            runs (near-duplicates share their evidence,
            `langchain_episodic.scoring.evidence`). Only for ``"relevance"``;
            the article's ranking ignores it.
        use_lift: Let the lift decide how much to show: where the latest holdout runs
            say memory confidently hurts (the task's category, or every category:
            `memory_hurts`), recall returns only
            what worked, at most one episode, until it stops hurting;
            ``memory.runs.lift().backing_off`` says where. Only for ``"relevance"``, and only
            for a memory with ``holdout`` runs (nothing else can tell).
        explore: Rank by a draw from each candidate's utility posterior instead of
            its mean (Thompson sampling, with the memory's ``rng``): episodes with
            little evidence get shown now and then. Off by default: in the credit
            simulation the mean did better. Only with ``use_utility``.
        filters: Restrict candidates: an `EpisodeFilter`, or a dict in Chroma's
            ``where`` syntax over category, outcome, strategy, reward, pass rate and
            timestamp (`EpisodeFilter.from_where`).
        current_time: "Now" in seconds for recency; the memory's clock when ``None``.
        principal: Who the recall is for (``EpisodeSource.principal``): in a shared
            memory (``EpisodicMemory(shared=True)``) that principal's own episodes are
            not held to the cap on one principal's share of a replay. The middleware
            sets it from its ``principal=``. Ignored by a memory that is not shared.
        category: Init-only shorthand for ``filters=EpisodeFilter(category=...)``.
        outcome: Init-only shorthand for ``filters=EpisodeFilter(outcome=...)``.
    """

    top_k: int = 3
    fetch_k: int | None = None
    weights: ReplayWeights | None = None
    half_life: float | None = None
    min_similarity: float | None = None
    filters: EpisodeFilter | None = None
    current_time: float | None = None
    ranking: Ranking = DEFAULT_RANKING
    relevance_margin: float | None = None
    use_utility: bool = True
    use_lift: bool = True
    explore: bool = False
    principal: str | None = None
    category: InitVar[CategoryArg] = None
    outcome: InitVar[OutcomeArg] = None

    def __post_init__(self, category: CategoryArg, outcome: OutcomeArg) -> None:
        check_int("top_k", self.top_k, 1)
        if self.fetch_k is not None:
            check_int("fetch_k", self.fetch_k, self.top_k)
        if self.weights is not None and not isinstance(self.weights, ReplayWeights):
            msg = f"weights={self.weights!r} is invalid: must be a ReplayWeights"
            raise TypeError(msg)
        if self.half_life is not None:
            object.__setattr__(self, "half_life", check_half_life(self.half_life))
        if self.ranking not in ("relevance", "article"):
            msg = f"ranking={self.ranking!r} is invalid: must be 'relevance' or 'article'"
            raise EpisodicValueError(msg)
        for flag in ("use_utility", "use_lift", "explore"):
            if not isinstance(getattr(self, flag), bool):
                msg = f"{flag}={getattr(self, flag)!r} is invalid: must be True or False"
                raise TypeError(msg)
        if self.relevance_margin is not None:
            margin = check_number("relevance_margin", self.relevance_margin, 0.0, 2.0)
            if self.ranking == "article":
                msg = (
                    f"relevance_margin={margin!r} is invalid with ranking='article': the margin "
                    "belongs to the relevance ranking (drop it, or use ranking='relevance')"
                )
                raise EpisodicValueError(msg)
            object.__setattr__(self, "relevance_margin", margin)
        if self.min_similarity is not None:
            floor = check_number("min_similarity", self.min_similarity, -1.0, 1.0)
            object.__setattr__(self, "min_similarity", floor)
        if self.current_time is not None:
            object.__setattr__(self, "current_time", check_time("current_time", self.current_time))
        principal = self.principal
        if principal is not None and (not isinstance(principal, str) or not principal.strip()):
            msg = f"principal={principal!r} is invalid: must be a non-empty string or None"
            raise EpisodicValueError(msg)
        object.__setattr__(self, "filters", _checked_filters(self.filters, category, outcome))

    @property
    def recency_half_life(self) -> float:
        """``half_life``, or the ranking's own when it is ``None``."""
        if self.half_life is not None:
            return self.half_life
        return DEFAULT_HALF_LIFE if self.ranking == "article" else RELEVANCE_HALF_LIFE

    def relevance_floor(self, default: float = RELEVANCE_FLOOR) -> float:
        """The relevance ranking's floor: ``min_similarity``, or ``default``.

        The memory passes the floor suited to its embedder as ``default``.
        """
        return default if self.min_similarity is None else self.min_similarity

    @property
    def margin(self) -> float | None:
        """The relevance ranking's margin below the best: ``relevance_margin`` (``None``: none)."""
        return self.relevance_margin

    @property
    def fetch_count(self) -> int:
        """Candidates to fetch without credit evidence: ``fetch_k``, or twice ``top_k``."""
        return self.candidate_count(learning=False)

    @property
    def learns(self) -> bool:
        """Whether credit orders the candidates: ``"relevance"`` with ``use_utility``."""
        return self.ranking == "relevance" and self.use_utility

    def candidate_count(self, learning: bool) -> int:
        """Candidates to fetch: ``fetch_k``, or a multiple of ``top_k`` when ``None``.

        Four times ``top_k`` (`RELEVANCE_FETCH_FACTOR`) when ``learning`` (the
        memory has credit evidence) and the ranking uses it, twice (the article's)
        otherwise.

        Examples:
            >>> options = RecallOptions()
            >>> options.candidate_count(learning=False), options.candidate_count(learning=True)
            (6, 12)
            >>> RecallOptions(ranking="article").candidate_count(learning=True)
            6
        """
        if self.fetch_k is not None:
            return self.fetch_k
        factor = RELEVANCE_FETCH_FACTOR if learning and self.learns else 2
        return factor * self.top_k

    def replace(self, **changes: Any) -> RecallOptions:
        """A copy with ``changes`` applied and validated.

        ``category=`` / ``outcome=`` replace the whole filter. A ``fetch_k`` smaller
        than a new ``top_k`` falls back to the default (twice ``top_k``).

        Raises:
            TypeError: A name is not an option; the message lists the options.
        """
        unknown = sorted(set(changes) - RECALL_OPTION_NAMES)
        if unknown:
            msg = f"unknown recall option(s) {unknown}; known: {sorted(RECALL_OPTION_NAMES)}"
            raise TypeError(msg)
        if "fetch_k" not in changes and "top_k" in changes and self.fetch_k is not None:
            # A fetch_k chosen for a smaller top_k would now be refused: keep it only if valid.
            changes["fetch_k"] = self.fetch_k if self.fetch_k >= changes["top_k"] else None
        if ("category" in changes or "outcome" in changes) and "filters" not in changes:
            changes["filters"] = None  # the shorthands replace the filter, as a new one would
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(
        cls, base: RecallOptions | None = None, changes: Mapping[str, Any] | None = None
    ) -> RecallOptions:
        """``base`` (the defaults when ``None``) with the options in ``changes`` applied.

        Raises:
            TypeError: ``base`` is not a ``RecallOptions``, ``changes`` is not a
                mapping, or it names an unknown option.
        """
        if base is not None and not isinstance(base, RecallOptions):
            msg = f"options={base!r} is invalid: must be a RecallOptions"
            raise TypeError(msg)
        if changes is not None and not isinstance(changes, Mapping):
            msg = f"recall options={changes!r} are invalid: must be a mapping"
            raise TypeError(msg)
        options = base if base is not None else cls()
        return options.replace(**changes) if changes else options


RECALL_OPTION_NAMES = frozenset(
    [field.name for field in dataclasses.fields(RecallOptions)] + ["category", "outcome"]
)
"""Every keyword `RecallOptions` accepts."""


class RecallKeywords(TypedDict, total=False):
    """The keyword-only options of `recall`.

    Each is the `RecallOptions` field of the same name (documented there).
    """

    min_similarity: float | None
    filters: EpisodeFilter | None
    category: CategoryArg
    outcome: OutcomeArg
    ranking: Ranking
    relevance_margin: float | None
    use_utility: bool
    use_lift: bool
    explore: bool


def _checked_filters(
    filters: object, category: CategoryArg, outcome: OutcomeArg
) -> EpisodeFilter | None:
    """``filters`` as an `EpisodeFilter` (a dict read as Chroma's where), or the shorthands'."""
    if isinstance(filters, Mapping):
        filters = EpisodeFilter.from_where(filters)
    if filters is not None and not isinstance(filters, EpisodeFilter):
        msg = (
            f"filters={filters!r} is invalid: must be an EpisodeFilter or a dict in "
            "Chroma's where syntax"
        )
        raise TypeError(msg)
    if category is None and outcome is None:
        return filters
    if filters is not None:
        msg = "pass either filters=... or category=/outcome=, not both"
        raise TypeError(msg)
    return EpisodeFilter(category=category, outcome=outcome)
