"""The episode data model: immutable, validated records of what an agent did.

An `Episode` is one finished attempt at a task: the task itself, the solution,
the feedback from tests, the outcome, when it happened, how many iterations it took
and which strategy was used. Every class here is a frozen dataclass that validates
itself on construction, so an invalid episode can never exist, and each one
round-trips exactly through ``to_dict()`` / ``from_dict()`` (JSON-safe).

Time, one rule: ``timestamp`` is seconds since 1970-01-01 UTC, from 0 to
`MAX_TIMESTAMP` (the year 2200), and a missing one means *now*: ``time.time()``
when the episode is built (or read by ``from_dict``). Milliseconds, dates before 1970
and dates past 2200 are refused, naming the field and the value. Records stored by
earlier versions keep loading whatever their (finite) timestamp: the range is a rule
for new episodes, not for what is already stored.

Examples:
    ```python
    from langchain_episodic import (
        Episode,
        Feedback,
        OutcomeStatus,
        TaskCategory,
        TaskDescription,
    )

    episode = Episode(
        episode_id="login-1",
        task=TaskDescription("Implement a login form", TaskCategory.CODE_GENERATION, 0.6),
        solution="def login(user, password): ...",
        feedback=Feedback(reward=0.9, message="9/10 pass", tests_passed=9, tests_total=10),
        outcome=OutcomeStatus.SUCCESS,
        timestamp=1_700_000_000.0,
        iterations=3,
        strategy_used="iterative",
    )
    assert Episode.from_dict(episode.to_dict()) == episode
    assert episode.feedback.pass_rate == 0.9
    ```
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from enum import Enum
from typing import Any, TypeVar

from langchain_episodic._validation import MAX_INT, describe, encodes, finite_float
from langchain_episodic.errors import EpisodeValidationError, EpisodicValueError

__all__ = [
    "LESSON_ID_PREFIX",
    "MAX_TIMESTAMP",
    "Episode",
    "EpisodeSource",
    "Feedback",
    "OutcomeStatus",
    "TaskCategory",
    "TaskDescription",
    "as_task",
    "episode_from_stored",
    "pass_rate_of",
    "plain_dict",
]


class OutcomeStatus(str, Enum):
    """How an attempt at a task ended."""

    SUCCESS = "success"
    PARTIAL = "partial"
    FAILURE = "failure"


class TaskCategory(str, Enum):
    """The kind of task; skill profiles and strategy selection group by it."""

    CODE_GENERATION = "code_generation"
    DEBUGGING = "debugging"
    REFACTORING = "refactoring"
    TESTING = "testing"
    ARCHITECTURE = "architecture"
    UNKNOWN = "unknown"


_E = TypeVar("_E", bound=Enum)


def _fail(owner: str, field: str, value: object, rule: str) -> EpisodeValidationError:
    return EpisodeValidationError(f"{owner}.{field}={describe(value)} is invalid: {rule}")


def _as_enum(owner: str, field: str, value: object, enum_type: type[_E]) -> _E:
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(value)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in enum_type)
        raise _fail(owner, field, value, f"must be one of {allowed}") from None


def _as_finite_float(owner: str, field: str, value: object, *, unit: bool = False) -> float:
    number = finite_float(value)
    if number is None:
        raise _fail(owner, field, value, "must be a finite number")
    if unit and not 0.0 <= number <= 1.0:
        raise _fail(owner, field, value, "must be between 0 and 1")
    return number


LESSON_ID_PREFIX = "lesson-"
"""Every lesson id starts with it and no episode id may: credit keeps the two apart."""

MAX_TIMESTAMP = 7_258_118_400.0
"""The latest timestamp a new episode may carry: 2200-01-01T00:00:00Z, in seconds.

