"""A simulated world where lessons (reflection) are worth something, or mislead.

It builds on :mod:`~simulation.credit_world`: the same seeded
tasks, hidden variants, episode kinds and hidden episode effects
(:data:`~simulation.DIFFERENTIATED_WORLD` by default), with one
addition: a shown **lesson** (:mod:`langchain_episodic.model.lesson`) also changes the
task's success probability.

Hidden truth (what :class:`LessonWorld` sets; the agent never sees it):

* every sub-topic has a **fix**; a **good** lesson (its sources all share the
  sub-topic, so it carries the fix) adds ``good`` (+0.35 by default) to every task
  of the sub-topic its text describes: more than the best raw episode (a
  transferable fix, +0.30) and far more than an average one (about +0.10);
* a **bad** lesson (built from mixed sources: it draws the wrong conclusion, or
  another sub-topic's fix) adds ``bad`` (-0.30 by default) to every task of the
  sub-topic its text describes: it misleads exactly where it is recalled;
* a lesson shown on a task of another sub-topic does nothing;
* a lesson merged by :meth:`~langchain_episodic.EpisodicMemory.consolidate_lessons`
  is good only when every lesson it merged was good, and describes the sub-topic
  of the lesson whose text it keeps.

Lessons are written by the real :func:`~langchain_episodic.reflection.reflect`
with a :class:`~langchain_episodic.reflection.LessonWriter` around
:class:`ScriptedReflector`, a fake chat model (no model is called) whose
``with_structured_output`` answers :class:`~langchain_episodic.reflection.LessonDrafts`:
one lesson per call about the episode reflected on. With probability ``quality``
the lesson is good (sources: the batch's episodes of that sub-topic; its title is
the reflected task, so it is recalled for that kind of task), else bad (sources:
the reflected episode and the batch's episodes of other sub-topics when there are
any; the same kind of title, so it is recalled there too, and misleads). The draw
depends only on ``(seed, reflected episode)``, so a lesson that is good at quality
0.2 is good at 0.5 and 0.9 too. Every model call is counted.

Each simulated run: for each task, :func:`~langchain_episodic.build_replay` with
``lesson_k`` and a ``run_id`` (shown episodes and lessons are noted), attempt with
the hidden effects of what the prompt shows, record the episode, credit the run's
reward (lessons are credited like episodes, so credit can demote a misleading
lesson), reflect after every ``reflect_every``-th episode, and with
``consolidate_every`` consolidate lessons periodically. Tasks and the attempts'
luck depend only on ``(seed, task index)``: variants of one seed are paired. All
figures it produces are simulated, not measured on a model.

Example:
    .. code-block:: python

        from simulation import compare_lesson_variants, format_lesson_report

        comparison = compare_lesson_variants(n_tasks=100, seeds=(0, 1))
        print(format_lesson_report(comparison))
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, Field

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.lesson import MERGE_SIMILARITY, Lesson
from langchain_episodic.pipeline import build_replay
from langchain_episodic.reflection import (
    LessonDraft,
    LessonDrafts,
    LessonWriter,
    Reflection,
    reflect,
)
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore
from simulation.credit_world import (
    DIFFERENTIATED_WORLD,
    CreditWorld,
    CreditWorldEnvironment,
    HiddenEpisode,
    Interval,
    _table,
    t_interval,
)
from simulation.environment import (
    DEFAULT_SEEDS,
    START_TIME,
    TASK_INTERVAL,
    SimulatedTask,
)

__all__ = [
    "BASELINE_LESSON_VARIANT",
    "DEFAULT_LESSON_WORLD",
    "LESSON_VARIANTS",
    "HiddenLesson",
    "LessonComparison",
    "LessonRun",
    "LessonSummary",
    "LessonVariant",
    "LessonWorld",
    "LessonWorldEnvironment",
    "ScriptedReflector",
    "compare_lesson_variants",
    "format_lesson_report",
    "run_lesson_variant",
]

_QUALITY_SALT = 0x1E55
_GOOD, _BAD = "good_lesson", "bad_lesson"


# ------------------------------------------------------------------------------ world


@dataclass(frozen=True)
class LessonWorld:
    """What a shown lesson adds to the success probability of a task of its sub-topic.

    Attributes:
        good: A lesson whose sources share the sub-topic's fix (+0.35 by default:
            more than one raw episode, whose best kind adds +0.30).
        bad: A lesson built from mixed sources (-0.30 by default: it misleads).
        episodes: What the episodes hide (the credit world's).
    """

    good: float = 0.35
    bad: float = -0.30
    episodes: CreditWorld = DIFFERENTIATED_WORLD

    def __post_init__(self) -> None:
        for name in ("good", "bad"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not -1.0 <= value <= 1.0:
                msg = f"LessonWorld.{name}={value!r} is invalid: must be a number in [-1, 1]"
                raise EpisodicValueError(msg)


DEFAULT_LESSON_WORLD = LessonWorld()
"""Good lessons +0.35, bad ones -0.30, episodes as in the differentiated credit world."""


@dataclass(frozen=True)
class HiddenLesson(HiddenEpisode):
    """What the world knows about a stored lesson: shown like an episode, with its own effect.

    ``episode_id`` holds the lesson id, ``subtopic`` the sub-topic its text
    describes, ``kind`` is ``"good_lesson"`` or ``"bad_lesson"``; ``variant`` is
    unused (-1): a lesson's effect does not depend on the hidden variant.
    """

    @property
    def good(self) -> bool:
        """Whether its sources share the fix (it helps) rather than mislead."""
        return self.kind == _GOOD

    @classmethod
    def of(cls, lesson_id: str, subtopic: str, good: bool) -> HiddenLesson:
        """The hidden side of lesson ``lesson_id``."""
        return cls(lesson_id, subtopic, -1, _GOOD if good else _BAD)


class LessonWorldEnvironment(CreditWorldEnvironment):
    """:class:`~simulation.CreditWorldEnvironment` where shown lessons count too.

    ``shown`` may mix :class:`HiddenEpisode` and :class:`HiddenLesson` values: their
    effects add up, clipped to [0.02, 0.98], as in the credit world.

    Args:
        world: The lesson effects and the episodes' world.
        seed: Fixes tasks, variants, kinds and attempts (as in the credit world).
    """

    def __init__(self, world: LessonWorld | None = None, seed: int = 0) -> None:
        self.lesson_world = world if world is not None else DEFAULT_LESSON_WORLD
        if not isinstance(self.lesson_world, LessonWorld):
            msg = f"world={world!r} is invalid: must be a LessonWorld"
            raise TypeError(msg)
        super().__init__(self.lesson_world.episodes, seed)

    def __repr__(self) -> str:
        return f"LessonWorldEnvironment(world={self.world.name!r}, seed={self.seed})"

    def effect(self, episode: HiddenEpisode, task: SimulatedTask) -> float:
        """An episode's effect (the credit world's), or a lesson's (0 off its sub-topic)."""
        if not isinstance(episode, HiddenLesson):
            return super().effect(episode, task)
        if episode.subtopic != task.subtopic:
            return 0.0
        return self.lesson_world.good if episode.good else self.lesson_world.bad

    def lesson_is_good(self, reflected: SimulatedTask, quality: float) -> bool:
        """Whether a reflection on ``reflected``'s episode writes a good lesson.

        One uniform draw per ``(seed, task index)``: good when it falls below
        ``quality``, so a higher quality never turns a good lesson bad.
        """
        u = float(np.random.default_rng([self.seed, reflected.index, _QUALITY_SALT]).random())
        return u < quality


