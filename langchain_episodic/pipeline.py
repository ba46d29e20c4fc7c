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

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.runnables.config import run_in_executor

from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import OutcomeStatus, TaskDescription, as_task
from langchain_episodic.model.lesson import Lesson
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import (
    DEFAULT_MAX_TOKENS,
    ReplayRenderer,
    approximate_token_count,
    checked_token_counter,
)
from langchain_episodic.prompting.lessons import render_lessons
from langchain_episodic.prompting.renderers import (
    RendererArg,
    presentation_of,
    presentation_renderer,
    presentations_differ,
    render,
    resolve_renderer,
)
from langchain_episodic.scoring.options import RELEVANCE_FETCH_FACTOR, RecallOptions
from langchain_episodic.scoring.presentation import DEFAULT_PRESENTATION, PresentationChoice
from langchain_episodic.scoring.priority import PrioritizedResult, ReplayWeights
from langchain_episodic.scoring.ranking import RecallReport
from langchain_episodic.scoring.relevance import DEFAULT_RANKING, Ranking
from langchain_episodic.scoring.skills import MIN_WEAK_EPISODES, WEAK_THRESHOLD
from langchain_episodic.scoring.strategy import (
    DEFAULT_EVIDENCE_K,
    HIERARCHY_EVIDENCE_K,
    Exploration,
    StrategyChoice,
    complexity_strategy,
    strategy_evidence,
    strategy_for_report,
    thompson_sample,
)

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory

_log = logging.getLogger(__name__)

DEFAULT_LESSON_K = 2
"""Lessons a replay shows above its episodes, at most."""

__all__ = [
    "Replay",
    "abuild_replay",
    "areplay_prompt",
    "as_task",
    "build_replay",
    "choose_strategy",
    "replay_prompt",
    "replay_renderer",
    "select_strategy",
    "select_strategy_thompson",
]


@dataclass(frozen=True)
class Replay:
    """What one recall gives a model: the replay prompt and, when asked, a strategy.

    Attributes:
        task: The task recalled for.
        results: The recalled episodes the prompt was rendered from, best-ranked first:
            recall's ``top_k``, or what the renderer selected among every relevant
            candidate (the compact renderer: what worked first).
        prompt: The replay prompt
            (`format_replay_prompt`).
        strategy: The strategy chosen from the same recall and the memory's skill
            profiles, or ``None`` when not asked for.
        run_id: The run the shown episodes were noted for, or ``None``.
        lessons: The lessons shown above the episodes, best first.
        holdout: The run is a holdout run (the memory's ``holdout``): shown no
            memory by chance, so that credit and the lift report have a baseline.
        shown: The ids of the episodes the prompt shows, in its order (the renderer
            may leave some results out, or show what worked first).
        withheld: The relevant episodes recall found that the prompt does not show
            (the renderer's policy, e.g. an attempt nothing fixed, or the token
            budget), best-ranked first: an integration says so rather than "no match".
        report: The recall's report (what was turned away and why, the relevance
            threshold), or ``None`` for a holdout run, which recalls nothing.
        presentation: The presentation policy the prompt was shown with and why
            (learned for ``renderer="auto"``, ``"pinned"`` when named; see
            `presentation`), or ``None`` (a renderer
            of your own, the article's prompt, a holdout run).
    """

    task: TaskDescription
    results: tuple[PrioritizedResult, ...]
    prompt: str
    strategy: StrategyChoice | None = None
    run_id: str | None = None
    lessons: tuple[Lesson, ...] = ()
    holdout: bool = False
    shown: tuple[str, ...] = ()
    withheld: tuple[PrioritizedResult, ...] = ()
    report: RecallReport | None = None
    presentation: PresentationChoice | None = None

    @property
    def text(self) -> str:
        """What to inject: the prompt, then the strategy line when there is a strategy."""
        if self.strategy is None:
            return self.prompt
        line = self.strategy.prompt_line
        return f"{self.prompt}\n\n{line}" if self.prompt.strip() else line