A fixed bound, not one relative to a clock: episodes stay pure (no clock decides
whether one is valid), historical data replays and simulated clocks run freely up to
2200, and anything in milliseconds or finer after March 1970 is above it.
"""

_SECONDS_PER_YEAR = 31_556_952.0  # the mean Gregorian year
_FINER_UNITS = (("milliseconds", 1e3), ("microseconds", 1e6), ("nanoseconds", 1e9))
_PLAUSIBLE_SINCE = 315_532_800.0  # 1980-01-01: a finer unit is guessed only for later dates


def _year_of(seconds: float) -> str:
    year = 1970 + seconds / _SECONDS_PER_YEAR
    return f"the year {math.floor(year)}" if year < 1e9 else "billions of years from now"


def _timestamp_rule_broken(seconds: float) -> str | None:
    """Why ``seconds`` is not a timestamp a new episode may carry, or ``None`` if it is."""
    if seconds < 0.0:
        return "must be >= 0: seconds since 1970-01-01 UTC, and this is before 1970"
    if seconds <= MAX_TIMESTAMP:
        return None
    for unit, factor in _FINER_UNITS:
        if _PLAUSIBLE_SINCE <= seconds / factor <= MAX_TIMESTAMP:
            return (
                f"looks like {unit} (as seconds it is {_year_of(seconds)}); pass "
                f"seconds, e.g. {seconds / factor!r}"
            )
    return (
        f"must be <= {MAX_TIMESTAMP!r} (2200-01-01 UTC) but is {_year_of(seconds)}; "
        "pass seconds since 1970-01-01 UTC, e.g. time.time()"
    )


def _as_int(owner: str, field: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _fail(owner, field, value, "must be an integer")
    number = int(value)
    if number < minimum:
        raise _fail(owner, field, value, f"must be >= {minimum}")
    if number > MAX_INT:
        raise _fail(owner, field, value, f"must be <= {MAX_INT} (2**63 - 1)")
    return number


def _as_text(owner: str, field: str, value: object, *, allow_empty: bool) -> str:
    if not isinstance(value, str):
        raise _fail(owner, field, value, "must be a string")
    if not allow_empty and not value.strip():
        raise _fail(owner, field, value, "must not be empty")
    if not encodes(value):
        raise _fail(owner, field, value, "must be valid Unicode (it holds a lone surrogate)")
    return value


def _set(instance: object, field: str, value: object) -> None:
    # Frozen dataclasses normalise their own fields once, during __post_init__.
    object.__setattr__(instance, field, value)


def _fields_of(cls: type[Any], data: object) -> dict[str, Any]:
    """``data`` as ``cls``'s keyword arguments: a mapping of its fields, the required ones given."""
    owner, fields = cls.__name__, cls.__dataclass_fields__.values()
    if not isinstance(data, Mapping):
        raise EpisodeValidationError(f"{owner} data={data!r} is invalid: must be a mapping")
    required = {f.name for f in fields if f.default is MISSING and f.default_factory is MISSING}
    missing = sorted(required - data.keys())
    if missing:
        raise EpisodeValidationError(f"{owner} data is missing field(s) {missing}")
    unknown = sorted(str(key) for key in data.keys() - {f.name for f in fields})
    if unknown:
        raise EpisodeValidationError(f"{owner} data has unknown field(s) {unknown}")
    return dict(data)


def plain_dict(instance: Any) -> dict[str, Any]:
    """The ``to_dict`` of them all: set fields in order, enums by value, parts as dicts."""
    data = {}
    for name in instance.__dataclass_fields__:
        value = getattr(instance, name)
        if isinstance(value, Enum):
            data[name] = value.value
        elif hasattr(value, "__dataclass_fields__"):
            data[name] = plain_dict(value)
        elif value is not None:
            data[name] = value
    return data