# -------------------------------------------------------------------------- reflector


@dataclass(frozen=True)
class _Known:
    hidden: HiddenEpisode
    task: SimulatedTask


class ScriptedReflector(BaseChatModel):
    """A fake chat model that writes one lesson per reflection, good with ``quality``.

    Only ``with_structured_output(LessonDrafts)`` is meaningful: it reads the
    ``episode_id:`` lines of the prompt :class:`~langchain_episodic.reflection.LessonWriter`
    sends (the first is the episode reflected on), looks up their hidden truth with
    ``lookup``, and answers one :class:`~langchain_episodic.reflection.LessonDraft`.
    ``decide`` says whether the lesson is good. ``calls`` counts the calls;
    ``written`` keeps ``(title, source ids, sub-topic, good)`` of every draft.

    Attributes:
        lookup: Episode id to ``(hidden episode, task)``, or ``None`` when unknown.
        decide: The reflected task to whether its lesson is good.
    """

    lookup: Callable[[str], tuple[HiddenEpisode, SimulatedTask] | None]
    decide: Callable[[SimulatedTask], bool]
    calls: int = 0
    written: list[tuple[str, tuple[str, ...], str, bool]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-reflector"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        del messages, stop, run_manager, kwargs
        return ChatResult(generations=[ChatGeneration(message=AIMessage(""))])

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """A runnable that answers ``LessonDrafts`` for a reflection prompt."""
        del kwargs
        if schema is not LessonDrafts or include_raw:
            msg = "ScriptedReflector only answers LessonDrafts (without include_raw)"
            raise ValueError(msg)
        return RunnableLambda(self._answer)

    def _answer(self, prompt: LanguageModelInput) -> dict[str, Any] | BaseModel:
        self.calls += 1
        text = "\n".join(str(m.content) for m in (prompt if isinstance(prompt, list) else []))
        ids = [
            line.removeprefix("episode_id:").strip()
            for line in text.splitlines()
            if line.startswith("episode_id:")
        ]
        known = [(i, k) for i in ids if (k := self.lookup(i)) is not None]
        if not known:
            return LessonDrafts()
        first_id, (first, task) = known[0]
        good = self.decide(task)
        same = [i for i, (h, _) in known if h.subtopic == first.subtopic]
        other = [(i, h) for i, (h, _) in known if h.subtopic != first.subtopic]
        if good:
            sources = same
            do = (
                f"apply the fix the passing {first.subtopic} attempts share, "
                f"and test for what failed before"
            )
        else:
            sources = [first_id, *(i for i, _ in other)] if other else [i for i, _ in known]
            wrong = other[0][1].subtopic if other else "an unrelated task"
            do = f"reuse the approach that worked for {wrong}"
        title = task.task.description
        self.written.append((title, tuple(sorted(sources)), first.subtopic, good))
        return LessonDrafts(
            lessons=[
                LessonDraft(
                    title=title,
                    applies_when=f"a {task.task.category.value} task like: {title}",
                    do=do,
                    avoid="",
                    source_episode_ids=sources,
                )
            ]
        )


# --------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class LessonVariant:
    """One agent: how it reflects and how many lessons its prompts show.

    Attributes:
        name: Short name, used in reports.
        quality: Probability that a reflection writes a good lesson, in [0, 1].
        lesson_k: Lessons a prompt shows at most (0: no lessons, no reflection).
        reflect_every: Reflect after every ``reflect_every``-th recorded episode.
        consolidate_every: Consolidate lessons after every ``consolidate_every``-th
            episode; 0 for never.
        consolidate_threshold: The cosine similarity at which consolidation merges
            two lessons (:data:`~langchain_episodic.model.lesson.MERGE_SIMILARITY` by default).
    """

    name: str
    quality: float = 0.0
    lesson_k: int = 2
    reflect_every: int = 5
    consolidate_every: int = 0
    consolidate_threshold: float = MERGE_SIMILARITY

    def __post_init__(self) -> None:
        check_number("consolidate_threshold", self.consolidate_threshold, -1.0, 1.0)
        check_number("quality", self.quality, 0.0, 1.0)
        check_int("lesson_k", self.lesson_k, 0)
        check_int("reflect_every", self.reflect_every, 1)
        check_int("consolidate_every", self.consolidate_every, 0)

    @property
    def reflects(self) -> bool:
        """Whether it writes (and shows) lessons at all."""
        return self.lesson_k > 0

    @property
    def description(self) -> str:
        """One line on what it does."""
        if not self.reflects:
            return "relevance-first recall of episodes, no lessons (lesson_k=0), no reflection"
        every = (
            "every episode" if self.reflect_every == 1 else f"every {self.reflect_every}th episode"
        )
        text = (
            f"episodes plus up to {self.lesson_k} lessons; reflection after {every}, "
            f"lesson quality {self.quality:g}"
        )
        if self.consolidate_every:
            text += (
                f"; consolidate_lessons(threshold={self.consolidate_threshold:g}) every "
                f"{self.consolidate_every} episodes"
            )
        return text


BASELINE_LESSON_VARIANT = LessonVariant("no_lessons", lesson_k=0)
"""Relevance-first recall without lessons: what every other variant is paired with."""

LESSON_VARIANTS: tuple[LessonVariant, ...] = (
    BASELINE_LESSON_VARIANT,
    LessonVariant("lessons_q0.9", 0.9),
    LessonVariant("lessons_q0.5", 0.5),
    LessonVariant("lessons_q0.2", 0.2),
    LessonVariant("lessons_q0.9_each", 0.9, reflect_every=1),
    LessonVariant("lessons_q0.9_consol", 0.9, consolidate_every=50),
    LessonVariant("lessons_q0.9_consol0.7", 0.9, consolidate_every=50, consolidate_threshold=0.7),
)
"""The variants :func:`compare_lesson_variants` runs by default (the baseline first)."""


@dataclass(frozen=True)
class LessonRun:
    """One variant's run over one seed's tasks.

    Attributes:
        variant: The variant's name.
        seed: The seed.
        rewards: Each task's reward, in task order.
        probabilities: Each attempt's success probability, in task order.
        episodes_shown: Episodes shown, summed over prompts.
        lessons_shown: Lessons shown, summed over prompts.
        good_shown: Good lessons among them.
        relevant_shown: Lessons shown on a task of the sub-topic they describe.
        recorded: Episodes recorded.
        model_calls: Calls to the reflector (``Reflection.model_calls``, summed).
        lessons_written: Lessons the reflections stored.
        good_written: Good ones among them.
        merged: Lessons written by consolidation.
        active_lessons: Active lessons at the end.
        rejected: Reasons reflection gave for what it left out, counted.
        seconds: Wall-clock seconds of the run.
    """

    variant: str
    seed: int
    rewards: tuple[float, ...]
    probabilities: tuple[float, ...]
    episodes_shown: int
    lessons_shown: int
    good_shown: int
    relevant_shown: int
    recorded: int
    model_calls: int
    lessons_written: int
    good_written: int
    merged: int
    active_lessons: int
    rejected: int
    seconds: float

    @property
    def mean_reward(self) -> float:
        """Mean reward per task."""
        return float(np.mean(self.rewards)) if self.rewards else 0.0

    @property
    def calls_per_100(self) -> float:
        """Reflector model calls per 100 recorded episodes."""
        return 100.0 * self.model_calls / self.recorded if self.recorded else 0.0


def _register_merged(
    memory: EpisodicMemory, merged: Sequence[Lesson], hidden: dict[str, HiddenLesson]
) -> None:
    """A merged lesson shows the text of one member (the keeper): it inherits its truth."""

    def text(lesson: Lesson) -> tuple[str, str, str, str]:
        return (lesson.title, lesson.applies_when, lesson.do, lesson.avoid)

    for lesson in merged:
        keeper = next(
            hidden[old]
            for old in lesson.supersedes
            if old in hidden and text(memory.lessons.get(old)) == text(lesson)
        )
        hidden[lesson.lesson_id] = HiddenLesson.of(lesson.lesson_id, keeper.subtopic, keeper.good)


def _register_reflected(
    reflector: ScriptedReflector, reflection: Reflection, hidden: dict[str, HiddenLesson]
) -> int:
    """Note the hidden truth of the lessons a reflection wrote; how many new ones are good."""
    drafts = {(title, ids): (sub, good) for title, ids, sub, good in reflector.written}
    for lesson in reflection.lessons:
        subtopic, good = drafts[(lesson.title, tuple(sorted(lesson.source_ids)))]
        hidden.setdefault(lesson.lesson_id, HiddenLesson.of(lesson.lesson_id, subtopic, good))
    return sum(hidden[lesson.lesson_id].good for lesson in reflection.stored)


def run_lesson_variant(
    variant: LessonVariant,
    world: LessonWorld | None = None,
    n_tasks: int = 300,
    seed: int = 0,
    *,
    embeddings: Embeddings | None = None,
    top_k: int = 3,
    batch_size: int = 6,
    start_time: float = START_TIME,
    task_interval: float = TASK_INTERVAL,
) -> LessonRun:
    """Run one variant over ``n_tasks`` tasks of ``world``, reflecting as it says.

    Args:
        variant: The agent.
        world: :data:`DEFAULT_LESSON_WORLD` when ``None``.
        n_tasks: Tasks to run.
        seed: The world's seed.
        embeddings: The memory's embedder; :class:`~langchain_episodic.HashingEmbeddings`
            when ``None``.
        top_k: Episodes a prompt shows at most.
        batch_size: Episodes a reflection shows the reflector, at most.
        start_time: Timestamp of the first task, in seconds.
        task_interval: Seconds between two tasks.

    Raises:
        EpisodicValueError: An argument is invalid.
    """
    if not isinstance(variant, LessonVariant):
        msg = f"variant={variant!r} is invalid: must be a LessonVariant"
        raise TypeError(msg)
    check_int("n_tasks", n_tasks, 0)
    check_int("batch_size", batch_size, 1)
    options = RecallOptions(top_k=check_int("top_k", top_k, 1), use_utility=False)
    env = LessonWorldEnvironment(world, seed)
    now = [start_time]
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(),
        embeddings=embeddings if embeddings is not None else HashingEmbeddings(),
        clock=lambda: now[0],
    )
    known: dict[str, _Known] = {}
    hidden_lessons: dict[str, HiddenLesson] = {}

    def lookup(episode_id: str) -> tuple[HiddenEpisode, SimulatedTask] | None:
        found = known.get(episode_id)
        return None if found is None else (found.hidden, found.task)

    reflector = ScriptedReflector(
        lookup=lookup, decide=lambda task: env.lesson_is_good(task, variant.quality)
    )
    writer = LessonWriter(reflector, max_lessons=1, name="scripted-reflector")
    rewards: list[float] = []
    probabilities: list[float] = []
    tally: Counter[str] = Counter()
    started = time.perf_counter()
    for index in range(n_tasks):
        now[0] = start_time + index * task_interval
        task = env.task_at(index)
        run_id = f"run-{index:05d}"
        replay = build_replay(memory, task.task, options, run_id=run_id, lesson_k=variant.lesson_k)
        episodes = [known[i].hidden for i in replay.shown]
        lessons = [hidden_lessons[lesson.lesson_id] for lesson in replay.lessons]
        tally.update(
            episodes_shown=len(episodes),
            lessons_shown=len(lessons),
            good_shown=sum(lesson.good for lesson in lessons),
            relevant_shown=sum(lesson.subtopic == task.subtopic for lesson in lessons),
        )
        attempt = env.attempt(task, [*episodes, *lessons])
        rewards.append(attempt.feedback.reward)
        probabilities.append(attempt.probability)
        episode_id = f"ep-{seed}-{index:05d}"
        known[episode_id] = _Known(env.record(memory, episode_id, task, attempt, now[0]), task)
        memory.runs.credit(run_id, attempt.feedback.reward)
        if not variant.reflects:
            continue
        if (index + 1) % variant.reflect_every == 0:
            reflection = reflect(memory, writer, episode_id, batch_size=batch_size)
            tally.update(
                model_calls=reflection.model_calls,
                rejected=len(reflection.rejected),
                lessons_written=len(reflection.stored),
                good_written=_register_reflected(reflector, reflection, hidden_lessons),
            )
        if variant.consolidate_every and (index + 1) % variant.consolidate_every == 0:
            done = memory.lessons.consolidate(variant.consolidate_threshold)
            _register_merged(memory, done, hidden_lessons)
            tally["merged"] += len(done)
    if reflector.calls != tally["model_calls"]:  # the writer's count and the model's agree
        msg = f"reflector saw {reflector.calls} calls, reflections counted {tally['model_calls']}"
        raise AssertionError(msg)
    return LessonRun(
        variant=variant.name,
        seed=seed,
        rewards=tuple(rewards),
        probabilities=tuple(probabilities),
        episodes_shown=tally["episodes_shown"],
        lessons_shown=tally["lessons_shown"],
        good_shown=tally["good_shown"],
        relevant_shown=tally["relevant_shown"],
        recorded=len(known),
        model_calls=tally["model_calls"],
        lessons_written=tally["lessons_written"],
        good_written=tally["good_written"],
        merged=tally["merged"],
        active_lessons=len(memory.lessons.list("active")),
        rejected=tally["rejected"],
        seconds=time.perf_counter() - started,
    )


