"""A seeded, simulated coding-task environment: does memory make an agent better?

The environment stands in for an LLM agent and its test suite, so that the memory's
effect on *strategy choice* can be measured without a model:

* A task belongs to one of ten **sub-topics** (``code_generation/auth``,
  ``debugging/concurrency``, ``refactoring/legacy``, ``testing/flaky``,
  ``architecture/plugins`` ...). Its description is filled in from the sub-topic's
  templates, so tasks of one sub-topic share words (what the lexical
  :class:`~langchain_episodic.HashingEmbeddings` finds) yet read differently. Its
  complexity is drawn from the sub-topic's range.
* Each sub-topic has a **hidden success probability** per strategy of
  :data:`~langchain_episodic.STRATEGY_POOL`, with one strategy clearly best. For
  several sub-topics the best strategy is *not* what the article's complexity
  fallback picks (``"iterative"`` or ``"exploratory"``), so only experience or
  exploration can find it.
* An **attempt** runs 10 simulated tests: with the strategy's success probability
  all pass; otherwise each of 9 passes with a probability that also grows with the
  strategy's quality. :func:`~langchain_episodic.feedback_from_tests` turns the
  count into feedback and an outcome.

Randomness is *common* across strategies and variants: the task at index ``i`` and
the uniform draws of its attempt depend only on ``(seed, i)``, and a strategy
succeeds when its probability exceeds the task's draw. Two agents that pick the same
strategy for a task get the same result, and a better strategy never does worse on
the same task: differences between variants come from strategy choice, not luck.

:func:`run_variant` runs one agent (a *variant* of strategy selection, see
:data:`VARIANTS`) over a task sequence with a fresh in-process
:class:`~langchain_episodic.EpisodicMemory`; :func:`compare_variants` runs them all
over several seeds and summarises the learning curves in a :class:`BenchmarkReport`,
which :func:`format_report` prints and :func:`plot_report` draws.

Example:
    .. code-block:: python

        from langchain_episodic.simulation import compare_variants, format_report

        report = compare_variants(n_tasks=100, seeds=(0, 1))
        print(format_report(report))
"""

from __future__ import annotations

