"""A simulated world where recalled episodes differ in how much they help when shown.

Credit (:mod:`langchain_episodic.scoring.credit`) can only pay off when episodes differ in
what showing them does to the next attempt, which their own reward does not tell:

* a **transferable fix** (a success) raises the success probability of every task of
  its sub-topic;
* a **lucky success** looks as good and does nothing;
* a **warning** (a failure whose message names the trap) helps like a smaller fix;
* a **plain failure** does nothing;
* a **misleading** success helps tasks of its own hidden variant and hurts tasks of
  the sub-topic's other hidden variant: tasks that only look similar (the variant is
  drawn independently of the description, so no embedder can tell them apart).

Every task belongs to a sub-topic of :data:`~simulation.SUBTOPICS`
and to one of :attr:`CreditWorld.hidden_variants` hidden variants. Its success
probability is the sub-topic's rate for the strategy the complexity fallback picks
(:func:`~langchain_episodic.scoring.strategy.complexity_strategy`: one fixed strategy per
task, so only the episodes shown differ between agents), plus the hidden effects of
the episodes shown, clipped to [0.02, 0.98]. An attempt then runs 10 simulated tests
as :meth:`CodingTaskEnvironment.attempt
<simulation.CodingTaskEnvironment.attempt>` does; its pass
fraction is the reward. A recorded episode's kind is drawn from its outcome when it
is recorded. In :data:`EQUAL_WORLD` every episode has the same effect.

Each simulated run recalls with :func:`~langchain_episodic.build_replay` and a
``run_id`` (so the shown episodes are noted), attempts, records the episode and
credits the run's reward (:meth:`~langchain_episodic.EpisodicMemory.credit`). Tasks,
hidden variants, kinds and the attempts' draws depend only on ``(seed, task index)``:
every agent of one seed meets the same tasks with the same luck, so comparisons are
paired. All figures it produces are simulated, not measured on a model.

Example:
    .. code-block:: python

        from simulation import compare_credit_variants, format_credit_report

        comparisons = compare_credit_variants(n_tasks=100, seeds=(0, 1))
        print(format_credit_report(comparisons))
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import Episode, Feedback, OutcomeStatus, TaskDescription
from langchain_episodic.model.feedback import feedback_from_tests
from langchain_episodic.pipeline import build_replay
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import (
    DEFAULT_MAX_TOKENS,
    DetailedRenderer,
    RenderedReplay,
    approximate_token_count,
)
from langchain_episodic.prompting.renderers import RendererArg
from langchain_episodic.scoring.lift import t95
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.strategy import complexity_strategy
from langchain_episodic.stores.base import EpisodeStore
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore
from simulation.environment import (
    DEFAULT_SEEDS,
    START_TIME,
    SUBTOPICS,
    TASK_INTERVAL,
    TESTS_PER_TASK,
    CodingTaskEnvironment,
    SimulatedTask,
    Subtopic,
)

__all__ = [
    "COPIER_WORLD",
    "CREDIT_VARIANTS",
    "CREDIT_VARIANT_DESCRIPTIONS",
    "DIFFERENTIATED_WORLD",
    "EPISODE_KINDS",
    "EQUAL_WORLD",
    "HOLDOUT",
    "KIND_ORACLE_VARIANT",
    "LEARNING_VARIANTS",
    "NOISELESS_VARIANT",
    "ORACLE_VARIANT",
    "PRESENTATION_VARIANTS",
    "PRESENTATION_WORLDS",
    "READER_WORLD",
    "WORLDS",
    "CreditAttempt",
    "CreditComparison",
    "CreditRun",
    "CreditSummary",
    "CreditWorld",
    "CreditWorldEnvironment",
    "HiddenEffect",
    "HiddenEpisode",
    "Interval",
    "compare_credit_variants",
    "format_credit_report",
    "run_credit_variant",
    "t_interval",
]

EPISODE_KINDS: tuple[str, ...] = (
    "transferable_fix",
    "lucky_success",
    "misleading",
    "warning",
    "plain_failure",
)
"""What a recorded episode can hide: the first three are successes, the last two not."""

_SUCCESS_KINDS = frozenset(EPISODE_KINDS[:3])
_FAILURE_KINDS = frozenset(EPISODE_KINDS[3:])
_OTHER_SUBTOPIC = "other_subtopic"

# Salts keep this world's random streams apart from the environment's.
_VARIANT_SALT = 0xC7ED
_KIND_SALT = 0x41DD
_ATTEMPT_SALT = 0xC2A7
_HOLDOUT_SALT = 0x401D
_MIN_P, _MAX_P = 0.02, 0.98


# ------------------------------------------------------------------------------ worlds


@dataclass(frozen=True)
class HiddenEffect:
    """What showing an episode adds to the success probability of a task of its sub-topic.

    Attributes:
        own: On a task of the episode's own hidden variant.
        lookalike: On a task of another hidden variant of the same sub-topic.
    """

    own: float
    lookalike: float

    def __post_init__(self) -> None:
        for name in ("own", "lookalike"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not -1.0 <= value <= 1.0:
                msg = f"HiddenEffect.{name}={value!r} is invalid: must be a number in [-1, 1]"
                raise EpisodicValueError(msg)


@dataclass(frozen=True)
class CreditWorld:
    """How recorded episodes are drawn and what showing each kind does.

    Attributes:
        name: Short name, used in reports.
        description: One line on what differs between its episodes.
        success_kinds: Probability of each success kind given a successful attempt.
        failure_kinds: Probability of each failure kind given a partial or failed attempt.
        effects: The hidden effect of each kind.
        hidden_variants: Hidden variants per sub-topic (tasks of one sub-topic look
            alike whatever their variant), at least 1.
    """

    name: str
    description: str
    success_kinds: Mapping[str, float]
    failure_kinds: Mapping[str, float]
    effects: Mapping[str, HiddenEffect]
    hidden_variants: int = 2

    def __post_init__(self) -> None:
        check_int("hidden_variants", self.hidden_variants, 1)
        for label, kinds, allowed in (
            ("success_kinds", self.success_kinds, _SUCCESS_KINDS),
            ("failure_kinds", self.failure_kinds, _FAILURE_KINDS),
        ):
            unknown = set(kinds) - allowed
            total = sum(kinds.values())
            if unknown or any(p < 0 for p in kinds.values()) or not math.isclose(total, 1.0):
                msg = (
                    f"CreditWorld {self.name!r}: {label} must give kinds of "
                    f"{sorted(allowed)} probabilities summing to 1"
                )
                raise EpisodicValueError(msg)
        if set(self.effects) != set(EPISODE_KINDS):
            msg = f"CreditWorld {self.name!r}: effects must give every kind of EPISODE_KINDS"
            raise EpisodicValueError(msg)

    def mean_effect(self, kinds: Mapping[str, float]) -> float:
        """The expected effect on a random task of the sub-topic, over ``kinds``' mix."""
        share = 1.0 / self.hidden_variants
        return sum(
            p * (share * self.effects[k].own + (1 - share) * self.effects[k].lookalike)
            for k, p in kinds.items()
        )