# ---------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class LessonSummary:
    """One variant over seeds.

    Attributes:
        variant: The variant's name.
        description: What it does.
        reward: Mean reward per task, with its 95% interval over seeds.
        success: Mean success probability of the attempts, with its interval.
        gain: Paired gain over the baseline per task (same tasks, same luck), or
            ``None`` when the baseline was not run.
        relative_gain: The same as a fraction of the baseline's reward (per seed,
            then over seeds), or ``None``.
        calls_per_100: Reflector model calls per 100 recorded episodes.
        episodes_per_task: Episodes shown per prompt, on average.
        lessons_per_task: Lessons shown per prompt, on average.
        good_share_shown: Share of shown lessons that were good (``None``: none shown).
        relevant_share_shown: Share of shown lessons that describe the task's
            sub-topic (``None``: none shown).
        lessons_written: Lessons stored by reflection per run, on average.
        good_share_written: Share of them that were good (``None``: none).
        merged: Lessons written by consolidation per run, on average.
        active_lessons: Active lessons at the end of a run, on average.
        rejected: What reflection left out, per run, on average.
        seconds: Wall-clock seconds, summed over seeds.
    """

    variant: str
    description: str
    reward: Interval
    success: Interval
    gain: Interval | None
    relative_gain: Interval | None
    calls_per_100: float
    episodes_per_task: float
    lessons_per_task: float
    good_share_shown: float | None
    relevant_share_shown: float | None
    lessons_written: float
    good_share_written: float | None
    merged: float
    active_lessons: float
    rejected: float
    seconds: float


