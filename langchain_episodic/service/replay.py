"""The replay: one recall gives the prompt, the lessons above it and, when asked, a strategy.

`Replays` is what `memory.replay` is, and what every integration's prompt comes from
(`build_replay` is the public function over it): the holdout draw, the presentation
policy (learned from credited runs), one search for episodes, lessons and strategy
evidence, the renderer within a token budget, and the note that lets the run's outcome
credit what it was shown.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from langchain_episodic._async import async_twin
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
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import RecallReport
from langchain_episodic.scoring.skills import SkillProfile, profiles_from_tallies
from langchain_episodic.scoring.strategy import (
    DEFAULT_EVIDENCE_K,
    StrategyChoice,
    complexity_strategy,
    strategy_for_report,
)
from langchain_episodic.service.credit import Runs
from langchain_episodic.service.recall import Recall
from langchain_episodic.service.summary import Summary
from langchain_episodic.service.tracing import Trace, traced

_log = logging.getLogger(__name__)

DEFAULT_LESSON_K = 2
"""Lessons a replay shows above its episodes, at most."""

__all__ = ["DEFAULT_LESSON_K", "Replay", "ReplaySource", "Replays", "replay_renderer"]


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


def _fit_lessons(
    lessons: tuple[Lesson, ...], max_tokens: int | None, count: Callable[[str], int]
) -> tuple[tuple[Lesson, ...], str]:
    """The lessons that fit in half the budget (the best first), and their section."""
    for shown in range(len(lessons), 0, -1):
        section = render_lessons(lessons[:shown])
        if max_tokens is None or count(section) <= max_tokens // 2:
            return lessons[:shown], section
    return (), ""


class Replays:
    """One namespace's replays, over its recall, its runs and its summary.

    Reached as ``memory.replay``; `build_replay` is the public function over
    `Replays.build`, and every LangChain integration builds its prompt with it.

    Examples:
        >>> from langchain_episodic import EpisodicMemory
        >>> replay = EpisodicMemory().replay.build("Add a signup form", top_k=2)
        >>> replay.text, replay.shown
        ('', ())
    """

    def __init__(self, recall: Recall, runs: Runs, summary: Summary) -> None:
        self._recall = recall
        self._runs = runs
        self._summary = summary

    def __repr__(self) -> str:
        return "<replays of one namespace>"

    def report(
        self,
        task: str | TaskDescription,
        options: RecallOptions,
        *,
        evidence_k: int = 0,
        lesson_k: int = 0,
        keep: int | None = None,
    ) -> RecallReport:
        """The recall a replay (or a strategy) reads: ``recall(..., explain=True)``, and more.

        The same search also returns up to ``evidence_k`` most similar episodes at or
        above the relevance floor as ``neighbours`` (a strategy's evidence) and
        ``lesson_k`` lessons; the results are unchanged by either. ``keep``: return up
        to this many ranked results instead of ``options.top_k`` (the same candidates,
        ranked the same; a renderer that selects chooses among them).
        """
        return self._recall.report(
            as_task(task, "query"), options, evidence_k=evidence_k, lesson_k=lesson_k, keep=keep
        )

    def _skill_profiles(self) -> tuple[SkillProfile, ...]:
        """The namespace's per-category skill profiles, from its kept tallies."""
        return profiles_from_tallies(self._summary.tallies)

    def build(
        self,
        /,
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

        What `build_replay` does (its arguments, less the memory, are these). Traced as
        an ``episodic_replay`` run around its ``episodic_recall``
        (`langchain_episodic.service.tracing`): what was shown, what was withheld and
        why, the holdout flag, the presentation policy, the lessons.
        """
        task = as_task(task)
        inputs: dict[str, object] = {"category": task.category.value, "run_id": run_id}
        if self._recall.trace_content:
            inputs["task"] = task.description
        with traced("replay", self._recall.namespace, inputs) as trace:
            return self._build(
                task,
                options,
                trace,
                max_tokens=max_tokens,
                token_counter=token_counter,
                include_strategy=include_strategy,
                run_id=run_id,
                thread_id=thread_id,
                lesson_k=lesson_k,
                renderer=renderer,
                near_misses=near_misses,
                option_fields=option_fields,
            )

    def _build(
        self,
        task: TaskDescription,
        options: RecallOptions | None,
        trace: Trace,
        *,
        max_tokens: int | None,
        token_counter: Callable[[str], int],
        include_strategy: bool,
        run_id: str | None,
        thread_id: str | None,
        lesson_k: int,
        renderer: RendererArg,
        near_misses: float | None,
        option_fields: dict[str, Any],
    ) -> Replay:
        options = RecallOptions.from_mapping(options, option_fields)
        check_int("lesson_k", lesson_k, 0)
        chosen = replay_renderer(renderer, options)
        if near_misses is not None and not isinstance(chosen, CompactRenderer):
            msg = (
                f"near_misses={near_misses!r} needs the compact renderer's policies, not {chosen!r}"
            )
            raise EpisodicValueError(msg)
        if run_id is not None and self._runs.is_holdout(run_id):
            replay = self._holdout(task, run_id, thread_id, include_strategy)
            if trace.active:
                trace.done(
                    {"run_id": run_id, "holdout": True, "shown": [], "withheld": []},
                    {"episodic.run_id": run_id, "episodic.holdout": True},
                )
            return replay
        choice = self._presentation(task, renderer, chosen, run_id)
        if choice is not None and choice.reason != "pinned":
            chosen = presentation_renderer(choice.policy)
        if near_misses is not None and isinstance(chosen, CompactRenderer):
            chosen = dataclasses.replace(chosen, near_misses=near_misses)
        select = getattr(chosen, "select", None)
        if select is not None and options.fetch_k is None and options.ranking == "relevance":
            # A renderer that selects chooses among every relevant candidate of the wider
            # pool (what worked may rank below more similar failures): fetch that pool.
            options = options.replace(fetch_k=RELEVANCE_FETCH_FACTOR * options.top_k)
        report = self._recall.report(
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
            strategy_for_report(task, report, self._skill_profiles()) if include_strategy else None
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
                self._runs.note(
                    run_id, shown, task, thread_id=thread_id, known_stored=recalled, policy=policy
                )
            except Exception:  # credit must never break the run it observes
                _log.warning("could not note the injection of run_id=%r", run_id, exc_info=True)
        shown_set = set(rendered.shown)
        replay = Replay(
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
        if trace.active:
            # Withheld by the budget: what the same renderer shows with no budget.
            unbudgeted = set(
                render(chosen, results, task, max_tokens=None, token_counter=token_counter).shown
                if replay.withheld and budget is not None
                else rendered.shown
            )
            trace.done(*_replay_trace(replay, unbudgeted, content=self._recall.trace_content))
        return replay

    abuild = async_twin(build)

    def _presentation(
        self,
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
        return self._runs.presentation(task.category, run_id=run_id)

    def _holdout(
        self,
        task: TaskDescription,
        run_id: str,
        thread_id: str | None,
        include_strategy: bool,
    ) -> Replay:
        """What a holdout run gets: no recall, no prompt, the memory-free strategy."""
        try:
            self._runs.note(run_id, [], task, thread_id=thread_id, holdout=True)
        except Exception:  # credit must never break the run it observes
            _log.warning("could not note the holdout run_id=%r", run_id, exc_info=True)
        strategy = (
            StrategyChoice(complexity_strategy(task), "holdout") if include_strategy else None
        )
        return Replay(task, (), "", strategy, run_id, holdout=True)


@runtime_checkable
class ReplaySource(Protocol):
    """What the retriever and the runnable recall from: a memory, by its replays.

    `EpisodicMemory` is one (``memory.replay``); they need nothing else of it.
    """

    @property
    def replay(self) -> Replays:
        """The memory's replays."""
        ...


def _replay_trace(
    replay: Replay, unbudgeted: set[str], *, content: bool
) -> tuple[dict[str, object], dict[str, object]]:
    """A replay's trace outputs and span attributes: shown, withheld and why, lessons."""
    withheld = [
        {
            "episode_id": r.episode.episode_id,
            "similarity": round(r.similarity, 4),
            "reason": "budget" if r.episode.episode_id in unbudgeted else "policy",
        }
        for r in replay.withheld
    ]
    choice = replay.presentation
    outputs: dict[str, object] = {
        "run_id": replay.run_id,
        "holdout": replay.holdout,
        "presentation": None if choice is None else choice.policy,
        "presentation_reason": None if choice is None else choice.reason,
        "shown": list(replay.shown),
        "withheld": withheld,
        "lessons": [lesson.lesson_id for lesson in replay.lessons],
        "strategy": None if replay.strategy is None else replay.strategy.strategy,
    }
    if content:
        outputs["text"] = replay.text
    attributes: dict[str, object] = {
        "episodic.run_id": replay.run_id,
        "episodic.holdout": replay.holdout,
        "episodic.presentation": outputs["presentation"],
        "episodic.shown.ids": list(replay.shown),
        "episodic.shown.count": len(replay.shown),
        "episodic.withheld.count": len(withheld),
        "episodic.lessons.ids": outputs["lessons"],
    }
    return outputs, attributes