_KIND_MIX_SUCCESS = MappingProxyType(
    {"transferable_fix": 0.4, "lucky_success": 0.3, "misleading": 0.3}
)
_KIND_MIX_FAILURE = MappingProxyType({"warning": 0.4, "plain_failure": 0.6})

DIFFERENTIATED_WORLD = CreditWorld(
    name="differentiated",
    description=(
        "fixes +0.30, warnings +0.20, lucky successes and plain failures 0, misleading "
        "+0.20 on their own hidden variant and -0.30 on look-alikes"
    ),
    success_kinds=_KIND_MIX_SUCCESS,
    failure_kinds=_KIND_MIX_FAILURE,
    effects=MappingProxyType(
        {
            "transferable_fix": HiddenEffect(0.30, 0.30),
            "lucky_success": HiddenEffect(0.0, 0.0),
            "misleading": HiddenEffect(0.20, -0.30),
            "warning": HiddenEffect(0.20, 0.20),
            "plain_failure": HiddenEffect(0.0, 0.0),
        }
    ),
)
"""Episodes differ in how much they help when shown (the world credit is for)."""

EQUAL_WORLD = CreditWorld(
    name="equal",
    description="every episode +0.10 on every task of its sub-topic",
    success_kinds=_KIND_MIX_SUCCESS,
    failure_kinds=_KIND_MIX_FAILURE,
    effects=MappingProxyType({kind: HiddenEffect(0.10, 0.10) for kind in EPISODE_KINDS}),
)
"""Every episode helps equally (about the differentiated world's mean effect):
credit has nothing to learn, so it must cost nothing."""

READER_WORLD = CreditWorld(
    name="reader",
    description=(
        "a model that reads feedback: a failure's warning +0.25, a plain failure 0; fixes "
        "+0.30, lucky successes 0, misleading +0.20 own variant / -0.30 look-alikes"
    ),
    success_kinds=_KIND_MIX_SUCCESS,
    failure_kinds=_KIND_MIX_FAILURE,
    effects=MappingProxyType(
        {
            "transferable_fix": HiddenEffect(0.30, 0.30),
            "lucky_success": HiddenEffect(0.0, 0.0),
            "misleading": HiddenEffect(0.20, -0.30),
            "warning": HiddenEffect(0.25, 0.25),
            "plain_failure": HiddenEffect(0.0, 0.0),
        }
    ),
)
"""A model that reads a failure's feedback and learns from it (settings fixed before any
tuning of the presentation chooser)."""

COPIER_WORLD = CreditWorld(
    name="copier",
    description=(
        "a model that copies what it is shown: a shown failure is copied (warning -0.15, "
        "plain failure -0.25); successes as in the reader world"
    ),
    success_kinds=_KIND_MIX_SUCCESS,
    failure_kinds=_KIND_MIX_FAILURE,
    effects=MappingProxyType(
        {
            "transferable_fix": HiddenEffect(0.30, 0.30),
            "lucky_success": HiddenEffect(0.0, 0.0),
            "misleading": HiddenEffect(0.20, -0.30),
            "warning": HiddenEffect(-0.15, -0.15),
            "plain_failure": HiddenEffect(-0.25, -0.25),
        }
    ),
)
"""A model that copies what it is shown, like the 270M model of ``real_model.py``: a
shown failure makes the next attempt worse (settings fixed before any tuning)."""