@dataclass(frozen=True)
class TaskDescription:
    """A task the agent was given.

    Attributes:
        description: What was asked, in words. This is the text that is embedded.
        category: The kind of task.
        complexity: Estimated difficulty, from 0 (trivial) to 1 (hardest).
    """

    description: str
    category: TaskCategory = TaskCategory.UNKNOWN
    complexity: float = 0.5

    def __post_init__(self) -> None:
        owner = "TaskDescription"
        _as_text(owner, "description", self.description, allow_empty=False)
        _set(self, "category", _as_enum(owner, "category", self.category, TaskCategory))
        _set(self, "complexity", _as_finite_float(owner, "complexity", self.complexity, unit=True))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict that `from_dict` turns back into an equal task."""
        return {
            "description": self.description,
            "category": self.category.value,
            "complexity": self.complexity,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskDescription:
        """Build a task from `to_dict` output, validating every field."""
        return cls(**_fields_of(cls, data))


def as_task(task: TaskDescription | str, name: str = "task") -> TaskDescription:
    """``task`` as a `TaskDescription`; a string becomes one of category unknown.

    The one place a task given as text is turned into a task (recall, replay, credit
    and the integrations all call it).

    Args:
        task: A task, or its description.
        name: The argument's name, for the error message.

    Raises:
        EpisodicValueError: ``task`` is neither, or an empty (or blank) string.

    Examples:
        >>> as_task("Add a login form").category
        <TaskCategory.UNKNOWN: 'unknown'>
    """
    if isinstance(task, TaskDescription):
        return task
    if isinstance(task, str) and task.strip():
        return TaskDescription(task)
    msg = f"{name}={task!r} is invalid: must be a non-empty string or a TaskDescription"
    raise EpisodicValueError(msg)


def pass_rate_of(tests_passed: int, tests_total: int) -> float:
    """The share of ``tests_total`` tests that passed; 0.0 when no test ran.

    Examples:
        >>> pass_rate_of(9, 10), pass_rate_of(0, 0)
        (0.9, 0.0)
    """
    return tests_passed / tests_total if tests_total > 0 else 0.0


@dataclass(frozen=True)
class Feedback:
    """What the tests said about a solution.

    Attributes:
        reward: Scalar reward in [0, 1].
        message: Free-text feedback, e.g. the failing assertion.
        tests_passed: Number of tests that passed.
        tests_total: Number of tests that ran; at least ``tests_passed``.
    """

    reward: float
    message: str = ""
    tests_passed: int = 0
    tests_total: int = 0

    def __post_init__(self) -> None:
        owner = "Feedback"
        _set(self, "reward", _as_finite_float(owner, "reward", self.reward, unit=True))
        _as_text(owner, "message", self.message, allow_empty=True)
        _set(self, "tests_passed", _as_int(owner, "tests_passed", self.tests_passed, 0))
        _set(self, "tests_total", _as_int(owner, "tests_total", self.tests_total, 0))
        if self.tests_passed > self.tests_total:
            rule = f"must not exceed tests_total={self.tests_total!r}"
            raise _fail(owner, "tests_passed", self.tests_passed, rule)

    @property
    def pass_rate(self) -> float:
        """Share of tests that passed, or 0.0 when no test ran."""
        return pass_rate_of(self.tests_passed, self.tests_total)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict that `from_dict` turns back into equal feedback."""
        return {
            "reward": self.reward,
            "message": self.message,
            "tests_passed": self.tests_passed,
            "tests_total": self.tests_total,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Feedback:
        """Build feedback from `to_dict` output, validating every field."""
        return cls(**_fields_of(cls, data))


@dataclass(frozen=True)
class EpisodeSource:
    """Provenance: where an episode was recorded, so it can be traced, audited or quarantined.

    The integrations fill it in for the episodes they record (the agent middleware:
    agent, run, thread, turn and namespace); every field is optional, but a source
    says at least one thing.

    Attributes:
        agent: Name of the agent (or user, or tool) that produced the episode; for a
            ``create_agent`` graph, its ``name``.
        run_id: The run that produced it, e.g. a LangGraph/LangSmith run id; the run
            whose shown episodes its reward was credited to.
        thread_id: The conversation thread (LangGraph's ``thread_id``) it was part of.
        turn: Which turn of that thread it was: 1 for the thread's first request, 2
            for the first follow-up, ...
        namespace: The namespace it was recorded in (the user, in a multi-user agent).
        principal: Who recorded it, as the application vouches for it (the user behind
            the run, not anything the task says): in a shared memory
            (``EpisodicMemory(shared=True)``) it bounds what one principal can put in
            another's replay. The middleware sets it from the run's context
            (``principal="{user_id}"``).

    Examples:
        >>> EpisodeSource(agent="coder", run_id="run-42").to_dict()
        {'agent': 'coder', 'run_id': 'run-42'}
        >>> EpisodeSource("coder", "run-43", thread_id="a-1", turn=2).describe()
        'agent coder, run run-43, thread a-1 turn 2'
    """

    agent: str | None = None
    run_id: str | None = None
    thread_id: str | None = None
    turn: int | None = None
    namespace: str | None = None
    principal: str | None = None

    def __post_init__(self) -> None:
        owner = "EpisodeSource"
        for name in ("agent", "run_id", "thread_id", "namespace", "principal"):
            if getattr(self, name) is not None:
                _as_text(owner, name, getattr(self, name), allow_empty=False)
        if self.turn is not None:
            _set(self, "turn", _as_int(owner, "turn", self.turn, 1))
        if all(getattr(self, name) is None for name in self.__dataclass_fields__):
            raise _fail(owner, "agent", None, "give agent, run_id or another field")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict of the fields that are set."""
        fields = self.__dataclass_fields__
        return {name: getattr(self, name) for name in fields if getattr(self, name) is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeSource:
        """Build a source from `to_dict` output, validating every field."""
        return cls(**_fields_of(cls, data))

    def merged_over(self, other: EpisodeSource | None) -> EpisodeSource:
        """This source, with the fields it leaves unset taken from ``other``.

        Examples:
            >>> mine = EpisodeSource(agent="nightly-ci")
            >>> mine.merged_over(EpisodeSource("coder", "run-7", thread_id="t1")).to_dict()
            {'agent': 'nightly-ci', 'run_id': 'run-7', 'thread_id': 't1'}
        """
        return self if other is None else EpisodeSource(**{**other.to_dict(), **self.to_dict()})

    def describe(self) -> str:
        """One line for people: ``agent coder, run r-1, thread t1 turn 2, namespace alice``."""
        turn = None if self.turn is None else f"turn {self.turn}"
        thread = " ".join(part for part in (self.thread_id, turn) if part is not None) or None
        labels = ("agent", "run", "thread", "namespace", "principal")
        values = (self.agent, self.run_id, thread, self.namespace, self.principal)
        pairs = zip(labels, values, strict=True)
        return ", ".join(f"{label} {value}" for label, value in pairs if value is not None)


def _is_text(value: object, *, allow_empty: bool = False) -> bool:
    return type(value) is str and (allow_empty or bool(value.strip())) and encodes(value)


def _is_unit(value: object) -> bool:
    return type(value) is float and 0.0 <= value <= 1.0


def _is_count(value: object, minimum: int) -> bool:
    return type(value) is int and minimum <= value <= MAX_INT


def _looks_stored(episode: Episode, task: TaskDescription, feedback: Feedback) -> bool:
    """Whether an episode built without checks has what validation would have given it."""
    return (
        _is_text(episode.episode_id)
        and _is_text(episode.solution, allow_empty=True)
        and _is_text(episode.strategy_used)
        and type(episode.timestamp) is float
        and math.isfinite(episode.timestamp)
        and _is_count(episode.iterations, 1)
        and _is_text(task.description)
        and _is_unit(task.complexity)
        and _is_unit(feedback.reward)
        and _is_text(feedback.message, allow_empty=True)
        and _is_count(feedback.tests_passed, 0)
        and _is_count(feedback.tests_total, feedback.tests_passed)
    )


@dataclass(frozen=True)
class Episode:
    """One finished attempt at a task: immutable once created.

    Attributes:
        episode_id: Unique id within a memory's namespace.
        task: The task that was attempted.
        solution: What the agent produced (code, a plan, ...).
        feedback: What the tests said.
        outcome: Success, partial success or failure.
        timestamp: When it happened, in seconds since 1970-01-01 UTC, from 0 to
            `MAX_TIMESTAMP` (2200); milliseconds are refused. Defaults to
            ``time.time()`` when the episode is built. An episode cannot know a
            memory's injected clock (``EpisodicMemory(clock=...)``): pass
            ``timestamp=memory.now()`` to date it on that clock, and a fixed
            timestamp when a script that records fixed episode ids may run again
            (re-recording an identical episode is a no-op; one dated by a later
            ``time.time()`` is a different episode, refused with
            `EpisodeConflictError`).
        iterations: How many attempts it took, at least 1.
        strategy_used: Name of the strategy used, e.g. a key of ``STRATEGY_POOL``.
        source: Optional provenance (agent, run id); ``None`` when unknown.
    """

    episode_id: str
    task: TaskDescription
    solution: str
    feedback: Feedback
    outcome: OutcomeStatus
    timestamp: float = dataclasses.field(default_factory=time.time)
    iterations: int = 1
    strategy_used: str = "default"
    source: EpisodeSource | None = None

    def __post_init__(self) -> None:
        owner = "Episode"
        _as_text(owner, "episode_id", self.episode_id, allow_empty=False)
        if self.episode_id.startswith(LESSON_ID_PREFIX):
            rule = f"must not start with {LESSON_ID_PREFIX!r}, which marks lesson ids"
            raise _fail(owner, "episode_id", self.episode_id, rule)
        if not isinstance(self.task, TaskDescription):
            raise _fail(owner, "task", self.task, "must be a TaskDescription")
        _as_text(owner, "solution", self.solution, allow_empty=True)
        if not isinstance(self.feedback, Feedback):
            raise _fail(owner, "feedback", self.feedback, "must be a Feedback")
        _set(self, "outcome", _as_enum(owner, "outcome", self.outcome, OutcomeStatus))
        timestamp = _as_finite_float(owner, "timestamp", self.timestamp)
        if (broken := _timestamp_rule_broken(timestamp)) is not None:
            raise _fail(owner, "timestamp", self.timestamp, broken)
        _set(self, "timestamp", timestamp)
        _set(self, "iterations", _as_int(owner, "iterations", self.iterations, 1))
        _as_text(owner, "strategy_used", self.strategy_used, allow_empty=False)
        if self.source is not None and not isinstance(self.source, EpisodeSource):
            raise _fail(owner, "source", self.source, "must be an EpisodeSource or None")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict that `from_dict` turns back into an equal episode.

        ``source`` appears only when set, so episodes without provenance keep the
        form they were stored in before provenance existed.
        """
        # Spelled out, not plain_dict: this runs once per recorded episode (3x faster).
        data = {
            "episode_id": self.episode_id,
            "task": self.task.to_dict(),
            "solution": self.solution,
            "feedback": self.feedback.to_dict(),
            "outcome": self.outcome.value,
            "timestamp": self.timestamp,
            "iterations": self.iterations,
            "strategy_used": self.strategy_used,
        }
        if self.source is not None:
            data["source"] = self.source.to_dict()
        return data

    def differences(self, other: Episode) -> list[tuple[str, str, str]]:
        """Where ``other`` differs from this episode: ``(field, this value, other value)``.

        Fields are dotted paths of `to_dict` (``"feedback.reward"``), sorted;
        values are shortened reprs, for messages. Empty when the episodes are equal.

        Examples:
            >>> from langchain_episodic import Feedback, OutcomeStatus, TaskDescription
            >>> first = Episode("e1", TaskDescription("t"), "", Feedback(1.0), "success", 10.0)
            >>> first.differences(Episode("e1", TaskDescription("t"), "", Feedback(1.0),
            ...                           "success", 20.0))
            [('timestamp', '10.0', '20.0')]
        """
        return _differences(self.to_dict(), other.to_dict(), "")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Episode:
        """Build an episode from `to_dict` output, validating every field.

        A missing ``timestamp`` means now (``time.time()``), as in the constructor.

        Raises:
            EpisodeValidationError: A field is missing, unknown or out of range.
        """
        fields = _fields_of(cls, data)
        fields["task"] = TaskDescription.from_dict(fields["task"])
        fields["feedback"] = Feedback.from_dict(fields["feedback"])
        if fields.get("source") is not None:
            fields["source"] = EpisodeSource.from_dict(fields["source"])
        return cls(**fields)


def _differences(
    mine: Mapping[str, Any], theirs: Mapping[str, Any], prefix: str
) -> list[tuple[str, str, str]]:
    found = []
    for key in sorted(mine.keys() | theirs.keys()):
        a, b = mine.get(key), theirs.get(key)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            found.extend(_differences(a, b, f"{prefix}{key}."))
        elif a != b:
            found.append((f"{prefix}{key}", describe(a), describe(b)))
    return sorted(found)


def _from_stored_dict(data: Mapping[str, Any]) -> Episode:
    """`Episode.from_dict`, keeping a stored timestamp that predates the range rule.

    Earlier versions stored any finite timestamp (0.0 for a missing one, milliseconds,
    dates before 1970): such a record still loads, as it was written; every other
    field is validated as usual.
    """
    number = finite_float(data.get("timestamp") if isinstance(data, Mapping) else None)
    if number is None or _timestamp_rule_broken(number) is None:
        return Episode.from_dict(data)
    episode = Episode.from_dict({**data, "timestamp": 0.0})
    _set(episode, "timestamp", number)
    return episode


def episode_from_stored(data: Mapping[str, Any]) -> Episode:
    """Rebuild an episode that this package validated before it stored it.

    Skips the checks of `Episode.from_dict` (a third of a recall's own time), in the
    manner of pydantic's ``model_construct``; use only for ``to_dict()`` output of a
    validated episode. Anything else falls back to `Episode.from_dict`, except that
    a finite timestamp outside the range new episodes must keep (written by an earlier
    version) is kept as stored: old records keep loading.
    """
    try:
        task_data, feedback_data = data["task"], data["feedback"]
        task = object.__new__(TaskDescription)
        _set(task, "description", task_data["description"])
        _set(task, "category", TaskCategory(task_data["category"]))
        _set(task, "complexity", task_data["complexity"])
        feedback = object.__new__(Feedback)
        for name in ("reward", "message", "tests_passed", "tests_total"):
            _set(feedback, name, feedback_data[name])
        episode = object.__new__(Episode)
        for name in ("episode_id", "solution", "timestamp", "iterations", "strategy_used"):
            _set(episode, name, data[name])
        _set(episode, "task", task)
        _set(episode, "feedback", feedback)
        _set(episode, "outcome", OutcomeStatus(data["outcome"]))
        source = data.get("source")
        _set(episode, "source", None if source is None else EpisodeSource(**source))
    except (KeyError, TypeError, ValueError):
        return _from_stored_dict(data)
    # Cheap type and range checks: anything off (a record another tool wrote into
    # the collection, say) goes through from_dict, which names the broken field.
    if not _looks_stored(episode, task, feedback):
        return _from_stored_dict(data)
    return episode