import math
import os
import string
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.diagnostics import LearningSnapshot, compute_learning_curve
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.episode import (
    Episode,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.feedback import feedback_from_tests
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.scoring import ReplayWeights
from langchain_episodic.strategy import (
    DEFAULT_EVIDENCE_K,
    STRATEGY_POOL,
    choose_strategy,
    complexity_strategy,
)

__all__ = [
    "DEFAULT_SEEDS",
    "START_TIME",
    "SUBTOPICS",
    "TASK_INTERVAL",
    "TESTS_PER_TASK",
    "VARIANTS",
    "VARIANT_DESCRIPTIONS",
    "BenchmarkReport",
    "CodingTaskEnvironment",
    "SimulatedTask",
    "Subtopic",
    "VariantSummary",
    "compare_variants",
    "format_report",
    "plot_report",
    "run_variant",
]

TESTS_PER_TASK = 10
"""Tests run per attempt."""

START_TIME = 1_780_000_000.0
"""Timestamp of the first simulated task, in seconds."""

TASK_INTERVAL = 3_600.0
"""Seconds between two tasks: one an hour, so a one-day half-life spans 24 tasks."""

DEFAULT_SEEDS = (0, 1, 2, 3, 4)
"""Seeds :func:`compare_variants` averages over by default."""

# Salts keep the random streams of one seed apart.
_TASK_SALT = 0x7A5C
_ATTEMPT_SALT = 0xA77E
_EXPLORE_SALT = 0xE4A1


# --------------------------------------------------------------------------- sub-topics


@dataclass(frozen=True)
class Subtopic:
    """A family of similar tasks and how well each strategy does on them.

    Attributes:
        name: ``"<category>/<topic>"``, e.g. ``"debugging/concurrency"``.
        category: The tasks' category.
        complexity: Range ``(low, high)`` the tasks' complexity is drawn from.
        templates: Description templates with ``{placeholders}`` filled from ``slots``.
        slots: Candidate fillers per placeholder.
        success: Hidden probability that an attempt with each pool strategy passes
            every test. The agent never sees it.
        failures: Test messages of failed attempts.
    """

    name: str
    category: TaskCategory
    complexity: tuple[float, float]
    templates: tuple[str, ...]
    slots: Mapping[str, tuple[str, ...]]
    success: Mapping[str, float]
    failures: tuple[str, ...]

    def __post_init__(self) -> None:
        if set(self.success) != set(STRATEGY_POOL):
            msg = f"Subtopic {self.name!r}: success must give every pool strategy a probability"
            raise EpisodicValueError(msg)
        formatter = string.Formatter()
        for template in self.templates:
            for _, field, _, _ in formatter.parse(template):
                if field is not None and field not in self.slots:
                    msg = f"Subtopic {self.name!r}: template field {field!r} has no slot"
                    raise EpisodicValueError(msg)

    @property
    def best_strategy(self) -> str:
        """The strategy with the highest hidden success probability."""
        return max(self.success, key=lambda name: self.success[name])


def _odds(
    conservative: float, exploratory: float, defensive: float, iterative: float, example: float
) -> Mapping[str, float]:
    return MappingProxyType(
        {
            "conservative": conservative,
            "exploratory": exploratory,
            "defensive": defensive,
            "iterative": iterative,
            "example_driven": example,
        }
    )


def _slots(**fillers: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(fillers)


_C = TaskCategory
SUBTOPICS: tuple[Subtopic, ...] = (
    Subtopic(
        name="code_generation/auth",
        category=_C.CODE_GENERATION,
        complexity=(0.35, 0.65),
        templates=(
            "Implement {feature} for the {app} login flow, {detail}",
            "Add {feature} to the authentication service of the {app}",
            "Build {feature} with session tokens for the {app} login, {detail}",
        ),
        slots=_slots(
            feature=(
                "a login form with email validation",
                "password reset by email",
                "OAuth2 sign-in with Google",
                "two-factor authentication",
                "remember-me session cookies",
                "JWT access token refresh",
                "role-based access checks",
            ),
            app=("customer portal", "admin dashboard", "mobile backend", "billing app"),
            detail=(
                "storing password hashes with bcrypt",
                "locking the account after five failed logins",
                "expiring idle sessions after 30 minutes",
                "with CSRF protection on the login endpoint",
            ),
        ),
        success=_odds(0.45, 0.35, 0.60, 0.85, 0.55),
        failures=(
            "login accepts an expired session token",
            "password reset link can be reused",
            "CSRF token missing on the login form",
        ),
    ),
    Subtopic(
        name="code_generation/csv",
        category=_C.CODE_GENERATION,
        complexity=(0.10, 0.30),
        templates=(
            "Write a CSV {what} for {data}, {detail}",
            "Implement the {what} of {data} as CSV files, {detail}",
            "Add a CSV {what} that handles {data} {detail}",
        ),
        slots=_slots(
            what=("exporter", "importer", "parser", "report writer", "column mapper"),
            data=(
                "the orders table",
                "monthly sales figures",
                "customer contacts",
                "inventory levels",
                "support tickets",
            ),
            detail=(
                "quoting commas and newlines inside CSV fields",
                "with a header row and UTF-8 encoding",
                "streaming CSV rows instead of loading the whole file",
                "skipping malformed CSV rows with a warning",
                "with a custom delimiter and date format",
            ),
        ),
        success=_odds(0.55, 0.30, 0.50, 0.60, 0.90),
        failures=(
            "quoted field with an embedded newline split into two rows",
            "header row written twice",
            "non-ASCII names garbled in the CSV output",
        ),
    ),
    Subtopic(
        name="debugging/concurrency",
        category=_C.DEBUGGING,
        complexity=(0.60, 0.90),
        templates=(
            "Fix the race condition in {component} when {situation}",
            "Debug the deadlock between {component} and the scheduler under {load}",
            "Track down the intermittent corruption in {component}: {situation}",
        ),
        slots=_slots(
            component=(
                "the job queue worker",
                "the connection pool",
                "the cache invalidation thread",
                "the order lock manager",
                "the async event loop",
            ),
            situation=(
                "two threads update the same record",
                "a worker is cancelled mid-write",
                "locks are acquired in a different order",
                "a shared counter is incremented without a lock",
            ),
            load=("heavy parallel load", "concurrent writes", "many threads"),
        ),
        success=_odds(0.30, 0.25, 0.80, 0.35, 0.40),
        failures=(
            "stress test still deadlocks after 2,000 iterations",
            "lost update under concurrent writes",
            "thread sanitizer reports a data race",
        ),
    ),
    Subtopic(
        name="debugging/memory_leak",
        category=_C.DEBUGGING,
        complexity=(0.40, 0.70),
        templates=(
            "Find and fix the memory leak in {component} after {duration}",
            "Debug the growing heap usage of {component}: {symptom}",
            "Profile {component} and fix the leaking {resource}",
        ),
        slots=_slots(
            component=(
                "the image thumbnail service",
                "the websocket server",
                "the PDF report renderer",
                "the ORM session layer",
            ),
            duration=("running for two days", "ten thousand requests", "each nightly batch"),
            symptom=(
                "resident memory grows by 50 MB an hour",
                "objects are never garbage collected",
                "the process is killed by the OOM killer",
            ),
            resource=("file handles", "database cursors", "event listeners", "cached buffers"),
        ),
        success=_odds(0.40, 0.75, 0.50, 0.50, 0.45),
        failures=(
            "heap still grows over the soak test",
            "file handles left open after the request",
            "leak fixed but response time doubled",
        ),
    ),
    Subtopic(
        name="refactoring/legacy",
        category=_C.REFACTORING,
        complexity=(0.50, 0.85),
        templates=(
            "Refactor the legacy {module} into {target} without changing behaviour",
            "Clean up the 2,000-line legacy {module}: {goal}",
            "Untangle the legacy {module} and {goal}",
        ),
        slots=_slots(
            module=(
                "billing module",
                "report generator from 2009",
                "OrderManager god class",
                "global-state config loader",
                "payroll script",
            ),
            target=(
                "small functions with clear names",
                "separate classes per responsibility",
                "a testable service layer",
            ),
            goal=(
                "remove duplicated code paths",
                "extract the tax rules",
                "replace global variables with parameters",
                "keep the old public API working",
            ),
        ),
        success=_odds(0.85, 0.20, 0.50, 0.45, 0.55),
        failures=(
            "characterisation test shows changed rounding",
            "old public function no longer importable",
            "behaviour changed for an undocumented edge case",
        ),
    ),
    Subtopic(
        name="refactoring/async",
        category=_C.REFACTORING,
        complexity=(0.30, 0.60),
        templates=(
            "Migrate {component} from {old} to {new}",
            "Refactor {component} to use {new} instead of {old}, {detail}",
            "Port {component} off {old} onto {new} {detail}",
        ),
        slots=_slots(
            component=(
                "the HTTP client wrapper",
                "the database access layer",
                "the email sender",
                "the file upload handler",
            ),
            old=("callbacks", "threads", "blocking requests", "synchronous I/O"),
            new=("async/await", "asyncio tasks", "httpx.AsyncClient", "an async connection pool"),
            detail=(
                "keeping the public async function names",
                "one module at a time",
                "with a sync shim for old callers",
            ),
        ),
        success=_odds(0.50, 0.45, 0.45, 0.60, 0.85),
        failures=(
            "coroutine was never awaited",
            "event loop blocked by a leftover synchronous call",
            "sync shim deadlocks inside a running loop",
        ),
    ),
    Subtopic(
        name="testing/flaky",
        category=_C.TESTING,
        complexity=(0.40, 0.75),
        templates=(
            "Stabilise the flaky {test} that fails {freq}",
            "Fix the intermittently failing flaky {test}: {cause}",
            "Make the flaky {test} deterministic, {cause}",
        ),
        slots=_slots(
            test=(
                "checkout integration test",
                "websocket reconnect test",
                "end-to-end login test",
                "scheduler timing test",
                "search indexing test",
            ),
            freq=("one CI run in ten", "only on the CI runners", "when CI runs it in parallel"),
            cause=(
                "it depends on wall-clock time",
                "it relies on test execution order",
                "it sleeps instead of waiting for the event",
                "it shares a temporary directory",
            ),
        ),
        success=_odds(0.35, 0.30, 0.85, 0.40, 0.50),
        failures=(
            "still fails 3 of 50 reruns",
            "timeout waiting for the event on a slow runner",
            "passes alone, fails after another test",
        ),
    ),
    Subtopic(
        name="testing/unit",
        category=_C.TESTING,
        complexity=(0.10, 0.35),
        templates=(
            "Write unit tests for {unit} covering {cases}",
            "Add pytest unit tests for {unit}, {cases}",
            "Cover {unit} with unit tests: {cases}",
        ),
        slots=_slots(
            unit=(
                "the price calculator",
                "the slugify helper",
                "the date range parser",
                "the discount rules",
                "the email validator",
            ),
            cases=(
                "edge cases and invalid input",
                "boundary values",
                "empty and None arguments",
                "parametrized happy paths",
            ),
        ),
        success=_odds(0.60, 0.45, 0.55, 0.70, 0.92),
        failures=(
            "coverage below the 90 % gate",
            "test asserts on the implementation, not the behaviour",
            "boundary value off by one",
        ),
    ),
    Subtopic(
        name="architecture/plugins",
        category=_C.ARCHITECTURE,
        complexity=(0.70, 0.95),
        templates=(
            "Design a plugin architecture for {app} so that {goal}",
            "Architect a plugin extension system with {mechanism} for {app}",
            "Design how third-party plugins {goal2} in {app}, using {mechanism}",
        ),
        slots=_slots(
            app=(
                "the static site generator",
                "the data pipeline",
                "the IDE extension host",
                "the chat bot framework",
            ),
            goal=(
                "third parties can add exporters",
                "plugins load lazily",
                "plugins are isolated from each other",
                "plugin versions are checked at load time",
            ),
            goal2=("register commands", "hook into the build", "ship their own settings"),
            mechanism=(
                "entry points",
                "a hook registry",
                "a sandboxed plugin process",
                "dependency injection",
            ),
        ),
        success=_odds(0.35, 0.80, 0.40, 0.45, 0.50),
        failures=(
            "plugin API leaks internal types",
            "a crashing plugin takes the host down",
            "load order between plugins undefined",
        ),
    ),
    Subtopic(
        name="architecture/events",
        category=_C.ARCHITECTURE,
        complexity=(0.60, 0.90),
        templates=(
            "Design an event-driven architecture for {domain} with {broker}",
            "Split {domain} into services that exchange events through {broker}, {concern}",
            "Architect the {domain} event flow over {broker}: {concern}",
        ),
        slots=_slots(
            domain=(
                "order fulfilment",
                "user notifications",
                "payment processing",
                "inventory sync",
            ),
            broker=("a message queue", "Kafka topics", "an outbox table"),
            concern=(
                "guaranteeing at-least-once delivery",
                "handling duplicate events",
                "keeping the event schema versioned",
            ),
        ),
        success=_odds(0.45, 0.50, 0.55, 0.80, 0.50),
        failures=(
            "duplicate event processed twice",
            "consumer breaks on the new event schema",
            "events lost when the broker restarts",
        ),
    ),
)
"""The simulated sub-topics, two per category."""

_BY_NAME: Mapping[str, Subtopic] = MappingProxyType({s.name: s for s in SUBTOPICS})


# ------------------------------------------------------------------------- environment


@dataclass(frozen=True)
class SimulatedTask:
    """A task drawn by :class:`CodingTaskEnvironment`.

    Attributes:
        task: What the agent sees.
        subtopic: Name of the hidden sub-topic (see :data:`SUBTOPICS`).
        index: Position in the environment's task sequence; with the seed it fixes
            the randomness of every attempt at this task.
    """

    task: TaskDescription
    subtopic: str
    index: int = 0


def _check_strategy(strategy: str) -> str:
    if strategy not in STRATEGY_POOL:
        allowed = ", ".join(repr(name) for name in STRATEGY_POOL)
        msg = f"strategy={strategy!r} is invalid: must be one of {allowed}"
        raise EpisodicValueError(msg)
    return strategy


class CodingTaskEnvironment:
    """Seeded simulated coding tasks with hidden per-strategy success probabilities.

    Everything is a pure function of ``(seed, task index)``: :meth:`task_at` and
    :meth:`tasks` give the same tasks in every process, and :meth:`attempt` gives
    the same result for the same task and strategy.

    Instantiate:
        .. code-block:: python

            from langchain_episodic.simulation import CodingTaskEnvironment

            env = CodingTaskEnvironment(seed=0)

    Attempt:
        .. code-block:: python

            for simulated in env.tasks(3):
                feedback, outcome = env.attempt(simulated, "iterative")
                print(simulated.task.description, feedback.tests_passed, outcome.value)

    Args:
        seed: Fixes the task sequence and the attempts' randomness.
        subtopics: The sub-topics to draw tasks from, uniformly.
        tests_per_task: Tests per attempt, at least 2.
    """

    def __init__(
        self,
        seed: int = 0,
        subtopics: Sequence[Subtopic] = SUBTOPICS,
        tests_per_task: int = TESTS_PER_TASK,
    ) -> None:
        self.seed = check_int("seed", seed, 0)
        self.tests_per_task = check_int("tests_per_task", tests_per_task, 2)
        self.subtopics: tuple[Subtopic, ...] = tuple(subtopics)
        if not self.subtopics or not all(isinstance(s, Subtopic) for s in self.subtopics):
            msg = f"subtopics={subtopics!r} is invalid: must be a non-empty sequence of Subtopic"
            raise EpisodicValueError(msg)
        self._by_name = {s.name: s for s in self.subtopics}
        self._next = 0

    def __repr__(self) -> str:
        return f"CodingTaskEnvironment(seed={self.seed}, subtopics={len(self.subtopics)})"

    # -------------------------------------------------------------- tasks

    def task_at(self, index: int) -> SimulatedTask:
        """The task at position ``index`` of this seed's sequence."""
        check_int("index", index, 0)
        rng = np.random.default_rng([self.seed, index, _TASK_SALT])
        subtopic = self.subtopics[int(rng.integers(len(self.subtopics)))]
        template = subtopic.templates[int(rng.integers(len(subtopic.templates)))]
        fields = {
            name: values[int(rng.integers(len(values)))] for name, values in subtopic.slots.items()
        }
        low, high = subtopic.complexity
        complexity = round(float(rng.uniform(low, high)), 2)
        description = template.format(**fields)
        task = TaskDescription(description, subtopic.category, complexity)
        return SimulatedTask(task=task, subtopic=subtopic.name, index=index)

    def tasks(self, n: int) -> tuple[SimulatedTask, ...]:
        """The first ``n`` tasks of the sequence (the same on every call)."""
        return tuple(self.task_at(index) for index in range(check_int("n", n, 0)))

    def sample_task(self) -> SimulatedTask:
        """The next task of the sequence: index 0 on the first call, then 1, 2, ..."""
        task = self.task_at(self._next)
        self._next += 1
        return task

    # -------------------------------------------------------------- truth

    def subtopic(self, name: str) -> Subtopic:
        """The sub-topic called ``name``."""
        try:
            return self._by_name[name]
        except KeyError:
            msg = f"subtopic={name!r} is invalid: not one of this environment's sub-topics"
            raise EpisodicValueError(msg) from None

    def success_probability(self, subtopic: str, strategy: str) -> float:
        """Hidden probability that ``strategy`` passes every test on ``subtopic``."""
        return self.subtopic(subtopic).success[_check_strategy(strategy)]

    def best_strategy(self, subtopic: str) -> str:
        """The strategy with the highest hidden success probability on ``subtopic``."""
        return self.subtopic(subtopic).best_strategy

    # -------------------------------------------------------------- attempts

    def attempt(self, task: SimulatedTask, strategy: str) -> tuple[Feedback, OutcomeStatus]:
        """Run the simulated tests of ``task`` solved with ``strategy``.

        With probability ``p`` (the strategy's hidden success probability) every test
        passes. Otherwise ``tests_per_task - 1`` tests each pass with probability
        ``0.2 + 0.6 * p``. The draws depend only on the seed and the task's index, so
        every strategy faces the same luck and a better strategy never does worse.

        Returns:
            Feedback (reward = pass rate) and outcome, by
            :func:`~langchain_episodic.feedback_from_tests`.

        Raises:
            TypeError: ``task`` is not a :class:`SimulatedTask`.
            EpisodicValueError: ``strategy`` is not in the pool, or the task's
                sub-topic is unknown to this environment.
        """
        if not isinstance(task, SimulatedTask):
            msg = f"task={task!r} is invalid: must be a SimulatedTask"
            raise TypeError(msg)
        p = self.success_probability(task.subtopic, strategy)
        total = self.tests_per_task
        rng = np.random.default_rng([self.seed, task.index, _ATTEMPT_SALT])
        luck = float(rng.random())
        per_test = rng.random(total - 1)
        if luck < p:
            passed = total
            message = f"all {total} tests pass"
        else:
            passed = int(np.count_nonzero(per_test < 0.2 + 0.6 * p))
            failures = self.subtopic(task.subtopic).failures
            reason = failures[int(rng.integers(len(failures)))]
            message = f"{total - passed} of {total} tests fail: {reason}"
        return feedback_from_tests(passed, total, message)


# ---------------------------------------------------------------------------- variants

VARIANTS: tuple[str, ...] = (
    "no_memory",
    "similarity_only",
    "prioritized",
    "prioritized_explore",
    "phase_early",
    "phase_late",
    "phase_auto",
)
"""Strategy-selection variants :func:`run_variant` knows, in report order."""

VARIANT_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "no_memory": "complexity fallback only (select_strategy with an empty memory)",
        "similarity_only": "article hierarchy, recall ranked by similarity alone",
        "prioritized": "article hierarchy, prioritized replay (select_strategy, the default)",
        "prioritized_explore": "Thompson sampling over the 20 most similar episodes",
        "phase_early": "article hierarchy, early-phase weights (0.6/0.1/0.2/0.1)",
        "phase_late": "article hierarchy, late-phase weights (0.3/0.4/0.2/0.1)",
        "phase_auto": "article hierarchy, phase weights by experience (early<20, late>=200)",
    }
)
"""One line per variant: how it picks a strategy."""