PRESENTATION_WORLDS: tuple[CreditWorld, ...] = (READER_WORLD, COPIER_WORLD)
"""Two worlds that disagree on what to show: the presentation benchmark's."""

WORLDS: tuple[CreditWorld, ...] = (DIFFERENTIATED_WORLD, EQUAL_WORLD)
"""The worlds :func:`compare_credit_variants` runs by default."""


# ------------------------------------------------------------------------- environment


@dataclass(frozen=True)
class HiddenEpisode:
    """What the world knows about a recorded episode, and the agent does not.

    Attributes:
        episode_id: The recorded episode.
        subtopic: Its task's sub-topic.
        variant: Its task's hidden variant.
        kind: One of :data:`EPISODE_KINDS`.
    """

    episode_id: str
    subtopic: str
    variant: int
    kind: str


@dataclass(frozen=True)
class CreditAttempt:
    """One attempt's result.

    Attributes:
        feedback: Feedback of the simulated tests (reward = pass rate).
        outcome: Its outcome.
        probability: The success probability the attempt had (base plus effects).
    """

    feedback: Feedback
    outcome: OutcomeStatus
    probability: float


class CreditWorldEnvironment:
    """Seeded tasks of :class:`CodingTaskEnvironment` with hidden variants and effects.

    Everything is a pure function of ``(world, seed, task index)`` and the episodes
    shown.

    Example:
        .. code-block:: python

            from simulation import CreditWorldEnvironment

            env = CreditWorldEnvironment(seed=0)
            task = env.task_at(0)
            attempt = env.attempt(task, shown=())
            hidden = env.hidden_episode("ep-0", task, attempt.outcome)

    Args:
        world: What episodes hide (:data:`DIFFERENTIATED_WORLD` by default).
        seed: Fixes tasks, variants, kinds and attempts.
        subtopics: The sub-topics to draw tasks from.
        tests_per_task: Tests per attempt, at least 2.
    """

    def __init__(
        self,
        world: CreditWorld | None = None,
        seed: int = 0,
        subtopics: Sequence[Subtopic] = SUBTOPICS,
        tests_per_task: int = TESTS_PER_TASK,
    ) -> None:
        self.world = world if world is not None else DIFFERENTIATED_WORLD
        if not isinstance(self.world, CreditWorld):
            msg = f"world={world!r} is invalid: must be a CreditWorld"
            raise TypeError(msg)
        self.tasks = CodingTaskEnvironment(seed, subtopics, tests_per_task)
        self.seed = self.tasks.seed

    def __repr__(self) -> str:
        return f"CreditWorldEnvironment(world={self.world.name!r}, seed={self.seed})"

    def task_at(self, index: int) -> SimulatedTask:
        """The task at position ``index`` (the same as :class:`CodingTaskEnvironment`'s)."""
        return self.tasks.task_at(index)

    def hidden_variant(self, task: SimulatedTask) -> int:
        """The task's hidden variant, drawn independently of its description."""
        rng = np.random.default_rng([self.seed, task.index, _VARIANT_SALT])
        return int(rng.integers(self.world.hidden_variants))

    def base_probability(self, task: SimulatedTask) -> float:
        """Success probability with nothing shown: the complexity fallback's strategy."""
        return self.tasks.success_probability(task.subtopic, complexity_strategy(task.task))

    def effect(self, episode: HiddenEpisode, task: SimulatedTask) -> float:
        """What showing ``episode`` adds to ``task``'s success probability (0 off its sub-topic)."""
        if episode.subtopic != task.subtopic:
            return 0.0
        effect = self.world.effects[episode.kind]
        return effect.own if episode.variant == self.hidden_variant(task) else effect.lookalike

    def success_probability(self, task: SimulatedTask, shown: Sequence[HiddenEpisode]) -> float:
        """Base probability plus the effects of the episodes ``shown``, in [0.02, 0.98]."""
        p = self.base_probability(task) + sum(self.effect(e, task) for e in shown)
        return min(_MAX_P, max(_MIN_P, p))

    def attempt(self, task: SimulatedTask, shown: Sequence[HiddenEpisode]) -> CreditAttempt:
        """Run ``task``'s simulated tests with ``shown`` in the prompt.

        With the success probability ``p`` every test passes; otherwise each of the
        other ``tests_per_task - 1`` passes with probability ``0.2 + 0.6 * p``. The
        draws depend only on the seed and the task's index, so a higher ``p`` never
        does worse on the same task.
        """
        p = self.success_probability(task, shown)
        total = self.tasks.tests_per_task
        rng = np.random.default_rng([self.seed, task.index, _ATTEMPT_SALT])
        luck = float(rng.random())
        per_test = rng.random(total - 1)
        if luck < p:
            feedback, outcome = feedback_from_tests(total, total, f"all {total} tests pass")
        else:
            passed = int(np.count_nonzero(per_test < 0.2 + 0.6 * p))
            failures = self.tasks.subtopic(task.subtopic).failures
            reason = failures[int(rng.integers(len(failures)))]
            feedback, outcome = feedback_from_tests(
                passed, total, f"{total - passed} of {total} tests fail: {reason}"
            )
        return CreditAttempt(feedback, outcome, p)

    def record(
        self,
        memory: EpisodicMemory,
        episode_id: str,
        task: SimulatedTask,
        attempt: CreditAttempt,
        timestamp: float,
    ) -> HiddenEpisode:
        """Record ``attempt`` at ``task`` in ``memory`` as ``episode_id``; its hidden side."""
        memory.record(
            Episode(
                episode_id=episode_id,
                task=task.task,
                solution=f"# solution for: {task.task.description}",
                feedback=attempt.feedback,
                outcome=attempt.outcome,
                timestamp=timestamp,
                strategy_used=complexity_strategy(task.task),
            )
        )
        return self.hidden_episode(episode_id, task, attempt.outcome)

    def hidden_episode(
        self, episode_id: str, task: SimulatedTask, outcome: OutcomeStatus
    ) -> HiddenEpisode:
        """The hidden side of the episode recorded for ``task``: its kind, from its outcome.

        One uniform draw per task index picks the kind, so agents whose attempts end
        alike get the same kind.
        """
        kinds = (
            self.world.success_kinds
            if outcome is OutcomeStatus.SUCCESS
            else self.world.failure_kinds
        )
        u = float(np.random.default_rng([self.seed, task.index, _KIND_SALT]).random())
        chosen = ""
        cumulative = 0.0
        for kind in EPISODE_KINDS:
            if kind not in kinds:
                continue
            chosen = kind
            cumulative += kinds[kind]
            if u < cumulative:
                break
        return HiddenEpisode(episode_id, task.subtopic, self.hidden_variant(task), chosen)