@dataclass(frozen=True)
class LessonComparison:
    """Every variant over the same seeds, paired with the baseline.

    Attributes:
        n_tasks: Tasks per run.
        seeds: The seeds.
        world: The lesson world.
        summaries: One per variant, in the order run.
        runs: Every run, by variant name, in ``seeds`` order.
    """

    n_tasks: int
    seeds: tuple[int, ...]
    world: LessonWorld
    summaries: tuple[LessonSummary, ...]
    runs: MappingProxyType[str, tuple[LessonRun, ...]] = field(repr=False)

    def summary(self, variant: str) -> LessonSummary:
        """The summary of ``variant``.

        Raises:
            EpisodicValueError: ``variant`` was not run.
        """
        for summary in self.summaries:
            if summary.variant == variant:
                return summary
        msg = f"variant={variant!r} is not in this comparison"
        raise EpisodicValueError(msg)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _summarise(
    variant: LessonVariant, runs: Sequence[LessonRun], base: Sequence[LessonRun] | None
) -> LessonSummary:
    tasks = sum(len(run.rewards) for run in runs)
    recorded = sum(run.recorded for run in runs)
    shown = sum(run.lessons_shown for run in runs)
    written = sum(run.lessons_written for run in runs)
    pairs = None if base is None else list(zip(runs, base, strict=True))
    return LessonSummary(
        variant=variant.name,
        description=variant.description,
        reward=t_interval([run.mean_reward for run in runs]),
        success=t_interval([float(np.mean(run.probabilities)) for run in runs]),
        gain=None
        if pairs is None
        else t_interval([r.mean_reward - b.mean_reward for r, b in pairs]),
        relative_gain=None
        if pairs is None
        else t_interval([r.mean_reward / b.mean_reward - 1.0 for r, b in pairs]),
        calls_per_100=100.0 * sum(run.model_calls for run in runs) / recorded if recorded else 0.0,
        episodes_per_task=sum(run.episodes_shown for run in runs) / tasks if tasks else 0.0,
        lessons_per_task=shown / tasks if tasks else 0.0,
        good_share_shown=_share(sum(run.good_shown for run in runs), shown),
        relevant_share_shown=_share(sum(run.relevant_shown for run in runs), shown),
        lessons_written=written / len(runs),
        good_share_written=_share(sum(run.good_written for run in runs), written),
        merged=sum(run.merged for run in runs) / len(runs),
        active_lessons=sum(run.active_lessons for run in runs) / len(runs),
        rejected=sum(run.rejected for run in runs) / len(runs),
        seconds=sum(run.seconds for run in runs),
    )


