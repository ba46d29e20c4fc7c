"""The simulated coding-task environment: sub-topics, tasks and seeded attempts."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import Feedback, OutcomeStatus, TaskCategory, TaskDescription
from langchain_episodic.model.feedback import feedback_from_tests
from langchain_episodic.scoring.strategy import STRATEGY_POOL

__all__ = [
    "DEFAULT_SEEDS",
    "START_TIME",
    "SUBTOPICS",
    "TASK_INTERVAL",
    "TESTS_PER_TASK",
    "CodingTaskEnvironment",
    "SimulatedTask",
    "Subtopic",
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

            from simulation import CodingTaskEnvironment

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