# -------------------------------------------------------------------------- variants

NOISELESS_VARIANT = "learned_noiseless"
"""A diagnostic variant, not an agent: ``learned``, but each run is credited the success
probability its attempt had instead of its reward, as if every run could be repeated
until its outcome were certain. What it gains over ``learned`` is what the outcomes'
luck costs credit; what it still misses, credit misses even without luck."""

CREDIT_VARIANTS: tuple[str, ...] = ("no_memory", "article", "relevance", "relevance_utility")
"""The agents compared, in report order; ``"relevance_utility"`` is the default recall."""

CREDIT_VARIANT_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "no_memory": "nothing shown",
        "article": 'the article\'s prioritized replay (ranking="article"; ignores utility)',
        "relevance": "relevance-first recall without credit (use_utility=False)",
        "relevance_utility": (
            "the default: calibrated relevance test, then value and credit's utility "
            "among 4 x top_k candidates"
        ),
        "previous_default": (
            "the default before the calibrated test (rebuilt for comparison): relevance "
            "within 0.15 of the best above the model's old floor, 2 x top_k candidates, "
            "utility factor 1 + 0.5 (2u - 1)"
        ),
        "relevance_holdout": "the default with holdout=0.1 (a tenth of runs see no memory)",
        "relevance_explore": (
            "the default with explore=True (utilities drawn from their posteriors)"
        ),
        "relevance_feedback": (
            'the default with every failed attempt\'s feedback shown (CompactRenderer("feedback"),'
            " what an agent that reads is given; the default shows a failure only beside its fix)"
        ),
        "plain_top3": (
            "the plain top-3 recall the previous prompt showed: the 3 most relevant, whatever "
            'their outcome (renderer="detailed", no credit)'
        ),
        "policy_compact": 'credit on, the "compact" policy pinned (what worked only)',
        "policy_feedback": (
            'credit on, the "feedback" policy pinned (what worked, then failures\' feedback)'
        ),
        "policy_ranked": (
            'credit on, the "ranked" policy pinned (the best-ranked, whatever their outcome)'
        ),
        "learned": (
            'credit on, renderer="auto": the memory chooses the policy from its credited runs'
        ),
        NOISELESS_VARIANT: (
            "diagnostic, not an agent: learned, each run credited its attempt's success "
            "probability instead of its reward (outcomes without luck)"
        ),
    }
)
"""One line per variant: what its prompts show."""

LEARNING_VARIANTS: tuple[str, ...] = (
    "previous_default",
    "relevance_holdout",
    "relevance_explore",
    "relevance_feedback",
)
"""The default measured against the rule it replaced, with a 10% holdout of runs, and
with exploration."""

HOLDOUT = 0.1
"""The holdout fraction of ``"relevance_holdout"``."""

PRESENTATION_VARIANTS: tuple[str, ...] = (
    "plain_top3",
    "policy_compact",
    "policy_feedback",
    "policy_ranked",
    "learned",
)
"""The presentation benchmark's agents: the plain top-3 recall, each presentation policy
pinned (credit on), and the memory that learns which to use (``renderer="auto"``, credit on)."""

_PINNED = {
    "policy_compact": "compact",
    "policy_feedback": "feedback",
    "policy_ranked": "ranked",
}

ORACLE_VARIANT = "relevance_oracle"
"""A diagnostic variant, not an agent: of the relevant candidates the default chooses
among (the 12 most similar that pass the relevance test), the ``top_k`` with the truly
largest hidden effect on the task. No utility estimate can choose better, so its gain
over the default is the headroom of choosing well."""