_SIMILARITY_ONLY = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)

Policy = Callable[[SimulatedTask, EpisodicMemory, float, int], str]


def _make_policy(variant: str, seed: int, evidence_k: int) -> Policy:
    if variant == "no_memory":
        return lambda simulated, _memory, _now, _n: complexity_strategy(simulated.task)
    if variant == "prioritized_explore":

        def explore(simulated: SimulatedTask, memory: EpisodicMemory, now: float, _n: int) -> str:
            rng = np.random.default_rng([seed, simulated.index, _EXPLORE_SALT])
            return choose_strategy(
                simulated.task,
                memory,
                now,
                exploration="thompson",
                rng=rng,
                evidence_k=evidence_k,
            ).strategy

        return explore
    fixed: dict[str, ReplayWeights | None] = {
        "similarity_only": _SIMILARITY_ONLY,
        "prioritized": None,
        "phase_early": ReplayWeights.for_phase("early"),
        "phase_late": ReplayWeights.for_phase("late"),
    }
    if variant == "phase_auto":

        def auto(simulated: SimulatedTask, memory: EpisodicMemory, now: float, n: int) -> str:
            weights = ReplayWeights.for_experience(n)
            return choose_strategy(simulated.task, memory, now, weights=weights).strategy

        return auto
    if variant not in fixed:
        allowed = ", ".join(repr(name) for name in VARIANTS)
        msg = f"variant={variant!r} is invalid: must be one of {allowed}"
        raise EpisodicValueError(msg)
    weights = fixed[variant]

    def hierarchy(simulated: SimulatedTask, memory: EpisodicMemory, now: float, _n: int) -> str:
        return choose_strategy(simulated.task, memory, now, weights=weights).strategy

    return hierarchy