def _evidence_k(options: RecallOptions) -> int:
    # The article's hierarchy reads the prompt's own results; the default counts more.
    return 0 if options.ranking == "article" else DEFAULT_EVIDENCE_K


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
    task = as_task(task)
    options = RecallOptions.from_mapping(options, option_fields)
    check_int("lesson_k", lesson_k, 0)
    chosen = replay_renderer(renderer, options)
    if near_misses is not None and not isinstance(chosen, CompactRenderer):
        msg = f"near_misses={near_misses!r} needs the compact renderer's policies, not {chosen!r}"
        raise EpisodicValueError(msg)
    if run_id is not None and memory.runs.is_holdout(run_id):
        return _holdout_replay(memory, task, run_id, thread_id, include_strategy)
    choice = _presentation(memory, task, renderer, chosen, run_id)
    if choice is not None and choice.reason != "pinned":
        chosen = presentation_renderer(choice.policy)
    if near_misses is not None and isinstance(chosen, CompactRenderer):
        chosen = dataclasses.replace(chosen, near_misses=near_misses)
    select = getattr(chosen, "select", None)
    if select is not None and options.fetch_k is None and options.ranking == "relevance":
        # A renderer that selects chooses among every relevant candidate of the wider
        # pool (what worked may rank below more similar failures): fetch that pool.
        options = options.replace(fetch_k=RELEVANCE_FETCH_FACTOR * options.top_k)
    report = memory._report(
        task,
        options,
        evidence_k=_evidence_k(options) if include_strategy else 0,
        lesson_k=lesson_k,
        # A renderer that selects sees every relevant candidate (what worked can come
        # first even where more similar failures outrank it); the others, the top_k.
        keep=None if select is None else options.candidate_count(learning=True),
    )
    results = report.results if select is None else tuple(select(report.results, options.top_k))
    token_counter = checked_token_counter(token_counter)
    lessons, section = _fit_lessons(report.lessons, max_tokens, token_counter)
    budget = max_tokens
    if section and max_tokens is not None:
        budget = max(1, max_tokens - token_counter(section + "\n\n"))
    rendered = render(chosen, results, task, max_tokens=budget, token_counter=token_counter)
    prompt = rendered.text
    if section:
        prompt = f"{section}\n\n{prompt}" if prompt else section
    strategy = (
        strategy_for_report(task, report, memory.skill_profiles()) if include_strategy else None
    )
    if run_id is not None:
        shown = [lesson.lesson_id for lesson in lessons] + list(rendered.shown)
        try:
            recalled = {result.episode.episode_id for result in results}
            # Evidence for the policy only where the policies would have shown
            # different episodes: elsewhere the run says nothing about the choice.
            # Nor for a choice nothing drew by chance (the prior, before outcomes).
            policy = None
            if (
                choice is not None
                and choice.reason != "prior"
                and presentations_differ(report.results, options.top_k, choice.policy)
            ):
                policy = choice.policy
            memory.runs.note(
                run_id, shown, task, thread_id=thread_id, known_stored=recalled, policy=policy
            )
        except Exception:  # credit must never break the run it observes
            _log.warning("could not note the injection of run_id=%r", run_id, exc_info=True)
    shown_set = set(rendered.shown)
    return Replay(
        task=task,
        results=results,
        prompt=prompt,
        strategy=strategy,
        run_id=run_id,
        lessons=lessons,
        shown=rendered.shown,
        withheld=tuple(
            r for r in report.results if r.relevant and r.episode.episode_id not in shown_set
        ),
        report=report,
        presentation=choice,
    )


def _presentation(
    memory: EpisodicMemory,
    task: TaskDescription,
    asked: RendererArg,
    chosen: ReplayRenderer,
    run_id: str | None,
) -> PresentationChoice | None:
    """The presentation policy of a replay: learned for ``"auto"``, pinned when named.

    ``None`` for a renderer that is no policy's (the article's prompt, your own).
    """
    policy = presentation_of(chosen)
    if policy is None:
        return None
    if asked != "auto" or policy != DEFAULT_PRESENTATION:
        # Named, or asked for by a filter (outcome="failure" shows failures): kept.
        return PresentationChoice(policy, "pinned")
    return memory.runs.presentation(task.category, run_id=run_id)