KIND_ORACLE_VARIANT = "kind_oracle"
"""A diagnostic variant, not an agent: of the same relevant candidates as
:data:`ORACLE_VARIANT`, up to ``top_k`` whose *kind* helps on average (a fix, a warning
in a reader world), best first: an oracle that knows which episodes carry the fix, not
which hidden variant a task has (no embedder can see it)."""

_PREVIOUS_FLOORS = (("minilm-l6", 0.3), ("minilm_l6", 0.3))
_PREVIOUS_MARGIN = 0.15


def _previous_floor(embeddings: Embeddings) -> float:
    name = str(getattr(embeddings, "model_name", "") or getattr(embeddings, "model", "")).lower()
    return next((floor for needle, floor in _PREVIOUS_FLOORS if needle in name), 0.2)


def _previous_utility_factor(estimate: float) -> float:
    return 1.0 + 0.5 * (2.0 * estimate - 1.0)


@dataclass(frozen=True)
class _PreviousDefaultRenderer:
    """The previous default, rebuilt: its utility factor over recall's relevant candidates.

    Recall ranks them without credit (``use_utility=False``); :meth:`select` scales each
    priority by ``1 + 0.5·(2u - 1)`` of the episode's own utility (no evidence shared
    between near-duplicates, as then) and keeps the best ``top_k``, every one shown with
    the article's detailed rendering, as that release showed them.
    """

    memory: EpisodicMemory

    def select(self, results: Sequence[PrioritizedResult], top_k: int) -> list[PrioritizedResult]:
        now = self.memory.now()

        def scaled(result: PrioritizedResult) -> float:
            utility = self.memory.runs.utility(result.episode.episode_id).estimate(now)
            return result.priority * _previous_utility_factor(utility)

        return sorted((r for r in results if r.relevant), key=scaled, reverse=True)[:top_k]

    def __call__(
        self,
        results: Sequence[PrioritizedResult],
        task: TaskDescription | str,
        *,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        token_counter: Callable[[str], int] = approximate_token_count,
    ) -> RenderedReplay:
        return DetailedRenderer()(results, task, max_tokens=max_tokens, token_counter=token_counter)


def _options(
    variant: str,
    top_k: int,
    fetch_k: int | None,
    relevance_margin: float | None = None,
    embeddings: Embeddings | None = None,
) -> RecallOptions | None:
    if variant == "no_memory":
        return None
    if variant == "article":
        return RecallOptions(top_k=top_k, fetch_k=fetch_k, ranking="article")
    if variant == "previous_default":
        return RecallOptions(
            top_k=top_k,
            fetch_k=fetch_k or 2 * top_k,
            relevance_margin=_PREVIOUS_MARGIN if relevance_margin is None else relevance_margin,
            min_similarity=_previous_floor(embeddings or HashingEmbeddings()),
            use_utility=False,  # _PreviousDefaultRenderer applies that release's factor
        )
    if variant in (
        *CREDIT_VARIANTS,
        *LEARNING_VARIANTS,
        *PRESENTATION_VARIANTS,
        ORACLE_VARIANT,
        KIND_ORACLE_VARIANT,
        NOISELESS_VARIANT,
    ):
        return RecallOptions(
            top_k=top_k,
            fetch_k=fetch_k,
            relevance_margin=relevance_margin,
            use_utility=variant not in ("relevance", "plain_top3"),
            explore=variant == "relevance_explore",
        )
    allowed = ", ".join(
        repr(name)
        for name in (
            *CREDIT_VARIANTS,
            *LEARNING_VARIANTS,
            *PRESENTATION_VARIANTS,
            ORACLE_VARIANT,
            KIND_ORACLE_VARIANT,
            NOISELESS_VARIANT,
        )
    )
    msg = f"variant={variant!r} is invalid: must be one of {allowed}"
    raise EpisodicValueError(msg)


@dataclass(frozen=True)
class CreditRun:
    """One variant's run over one seed's tasks.

    Attributes:
        variant: The variant.
        world: The world's name.
        seed: The seed.
        rewards: Each task's reward, in task order.
        probabilities: Each attempt's success probability, in task order.
        shown: How many prompt slots showed each kind (episodes of another
            sub-topic count as ``"other_subtopic"``).
        shown_episodes: Distinct episodes shown at least once.
        recorded: Episodes recorded.
        seconds: Wall-clock seconds of the run.
        policies: The presentation policy of each task's replay (``None``: none, e.g.
            the detailed prompt), in task order; empty without replays.
    """

    variant: str
    world: str
    seed: int
    rewards: tuple[float, ...]
    probabilities: tuple[float, ...]
    shown: Mapping[str, int]
    shown_episodes: int
    recorded: int
    seconds: float
    policies: tuple[str | None, ...] = ()

    @property
    def mean_reward(self) -> float:
        """Mean reward per task."""
        return float(np.mean(self.rewards)) if self.rewards else 0.0