def _iterations(feedback: Feedback) -> int:
    # A fuller pass needed fewer rounds of fixing: 1 when all pass, up to 4.
    return 1 + math.ceil(3 * (1.0 - feedback.pass_rate))


def run_variant(
    variant: str,
    n_tasks: int = 300,
    seed: int = 0,
    *,
    environment: CodingTaskEnvironment | None = None,
    memory: EpisodicMemory | None = None,
    start_time: float = START_TIME,
    task_interval: float = TASK_INTERVAL,
    evidence_k: int = DEFAULT_EVIDENCE_K,
) -> tuple[Episode, ...]:
    """Run one strategy-selection variant over ``n_tasks`` simulated tasks.

    For each task, in order: choose a strategy (from the memory, as ``variant``
    says), attempt the task, and record the episode. Task ``i`` happens at
    ``start_time + i * task_interval``, and that is "now" for its recall, so recency
    means something.

    Args:
        variant: One of :data:`VARIANTS`.
        n_tasks: Tasks to run.
        seed: Seed of the environment (when none is given) and of the exploration.
        environment: The task source; ``CodingTaskEnvironment(seed)`` when ``None``.
        memory: An empty memory to record into; a fresh in-process one (private
            Chroma collection, :class:`~langchain_episodic.HashingEmbeddings`) when
            ``None``.
        start_time: Timestamp of the first task, in seconds.
        task_interval: Seconds between two tasks.
        evidence_k: Similar episodes Thompson sampling counts (``prioritized_explore``).

    Returns:
        The recorded episodes, in recording order.

    Raises:
        EpisodicValueError: An argument is invalid, or ``memory`` is not empty.
    """
    check_int("n_tasks", n_tasks, 0)
    check_int("seed", seed, 0)
    check_number("start_time", start_time)
    interval = check_number("task_interval", task_interval, 0.0)
    if interval <= 0:
        msg = f"task_interval={task_interval!r} is invalid: must be > 0 seconds"
        raise EpisodicValueError(msg)
    policy = _make_policy(variant, seed, check_int("evidence_k", evidence_k, 1))
    env = environment if environment is not None else CodingTaskEnvironment(seed)
    now = [start_time]
    if memory is None:
        memory = EpisodicMemory(embeddings=HashingEmbeddings(), clock=lambda: now[0])
    elif len(memory):
        msg = f"memory={memory!r} is invalid: it already holds {len(memory)} episode(s)"
        raise EpisodicValueError(msg)
    episodes: list[Episode] = []
    for index in range(n_tasks):
        now[0] = start_time + index * interval
        simulated = env.task_at(index)
        strategy = policy(simulated, memory, now[0], index)
        feedback, outcome = env.attempt(simulated, strategy)
        episode = Episode(
            episode_id=f"{variant}-{env.seed}-{index:05d}",
            task=simulated.task,
            solution=f"# {strategy} solution for: {simulated.task.description}",
            feedback=feedback,
            outcome=outcome,
            timestamp=now[0],
            iterations=_iterations(feedback),
            strategy_used=strategy,
        )
        memory.record(episode)
        episodes.append(episode)
    return tuple(episodes)