def replay_renderer(renderer: RendererArg, options: RecallOptions) -> ReplayRenderer:
    """The renderer a replay with ``options`` uses for ``renderer`` (a name, or your own).

    `resolve_renderer` by the options'
    ranking; a filter that asks for failed or partial attempts only (``outcome=
    "failure"``) makes ``"auto"`` show them.

    Examples:
        >>> replay_renderer("auto", RecallOptions(outcome="failure"))
        CompactRenderer(failures='feedback', near_misses=None, ranked=False)
    """
    outcomes = None if options.filters is None else options.filters.outcomes
    return resolve_renderer(
        renderer,
        options.ranking,
        asks_for_failures=outcomes is not None and OutcomeStatus.SUCCESS not in outcomes,
    )


def _holdout_replay(
    memory: EpisodicMemory,
    task: TaskDescription,
    run_id: str,
    thread_id: str | None,
    include_strategy: bool,
) -> Replay:
    """What a holdout run gets: no recall, no prompt, the memory-free strategy."""
    try:
        memory.runs.note(run_id, [], task, thread_id=thread_id, holdout=True)
    except Exception:  # credit must never break the run it observes
        _log.warning("could not note the holdout run_id=%r", run_id, exc_info=True)
    strategy = StrategyChoice(complexity_strategy(task), "holdout") if include_strategy else None
    return Replay(task, (), "", strategy, run_id, holdout=True)


def _fit_lessons(
    lessons: tuple[Lesson, ...], max_tokens: int | None, count: Callable[[str], int]
) -> tuple[tuple[Lesson, ...], str]:
    """The lessons that fit in half the budget (the best first), and their section."""
    for shown in range(len(lessons), 0, -1):
        section = render_lessons(lessons[:shown])
        if max_tokens is None or count(section) <= max_tokens // 2:
            return lessons[:shown], section
    return (), ""


def shown_ids(results: tuple[PrioritizedResult, ...], prompt: str) -> list[str]:
    """The ids of the ``results`` that the detailed ``prompt`` shows, in its order.

    The detailed prompt shows relevant results first, then the rest, and a token budget
    may leave the last ones out; stored text never forms an ``<experience`` tag (the
    prompt escapes it), so the tags count the episodes shown. Other renderers say what
    they show: `Replay.shown`.
    """
    ordered = [r for r in results if r.relevant] + [r for r in results if not r.relevant]
    return [r.episode.episode_id for r in ordered[: prompt.count("<experience")]]


async def abuild_replay(
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
    """Async twin of `build_replay`: the whole pipeline in one executor hop."""
    return await run_in_executor(
        None,
        lambda: build_replay(
            memory,
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
        ),
    )


def replay_prompt(memory: EpisodicMemory, task: TaskDescription | str, **kwargs: Any) -> str:
    r"""The text `build_replay` would inject: ``build_replay(...).text``.

    Examples:
        ```python
        system_prompt += "\\n\\n" + replay_prompt(memory, "Add OAuth login", max_tokens=600)
        ```
    """
    return build_replay(memory, task, **kwargs).text


async def areplay_prompt(memory: EpisodicMemory, task: TaskDescription | str, **kwargs: Any) -> str:
    """Async twin of `replay_prompt`."""
    return (await abuild_replay(memory, task, **kwargs)).text


# ------------------------------------------------------------------ strategy choices


def _thompson_choice(
    task: TaskDescription,
    memory: EpisodicMemory,
    current_time: float | None,
    weights: ReplayWeights | None,
    rng: np.random.Generator | None,
    evidence_k: int,
) -> StrategyChoice:
    check_int("evidence_k", evidence_k, 1)
    # fetch_k = top_k: the evidence is the evidence_k most similar episodes. Re-ranking a
    # wider pool by priority would drop failures first (reward and outcome raise the
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
    if exploration is not None:
        if exploration != "thompson":
            msg = f"exploration={exploration!r} is invalid: must be None or 'thompson'"
            raise EpisodicValueError(msg)
        return _thompson_choice(task, memory, current_time, weights, rng, evidence_k)
    check_int("evidence_k", evidence_k, 1)
    options = RecallOptions(
        top_k=HIERARCHY_EVIDENCE_K, current_time=current_time, weights=weights, ranking=ranking
    )
    report = memory._report(task, options, evidence_k=0 if ranking == "article" else evidence_k)
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