def run_credit_variant(
    variant: str,
    world: CreditWorld | None = None,
    n_tasks: int = 300,
    seed: int = 0,
    *,
    embeddings: Embeddings | None = None,
    store: EpisodeStore | None = None,
    top_k: int = 3,
    fetch_k: int | None = None,
    relevance_margin: float | None = None,
    start_time: float = START_TIME,
    task_interval: float = TASK_INTERVAL,
) -> CreditRun:
    """Run one variant over ``n_tasks`` tasks of ``world``, crediting every run.

    For each task: build the replay prompt with a ``run_id`` (nothing for
    ``"no_memory"``), attempt the task with the episodes it shows, record the
    episode, and credit the run its reward. Task ``i`` happens at
    ``start_time + i * task_interval`` (the memory's clock).

    Args:
        variant: One of :data:`CREDIT_VARIANTS`, :data:`LEARNING_VARIANTS` or
            :data:`PRESENTATION_VARIANTS`, or a diagnostic (:data:`ORACLE_VARIANT`,
            :data:`KIND_ORACLE_VARIANT`, :data:`NOISELESS_VARIANT`).
        world: :data:`DIFFERENTIATED_WORLD` when ``None``.
        n_tasks: Tasks to run.
        seed: The world's seed.
        embeddings: The memory's embedder; :class:`~langchain_episodic.HashingEmbeddings`
            when ``None``.
        store: An empty store; a fresh :class:`~langchain_episodic.stores.InMemoryEpisodeStore`
            when ``None``.
        top_k: Episodes a prompt shows at most.
        fetch_k: Candidates ranked per recall; twice ``top_k`` when ``None``.
        relevance_margin: The relevance ranking's margin; its default when ``None``.
        start_time: Timestamp of the first task, in seconds.
        task_interval: Seconds between two tasks.

    Raises:
        EpisodicValueError: An argument is invalid, or ``store`` is not empty.
    """
    check_int("n_tasks", n_tasks, 0)
    check_number("start_time", start_time)
    if check_number("task_interval", task_interval, 0.0) <= 0:
        msg = f"task_interval={task_interval!r} is invalid: must be > 0 seconds"
        raise EpisodicValueError(msg)
    model = embeddings if embeddings is not None else HashingEmbeddings()
    options = _options(variant, check_int("top_k", top_k, 1), fetch_k, relevance_margin, model)
    env = CreditWorldEnvironment(world, seed)
    now = [start_time]
    memory = EpisodicMemory(
        store=store if store is not None else InMemoryEpisodeStore(),
        embeddings=model,
        clock=lambda: now[0],
        holdout=HOLDOUT if variant == "relevance_holdout" else 0.0,
        rng=np.random.default_rng([seed, _HOLDOUT_SALT]),
        # The previous default had no background test.
        background=() if variant == "previous_default" else None,
    )
    if len(memory):
        msg = f"store={store!r} is invalid: it already holds {len(memory)} episode(s)"
        raise EpisodicValueError(msg)
    hidden: dict[str, HiddenEpisode] = {}
    rewards: list[float] = []
    probabilities: list[float] = []
    shown_slots: Counter[str] = Counter()
    ever_shown: set[str] = set()
    policies: list[str | None] = []
    started = time.perf_counter()
    for index in range(n_tasks):
        now[0] = start_time + index * task_interval
        task = env.task_at(index)
        run_id = f"run-{index:05d}"
        shown: list[HiddenEpisode] = []
        if variant in (ORACLE_VARIANT, KIND_ORACLE_VARIANT) and options is not None:
            # The relevant candidates the default ranks once credit has evidence.
            pool = options.candidate_count(learning=True)
            report = memory.recall(
                task.task, options=options.replace(top_k=pool, fetch_k=pool), explain=True
            )
            candidates = [hidden[r.episode.episode_id] for r in report.results]
            if variant == KIND_ORACLE_VARIANT:
                share = 1.0 / env.world.hidden_variants
                by_kind = {
                    kind: share * e.own + (1 - share) * e.lookalike
                    for kind, e in env.world.effects.items()
                }
                candidates = [e for e in candidates if by_kind[e.kind] > 0]
                candidates.sort(key=lambda e: by_kind[e.kind], reverse=True)
            else:
                candidates.sort(key=lambda e: env.effect(e, task), reverse=True)
            shown = candidates[:top_k]
            memory.runs.note(run_id, [e.episode_id for e in shown], task.task)
        elif options is not None:
            renderer: RendererArg = "auto"
            if variant == "relevance_feedback":
                renderer = CompactRenderer("feedback")
            elif variant == "previous_default":
                renderer = _PreviousDefaultRenderer(memory)
            elif variant == "plain_top3":
                renderer = "detailed"
            elif variant in _PINNED:
                renderer = _PINNED[variant]  # type: ignore[assignment]
            replay = build_replay(memory, task.task, options, run_id=run_id, renderer=renderer)
            shown = [hidden[i] for i in replay.shown]
            policies.append(None if replay.presentation is None else replay.presentation.policy)
        for episode in shown:
            same = episode.subtopic == task.subtopic
            shown_slots[episode.kind if same else _OTHER_SUBTOPIC] += 1
            ever_shown.add(episode.episode_id)
        attempt = env.attempt(task, shown)
        rewards.append(attempt.feedback.reward)
        probabilities.append(attempt.probability)
        if options is None:
            continue
        episode_id = f"{env.world.name}-{variant}-{seed}-{index:05d}"
        hidden[episode_id] = env.record(memory, episode_id, task, attempt, now[0])
        # The noiseless diagnostic credits what the attempt's chance was, not its luck.
        noiseless = variant == NOISELESS_VARIANT
        memory.runs.credit(run_id, attempt.probability if noiseless else attempt.feedback.reward)
    return CreditRun(
        variant=variant,
        world=env.world.name,
        seed=seed,
        rewards=tuple(rewards),
        probabilities=tuple(probabilities),
        shown=MappingProxyType(dict(shown_slots)),
        shown_episodes=len(ever_shown),
        recorded=len(hidden),
        seconds=time.perf_counter() - started,
        policies=tuple(policies),
    )