def compare_lesson_variants(
    variants: Sequence[LessonVariant] = LESSON_VARIANTS,
    world: LessonWorld | None = None,
    n_tasks: int = 300,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    *,
    embeddings: Embeddings | None = None,
    top_k: int = 3,
    progress: Callable[[LessonRun], None] | None = None,
) -> LessonComparison:
    """Run every variant on every seed; summarise with 95% intervals over seeds.

    Gains are paired per seed with :data:`BASELINE_LESSON_VARIANT` (run first when
    missing from ``variants``, and reported).

    Raises:
        EpisodicValueError: An argument is invalid, or two variants share a name.
    """
    check_int("n_tasks", n_tasks, 1)
    seed_list = tuple(check_int("seeds[]", s, 0) for s in seeds)
    chosen = list(variants)
    if not seed_list or not chosen:
        msg = "seeds and variants must be non-empty"
        raise EpisodicValueError(msg)
    if len({v.name for v in chosen}) != len(chosen):
        msg = "variants must have distinct names"
        raise EpisodicValueError(msg)
    if BASELINE_LESSON_VARIANT.name not in {v.name for v in chosen}:
        chosen.insert(0, BASELINE_LESSON_VARIANT)
    lesson_world = world if world is not None else DEFAULT_LESSON_WORLD
    runs: dict[str, tuple[LessonRun, ...]] = {}
    for variant in chosen:
        done = []
        for seed in seed_list:
            run = run_lesson_variant(
                variant, lesson_world, n_tasks, seed, embeddings=embeddings, top_k=top_k
            )
            if progress is not None:
                progress(run)
            done.append(run)
        runs[variant.name] = tuple(done)
    base = runs[BASELINE_LESSON_VARIANT.name]
    summaries = tuple(
        _summarise(v, runs[v.name], None if v.name == BASELINE_LESSON_VARIANT.name else base)
        for v in chosen
    )
    return LessonComparison(n_tasks, seed_list, lesson_world, summaries, MappingProxyType(runs))


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def format_lesson_report(comparison: LessonComparison, *, markdown: bool = False) -> str:
    """The comparison as a table: reward, paired gain, cost in model calls, what was shown.

    Args:
        comparison: What :func:`compare_lesson_variants` returned.
        markdown: GitHub-flavoured markdown tables instead of aligned text.
    """
    seeds = list(comparison.seeds)
    world = comparison.world
    out = [
        f"{comparison.n_tasks} tasks x {len(seeds)} seeds {seeds}; world: good lesson "
        f"{world.good:+.2f}, bad lesson {world.bad:+.2f}, episodes as in the "
        f"{world.episodes.name!r} credit world; mean reward per task [95% CI over seeds] "
        "(simulated)"
    ]
    if markdown:
        out.append("")
    headers = (
        "variant",
        "reward",
        "gain vs no_lessons (paired)",
        "relative gain %",
        "success p",
        "model calls / 100 episodes",
        "episodes / task",
        "lessons / task",
        "good % of shown",
        "on-topic % of shown",
        "lessons written (good %)",
        "merged",
        "active at end",
    )
    rows = []
    for s in comparison.summaries:
        rows.append(
            (
                s.variant,
                s.reward.format(),
                "-" if s.gain is None else s.gain.format("+.3f"),
                "-" if s.relative_gain is None else s.relative_gain.format("+.1f", 100),
                f"{s.success.mean:.3f}",
                f"{s.calls_per_100:.1f}",
                f"{s.episodes_per_task:.2f}",
                f"{s.lessons_per_task:.2f}",
                _percent(s.good_share_shown),
                _percent(s.relevant_share_shown),
                f"{s.lessons_written:.1f} ({_percent(s.good_share_written)})",
                f"{s.merged:.1f}",
                f"{s.active_lessons:.1f}",
            )
        )
    out.extend(_table(headers, rows, markdown))
    return "\n".join(out).rstrip() + "\n"