# ---------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class VariantSummary:
    """One variant's results, as mean and standard deviation over seeds.

    Standard deviations are sample deviations (``ddof=1``); 0.0 for a single seed.

    Attributes:
        variant: The variant's name.
        final_success_mean: Rolling success rate at the last task (window of the report).
        final_success_std: Its standard deviation over seeds.
        last100_success_mean: Success rate over the last 100 tasks (all tasks if fewer).
        last100_success_std: Its standard deviation over seeds.
        cumulative_reward_mean: Sum of rewards over all tasks.
        cumulative_reward_std: Its standard deviation over seeds.
        reward_gain_mean: Cumulative reward minus the baseline's on the same seed
            (paired: same tasks, same luck), averaged over seeds.
        reward_gain_std: Its standard deviation over seeds.
        best_choice_rate: Share of tasks on which the variant chose the sub-topic's
            hidden best strategy, averaged over seeds.
        seconds: Wall-clock seconds the variant took, summed over seeds.
    """

    variant: str
    final_success_mean: float
    final_success_std: float
    last100_success_mean: float
    last100_success_std: float
    cumulative_reward_mean: float
    cumulative_reward_std: float
    reward_gain_mean: float
    reward_gain_std: float
    best_choice_rate: float
    seconds: float


@dataclass(frozen=True)
class BenchmarkReport:
    """Learning curves of every variant on every seed, and their summary.

    Attributes:
        n_tasks: Tasks per run.
        seeds: The seeds, one run per variant and seed.
        window: Window of the rolling success rate.
        variants: The variants, in report order.
        baseline: The variant reward gains are measured against (``"no_memory"``
            when it was run, else the first variant).
        curves: Per variant, one learning curve per seed (in ``seeds`` order).
        summaries: One summary per variant, in ``variants`` order.
    """

    n_tasks: int
    seeds: tuple[int, ...]
    window: int
    variants: tuple[str, ...]
    baseline: str
    curves: Mapping[str, tuple[tuple[LearningSnapshot, ...], ...]]
    summaries: tuple[VariantSummary, ...]

    def summary(self, variant: str) -> VariantSummary:
        """The summary of ``variant``.

        Raises:
            EpisodicValueError: ``variant`` is not in this report.
        """
        for summary in self.summaries:
            if summary.variant == variant:
                return summary
        msg = f"variant={variant!r} is not in this report: {', '.join(self.variants)}"
        raise EpisodicValueError(msg)


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    array = np.asarray(values, dtype=np.float64)
    std = float(array.std(ddof=1)) if array.size > 1 else 0.0
    return float(array.mean()), std