# ---------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class Interval:
    """A mean with its 95% confidence interval.

    Attributes:
        mean: The mean.
        low: Lower bound (the mean itself for a single value).
        high: Upper bound.
        n: How many values.
    """

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2

    def format(self, spec: str = ".3f", scale: float = 1.0) -> str:
        """``"mean [low, high]"`` with each number ``scale``-d and formatted by ``spec``."""
        return f"{self.mean * scale:{spec}} [{self.low * scale:{spec}}, {self.high * scale:{spec}}]"


def t_interval(values: Sequence[float]) -> Interval:
    """The mean of ``values`` and its 95% Student-t interval (normal past 30 values).

    Example:
        >>> t_interval([1.0, 2.0, 3.0]).format(".2f")
        '2.00 [-0.48, 4.48]'

    Raises:
        EpisodicValueError: ``values`` is empty.
    """
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        msg = "t_interval needs at least one value"
        raise EpisodicValueError(msg)
    mean = float(array.mean())
    if array.size == 1:
        return Interval(mean, mean, mean, 1)
    quantile = t95(array.size - 1)
    half = quantile * float(array.std(ddof=1)) / math.sqrt(array.size)
    return Interval(mean, mean - half, mean + half, int(array.size))


@dataclass(frozen=True)
class CreditSummary:
    """One variant in one world, over seeds.

    Attributes:
        variant: The variant.
        reward: Mean reward per task, with its 95% interval over seeds.
        success: Mean success probability of the attempts (base plus the effects
            of the episodes shown), with its 95% interval over seeds.
        gain: Paired gain over ``no_memory`` (same tasks, same luck) per task, or
            ``None`` when ``no_memory`` was not run.
        shown_per_task: Episodes shown per prompt, on average.
        shown_share: Share of the shown slots per kind (and ``"other_subtopic"``).
        explored: Share of recorded episodes shown at least once.
        seconds: Wall-clock seconds, summed over seeds.
    """

    variant: str
    reward: Interval
    success: Interval
    gain: Interval | None
    shown_per_task: float
    shown_share: Mapping[str, float]
    explored: float
    seconds: float


@dataclass(frozen=True)
class CreditComparison:
    """Every variant in one world, and what utility adds.

    Attributes:
        world: The world's name.
        n_tasks: Tasks per run.
        seeds: The seeds.
        summaries: One per variant, in the order run.
        utility_gain: Paired difference of mean reward per task, utility minus no
            utility, or ``None`` when both were not run.
        utility_relative_gain: The same as a fraction of the no-utility reward
            (per seed, then over seeds), or ``None``.
        runs: Every run, by variant, in ``seeds`` order.
    """

    world: str
    n_tasks: int
    seeds: tuple[int, ...]
    summaries: tuple[CreditSummary, ...]
    utility_gain: Interval | None
    utility_relative_gain: Interval | None
    runs: Mapping[str, tuple[CreditRun, ...]] = field(repr=False)

    def summary(self, variant: str) -> CreditSummary:
        """The summary of ``variant``.

        Raises:
            EpisodicValueError: ``variant`` was not run.
        """
        for summary in self.summaries:
            if summary.variant == variant:
                return summary
        msg = f"variant={variant!r} is not in this comparison"
        raise EpisodicValueError(msg)


def _summarise(
    variant: str, runs: Sequence[CreditRun], base: Sequence[CreditRun] | None
) -> CreditSummary:
    slots: Counter[str] = Counter()
    for run in runs:
        slots.update(run.shown)
    total_slots = sum(slots.values())
    recorded = sum(run.recorded for run in runs)
    n_tasks = sum(len(run.rewards) for run in runs)
    return CreditSummary(
        variant=variant,
        reward=t_interval([run.mean_reward for run in runs]),
        success=t_interval([float(np.mean(run.probabilities)) for run in runs]),
        gain=None
        if base is None
        else t_interval([r.mean_reward - b.mean_reward for r, b in zip(runs, base, strict=True)]),
        shown_per_task=total_slots / n_tasks if n_tasks else 0.0,
        shown_share=MappingProxyType(
            {k: slots[k] / total_slots for k in (*EPISODE_KINDS, _OTHER_SUBTOPIC)}
            if total_slots
            else {}
        ),
        explored=sum(run.shown_episodes for run in runs) / recorded if recorded else 0.0,
        seconds=sum(run.seconds for run in runs),
    )


