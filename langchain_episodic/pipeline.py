r"""The replay pipeline: one recall gives the prompt and, when asked, the strategy.

Every LangChain integration (middleware, runnable, classic memory, recall tool)
builds what it injects with `build_replay`, so they all show the same prompt
for the same task and options, and none recalls twice.

Examples:
    ```python
    from langchain_episodic import build_replay

    replay = build_replay(memory, "Add OAuth login", max_tokens=600, include_strategy=True)
    system_prompt += "\n\n" + replay.text
    replay.strategy.strategy  # e.g. "iterative"
    ```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_episodic._async import async_twin
from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import TaskDescription, as_task
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from langchain_episodic.prompting.renderers import RendererArg
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import ReplayWeights
from langchain_episodic.scoring.relevance import DEFAULT_RANKING, Ranking
from langchain_episodic.scoring.skills import MIN_WEAK_EPISODES, WEAK_THRESHOLD
from langchain_episodic.scoring.strategy import (
    DEFAULT_EVIDENCE_K,
    HIERARCHY_EVIDENCE_K,
    Exploration,
    StrategyChoice,
    strategy_evidence,
    strategy_for_report,
    thompson_sample,
)
from langchain_episodic.service.replay import DEFAULT_LESSON_K, Replay, replay_renderer

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory

__all__ = [
    "Replay",
    "abuild_replay",
    "as_task",
    "build_replay",
    "choose_strategy",
    "replay_renderer",
    "select_strategy",
    "select_strategy_thompson",
]


def build_replay(
    memory: EpisodicMemory,
    task: TaskDescription | str,
    options: RecallOptions | None = None,
    *,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    token_counter: Callable[[str], int] = approximate_token_count,
    include_strategy: bool = False,
    run_id: str | None = None,
    thread_id: str | None = None,
    lesson_k: int = DEFAULT_LESSON_K,
    renderer: RendererArg = "auto",
    near_misses: float | None = None,
    **option_fields: Any,
) -> Replay:
    """Recall once for ``task`` and build the replay prompt (and strategy) from it.

    The strategy, when asked for, comes from the same search, by the rule of the
    options' ranking (`strategy_for_report`): by
    default the evidence of the most similar relevant episodes, with
    ``ranking="article"`` the article's hierarchy over the episodes the prompt
    shows. The caller's options (filters, time, weights) apply to both.

    Args:
        memory: Where to recall from.
        task: The new task.
        options: Recall options; the defaults when ``None``.
        max_tokens: Token budget of the prompt (the strategy line is extra):
            `DEFAULT_MAX_TOKENS` by default,
            ``None`` for no budget.
        token_counter: Counts tokens for the budget, e.g. ``model.get_num_tokens``.
        include_strategy: Also choose a strategy.
        run_id: The run the prompt is for. When given, the episodes it shows are
            noted (`note`), so
            the run's outcome can credit them later
            (`credit`). A failure to note
            is logged, never raised: the prompt is built regardless.
        thread_id: The conversation thread, noted with the run.
        lesson_k: Lessons (`langchain_episodic.model.lesson`) to show above the
            episodes, from the same query vector: the active ones whose similarity
            reaches the relevance floor, best first. They take at most half of
            ``max_tokens``; ``0`` for none. A memory without lessons shows none.
        renderer: How the episodes become text
            (`renderers`): ``"auto"`` (default:
            for the default ranking, the presentation policy the memory learned from
            its credited runs, ``"compact"`` until they say otherwise, drawn by
            Thompson sampling for a named run so that its outcome keeps teaching;
            the article's ``"detailed"`` prompt for ``ranking="article"``); a
            policy's name (``"compact"``, ``"feedback"``, ``"ranked"``) pins it;
            ``"detailed"``; or your own.
        near_misses: Also show a failed or partial attempt whose tests passed at
            least this share, with its code, marked ``near_miss="true"`` (the recall
            tool's 0.8; the compact renderer's policies only); ``None``: no such rule.
        **option_fields: Recall options to set on top of ``options`` (``top_k=3``,
            ``category="debugging"``, ...; see `RecallOptions`).

    Returns:
        The `Replay`; inject ``replay.text``.

    Raises:
        TypeError: An unknown recall option, or one of the wrong type.
        EpisodicValueError: ``task`` or an option value is invalid.

    Examples:
        >>> from langchain_episodic import EpisodicMemory, build_replay
        >>> from langchain_episodic.stores import InMemoryEpisodeStore
        >>> replay = build_replay(EpisodicMemory(store=InMemoryEpisodeStore()), "Add a signup form",
        ...                       include_strategy=True, top_k=2)
        >>> replay.results, replay.strategy.strategy
        ((), 'iterative')
    """
    return memory.replay.build(
        task,
        options,
        max_tokens=max_tokens,
        token_counter=token_counter,
        include_strategy=include_strategy,
        run_id=run_id,
        thread_id=thread_id,
        lesson_k=lesson_k,
        renderer=renderer,
        near_misses=near_misses,
        **option_fields,
    )


abuild_replay = async_twin(build_replay)
abuild_replay.__doc__ = "Async twin of `build_replay`: the whole pipeline in one executor hop."


# ------------------------------------------------------------------ strategy choices


def choose_strategy(
    task: TaskDescription | str,
    memory: EpisodicMemory,
    current_time: float | None = None,
    *,
    proven_threshold: float = 0.6,
    weak_threshold: float = WEAK_THRESHOLD,
    min_category_episodes: int = MIN_WEAK_EPISODES,
    weights: ReplayWeights | None = None,
    exploration: Exploration | None = None,
    rng: np.random.Generator | None = None,
    evidence_k: int = DEFAULT_EVIDENCE_K,
    ranking: Ranking = DEFAULT_RANKING,
) -> StrategyChoice:
    """Like `select_strategy`, but also says which level decided.

    Args:
        task: The new task.
        memory: Where past episodes are recalled from.
        current_time: "Now" in seconds; the memory's clock when ``None``.
        proven_threshold: Level 1 applies when the recalled success rate exceeds it.
        weak_threshold: A category is weak below this graded success rate
            (`is_weak`).
        min_category_episodes: Episodes a category needs before it can count as weak.
        weights: Priority weights of the recall (e.g. ``ReplayWeights.for_phase("early")``);
            the article's defaults when ``None``.
        exploration: ``None`` (default) follows the article's hierarchy; ``"thompson"``
            replaces it by Thompson sampling over the outcomes of the ``evidence_k``
            most similar episodes (see `select_strategy_thompson`).
        rng: Randomness for exploration; a fresh unseeded generator when ``None``.
        evidence_k: Episodes recalled as evidence for exploration.
        ranking: ``"relevance"`` (default): level 1 is the evidence of the
            ``evidence_k`` most similar relevant episodes; ``"article"``: the
            article's hierarchy over its 5 best-ranked. Exploration always counts
            the ``evidence_k`` most similar.

    Raises:
        EpisodicValueError: ``exploration`` is not ``None`` or ``"thompson"``, or
            ``evidence_k`` is below 1.

    Examples:
        >>> from langchain_episodic import EpisodicMemory, TaskDescription
        >>> from langchain_episodic.stores import InMemoryEpisodeStore
        >>> memory = EpisodicMemory(store=InMemoryEpisodeStore())
        >>> choose_strategy(TaskDescription("Design a plugin system", complexity=0.9), memory)
        StrategyChoice(strategy='iterative', reason='complexity')
    """
    if isinstance(task, str):
        task = TaskDescription(task)
    if exploration not in (None, "thompson"):
        msg = f"exploration={exploration!r} is invalid: must be None or 'thompson'"
        raise EpisodicValueError(msg)
    check_int("evidence_k", evidence_k, 1)
    if exploration == "thompson":
        # fetch_k = top_k: the evidence is the evidence_k most similar episodes. Re-ranking
        # a wider pool by priority would drop failures first (reward and outcome raise the
        # priority) and inflate every success count.
        results = memory.recall(
            task.description,
            top_k=evidence_k,
            current_time=current_time,
            weights=weights,
            fetch_k=evidence_k,
            # The evidence is the evidence_k most similar episodes, as documented: the
            # article's ranking with fetch_k == top_k only reorders them, the relevance
            # test would thin the evidence (measured: +22.3 -> +10.1 in the simulation).
            ranking="article",
        )
        evidence = strategy_evidence(result.episode for result in results)
        generator = rng if rng is not None else np.random.default_rng()
        return StrategyChoice(thompson_sample(evidence, generator), "thompson")
    options = RecallOptions(
        top_k=HIERARCHY_EVIDENCE_K, current_time=current_time, weights=weights, ranking=ranking
    )
    report = memory.replay.report(
        task, options, evidence_k=0 if ranking == "article" else evidence_k
    )
    return strategy_for_report(
        task,
        report,
        memory.skill_profiles(),
        proven_threshold=proven_threshold,
        weak_threshold=weak_threshold,
        min_category_episodes=min_category_episodes,
    )


def select_strategy(
    task: TaskDescription | str,
    memory: EpisodicMemory,
    current_time: float | None = None,
) -> str:
    """Pick a strategy name from `STRATEGY_POOL` for ``task``, using ``memory``.

    The default rule of `choose_strategy`: the best-supported strategy among
    the relevant similar episodes, else weakness, else complexity.

    Returns:
        A key of `STRATEGY_POOL`.
    """
    return choose_strategy(task, memory, current_time).strategy


def select_strategy_thompson(
    task: TaskDescription | str,
    memory: EpisodicMemory,
    rng: np.random.Generator,
    current_time: float | None = None,
    *,
    evidence_k: int = DEFAULT_EVIDENCE_K,
    weights: ReplayWeights | None = None,
) -> str:
    """Pick a strategy by Thompson sampling over the outcomes of similar episodes.

    Recalls the ``evidence_k`` episodes most similar to ``task``, counts each pool
    strategy's graded successes and failures among them (`strategy_evidence`), draws
    a success rate per strategy from ``Beta(1 + successes, 1 + failures)`` and
    returns the strategy with the highest draw (`thompson_sample`). Unlike
    `select_strategy`, every strategy of `STRATEGY_POOL` can be chosen,
    including ones no recalled episode used.

    Args:
        task: The new task.
        memory: Where past episodes are recalled from.
        rng: Randomness, e.g. ``np.random.default_rng(seed)``; seeded, the choice is
            reproducible.
        current_time: "Now" in seconds; the memory's clock when ``None``.
        evidence_k: How many similar episodes to count outcomes over.
        weights: Priority weights that order the recalled episodes.

    Returns:
        A key of `STRATEGY_POOL`.
    """
    if not isinstance(rng, np.random.Generator):
        msg = f"rng={rng!r} is invalid: must be a numpy.random.Generator"
        raise TypeError(msg)
    return choose_strategy(
        task,
        memory,
        current_time,
        weights=weights,
        exploration="thompson",
        rng=rng,
        evidence_k=evidence_k,
    ).strategy