@dataclass(frozen=True)
class _Run:
    curve: tuple[LearningSnapshot, ...]
    last100: float
    best_rate: float
    seconds: float


def compare_variants(
    n_tasks: int = 300,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    variants: Sequence[str] = VARIANTS,
    window: int = 20,
    *,
    progress: Callable[[str, int, float], None] | None = None,
) -> BenchmarkReport:
    """Run every variant on every seed and summarise the learning curves.

    All variants of one seed face the same tasks with the same attempt randomness,
    so reward gains over the baseline are paired per seed.

    Args:
        n_tasks: Tasks per run.
        seeds: One run per variant and seed.
        variants: Names from :data:`VARIANTS`.
        window: Window of the rolling success rate (``compute_learning_curve``).
        progress: Called as ``progress(variant, seed, seconds)`` after each run.

    Raises:
        EpisodicValueError: An argument is invalid.
    """
    check_int("n_tasks", n_tasks, 1)
    check_int("window", window, 1)
    seed_list = tuple(check_int("seeds[]", s, 0) for s in seeds)
    names = tuple(dict.fromkeys(variants))
    if not seed_list or not names:
        msg = f"seeds={seeds!r} and variants={variants!r} must both be non-empty"
        raise EpisodicValueError(msg)
    for name in names:
        _make_policy(name, 0, 1)  # an unknown name raises before anything runs
    envs = {seed: CodingTaskEnvironment(seed) for seed in seed_list}
    best = {
        seed: [env.best_strategy(t.subtopic) for t in env.tasks(n_tasks)]
        for seed, env in envs.items()
    }
    runs: dict[str, list[_Run]] = {}
    for name in names:
        for seed in seed_list:
            started = time.perf_counter()
            episodes = run_variant(name, n_tasks, seed, environment=envs[seed])
            elapsed = time.perf_counter() - started
            if progress is not None:
                progress(name, seed, elapsed)
            tail = episodes[-100:]
            picks = [e.strategy_used == b for e, b in zip(episodes, best[seed], strict=True)]
            runs.setdefault(name, []).append(
                _Run(
                    curve=compute_learning_curve(episodes, window),
                    last100=sum(e.outcome is OutcomeStatus.SUCCESS for e in tail) / len(tail),
                    best_rate=sum(picks) / len(picks),
                    seconds=elapsed,
                )
            )
    baseline = "no_memory" if "no_memory" in names else names[0]
    base_rewards = [run.curve[-1].cumulative_reward for run in runs[baseline]]
    summaries = []
    for name in names:
        per_seed = runs[name]
        rewards = [run.curve[-1].cumulative_reward for run in per_seed]
        final = _mean_std([run.curve[-1].rolling_success_rate for run in per_seed])
        tail_stats = _mean_std([run.last100 for run in per_seed])
        cumulative = _mean_std(rewards)
        gain = _mean_std([r - b for r, b in zip(rewards, base_rewards, strict=True)])
        summaries.append(
            VariantSummary(
                variant=name,
                final_success_mean=final[0],
                final_success_std=final[1],
                last100_success_mean=tail_stats[0],
                last100_success_std=tail_stats[1],
                cumulative_reward_mean=cumulative[0],
                cumulative_reward_std=cumulative[1],
                reward_gain_mean=gain[0],
                reward_gain_std=gain[1],
                best_choice_rate=float(np.mean([run.best_rate for run in per_seed])),
                seconds=sum(run.seconds for run in per_seed),
            )
        )
    return BenchmarkReport(
        n_tasks=n_tasks,
        seeds=seed_list,
        window=window,
        variants=names,
        baseline=baseline,
        curves=MappingProxyType({name: tuple(run.curve for run in runs[name]) for name in names}),
        summaries=tuple(summaries),
    )