def compare_credit_variants(
    worlds: Sequence[CreditWorld] = WORLDS,
    n_tasks: int = 300,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    variants: Sequence[str] = CREDIT_VARIANTS,
    *,
    embeddings: Embeddings | None = None,
    top_k: int = 3,
    fetch_k: int | None = None,
    relevance_margin: float | None = None,
    progress: Callable[[CreditRun], None] | None = None,
) -> tuple[CreditComparison, ...]:
    """Run every variant on every seed of every world; summarise with 95% intervals.

    Intervals are Student-t intervals over seeds; gains are paired per seed (the
    variants of one seed meet the same tasks with the same luck).

    Args:
        worlds: The worlds, one comparison each.
        n_tasks: Tasks per run.
        seeds: One run per world, variant and seed.
        variants: Names from :data:`CREDIT_VARIANTS` (and :data:`ORACLE_VARIANT`).
        embeddings: The memories' embedder (:func:`run_credit_variant`'s default when ``None``).
        top_k: Episodes a prompt shows at most.
        fetch_k: Candidates ranked per recall; twice ``top_k`` when ``None``.
        relevance_margin: The relevance ranking's margin; its default when ``None``.
        progress: Called with each run as it ends.

    Raises:
        EpisodicValueError: An argument is invalid.
    """
    check_int("n_tasks", n_tasks, 1)
    seed_list = tuple(check_int("seeds[]", s, 0) for s in seeds)
    names = tuple(dict.fromkeys(variants))
    if not seed_list or not names or not worlds:
        msg = "worlds, seeds and variants must all be non-empty"
        raise EpisodicValueError(msg)
    for name in names:
        _options(name, top_k, fetch_k, relevance_margin)  # an unknown name raises first
    comparisons = []
    for world in worlds:
        runs: dict[str, tuple[CreditRun, ...]] = {}
        for name in names:
            done = []
            for seed in seed_list:
                run = run_credit_variant(
                    name,
                    world,
                    n_tasks,
                    seed,
                    embeddings=embeddings,
                    top_k=top_k,
                    fetch_k=fetch_k,
                    relevance_margin=relevance_margin,
                )
                if progress is not None:
                    progress(run)
                done.append(run)
            runs[name] = tuple(done)
        base = runs.get("no_memory")
        summaries = tuple(_summarise(name, runs[name], base) for name in names)
        gain = relative = None
        if "relevance" in runs and "relevance_utility" in runs:
            pairs = list(zip(runs["relevance_utility"], runs["relevance"], strict=True))
            gain = t_interval([u.mean_reward - r.mean_reward for u, r in pairs])
            relative = t_interval([u.mean_reward / r.mean_reward - 1.0 for u, r in pairs])
        comparisons.append(
            CreditComparison(
                world=world.name,
                n_tasks=n_tasks,
                seeds=seed_list,
                summaries=summaries,
                utility_gain=gain,
                utility_relative_gain=relative,
                runs=MappingProxyType(runs),
            )
        )
    return tuple(comparisons)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        return lines + ["| " + " | ".join(row) + " |" for row in rows]
    widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(headers), "  ".join("-" * w for w in widths), *(line(row) for row in rows)]


def format_credit_report(comparisons: Sequence[CreditComparison], *, markdown: bool = False) -> str:
    """Every comparison as a table: reward, gain, what was shown; then utility's gain.

    Args:
        comparisons: What :func:`compare_credit_variants` returned.
        markdown: GitHub-flavoured markdown tables instead of aligned text.
    """
    out: list[str] = []
    for comparison in comparisons:
        seeds = list(comparison.seeds)
        out.append(
            f"world {comparison.world!r}: {comparison.n_tasks} tasks x {len(seeds)} seeds "
            f"{seeds}; mean reward per task [95% CI over seeds] (simulated)"
        )
        if markdown:
            out.append("")
        headers = (
            "variant",
            "reward",
            "gain vs no_memory (paired)",
            "success p",
            "shown/task",
            "fix/lucky/misl./warn/plain/other %",
            "explored",
        )
        rows = []
        for s in comparison.summaries:
            share = "/".join(
                f"{100 * s.shown_share.get(k, 0.0):.0f}" for k in (*EPISODE_KINDS, _OTHER_SUBTOPIC)
            )
            rows.append(
                (
                    s.variant,
                    s.reward.format(),
                    "-" if s.gain is None else s.gain.format("+.3f"),
                    f"{s.success.mean:.3f}",
                    f"{s.shown_per_task:.2f}",
                    share if s.shown_share else "-",
                    f"{s.explored:.0%}" if s.shown_share else "-",
                )
            )
        out.extend(_table(headers, rows, markdown))
        if comparison.utility_gain is not None and comparison.utility_relative_gain is not None:
            out.append("")
            out.append(
                f"utility vs no utility ({comparison.world}): "
                f"{comparison.utility_gain.format('+.4f')} reward per task, "
                f"{comparison.utility_relative_gain.format('+.1f', 100)} %"
            )
        out.append("")
    return "\n".join(out).rstrip() + "\n"