def format_report(report: BenchmarkReport, *, markdown: bool = False) -> str:
    """The report's summary as an aligned table, one row per variant.

    Args:
        report: What :func:`compare_variants` returned.
        markdown: Render a GitHub-flavoured markdown table instead of plain text.
    """
    last = min(100, report.n_tasks)
    headers = (
        "variant",
        f"final success (w={report.window})",
        f"success last {last}",
        "cumulative reward",
        f"gain vs {report.baseline}",
        "best-strategy picks",
        "seconds",
    )
    rows = [
        (
            s.variant,
            f"{s.final_success_mean:.3f} ± {s.final_success_std:.3f}",
            f"{s.last100_success_mean:.3f} ± {s.last100_success_std:.3f}",
            f"{s.cumulative_reward_mean:.1f} ± {s.cumulative_reward_std:.1f}",
            f"{s.reward_gain_mean:+.1f} ± {s.reward_gain_std:.1f}",
            f"{s.best_choice_rate:.1%}",
            f"{s.seconds:.1f}",
        )
        for s in report.summaries
    ]
    widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return ("| " + " | ".join(padded) + " |") if markdown else "  ".join(padded)

    if markdown:
        rule = (
            "|"
            + "|".join(
                ("-" * (w + 1) + ":") if i else (":" + "-" * (w + 1)) for i, w in enumerate(widths)
            )
            + "|"
        )
    else:
        rule = "  ".join("-" * width for width in widths)
    title = (
        f"{report.n_tasks} tasks x {len(report.seeds)} seeds {list(report.seeds)}; "
        "mean ± std over seeds"
    )
    table = [line(headers), rule, *(line(row) for row in rows)]
    if markdown:
        return "\n".join([title, "", *table])
    return "\n".join([title, *table])


def plot_report(report: BenchmarkReport, path: str | os.PathLike[str]) -> None:
    """Draw the rolling success rate and the cumulative reward of every variant.

    Three panels: rolling success rate, cumulative reward, and cumulative reward
    minus the baseline's on the same seed. One line per variant (the mean over
    seeds) inside a shaded band of ±1 standard deviation. Drawn with matplotlib's
    Agg backend, without pyplot's global state.

    Args:
        report: What :func:`compare_variants` returned.
        path: Where to save the figure; the format follows the suffix (``.png``).

    Raises:
        ImportError: matplotlib is not installed
            (``pip install "langchain-episodic[plot]"``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError as error:
        msg = (
            "plot_report needs matplotlib, which is not installed: "
            'pip install "langchain-episodic[plot]"'
        )
        raise ImportError(msg) from error

    figure = Figure(figsize=(10, 11), layout="constrained")
    FigureCanvasAgg(figure)
    success_axes, reward_axes, gain_axes = figure.subplots(3, 1, sharex=True)
    x = np.arange(1, report.n_tasks + 1)
    base = np.array([[p.cumulative_reward for p in c] for c in report.curves[report.baseline]])
    for number, name in enumerate(report.variants):
        runs = report.curves[name]
        success = np.array([[p.rolling_success_rate for p in curve] for curve in runs])
        reward = np.array([[p.cumulative_reward for p in curve] for curve in runs])
        panels = ((success_axes, success), (reward_axes, reward), (gain_axes, reward - base))
        for axes, values in panels:
            mean = values.mean(axis=0)
            std = values.std(axis=0, ddof=1) if len(runs) > 1 else np.zeros_like(mean)
            color = f"C{number % 10}"
            axes.plot(x, mean, label=name, color=color, linewidth=1.5)
            axes.fill_between(x, mean - std, mean + std, color=color, alpha=0.12, linewidth=0)
    seeds = f"mean ± 1 std over {len(report.seeds)} seed(s)"
    success_axes.set_title(f"Rolling success rate (window {report.window}), {seeds}")
    success_axes.set_ylabel("success rate")
    success_axes.set_ylim(0.0, 1.0)
    success_axes.legend(loc="lower right", fontsize="small", ncols=2)
    reward_axes.set_title(f"Cumulative reward, {seeds}")
    reward_axes.set_ylabel("reward")
    gain_axes.set_title(f"Cumulative reward minus {report.baseline}'s on the same seed (paired)")
    gain_axes.set_ylabel("reward gain")
    gain_axes.axhline(0.0, color="black", linewidth=0.8)
    gain_axes.set_xlabel("task")
    figure.savefig(os.fspath(path), dpi=110)
