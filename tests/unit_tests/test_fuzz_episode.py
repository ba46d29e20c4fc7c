"""Fuzzing the data model and the functions that take user values (GitHub issue 5).

Each property: a value either builds something that round-trips exactly, or is refused
with an ``EpisodeValidationError`` (a ``ValueError``) whose message names the field.
An independent oracle (``valid_*`` below) decides which, so the tests check the rules,
not only that some error came out.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import time
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from langchain_episodic import (
    ChromaEpisodeStore,
    Episode,
    EpisodicMemory,
    EpisodicValueError,
    Feedback,
    OutcomeStatus,
    ReplayWeights,
    TaskCategory,
    TaskDescription,
    episode_from_tests,
)
from langchain_episodic.errors import EpisodeValidationError
from langchain_episodic.model.episode import EpisodeSource
from langchain_episodic.model.feedback import feedback_from_tests
from langchain_episodic.stores.codec import decode_episode, encode_episode
from tests.unit_tests.factories import make_episode
from tests.unit_tests.fuzzing import (
    ANY_VALUE,
    DESCRIPTIONS,
    TIMESTAMPS,
    fuzz_settings,
    valid_episode_fields,
)

# --------------------------------------------------------------------------- the oracle


def valid_text(value: object, *, allow_empty: bool) -> bool:
    return isinstance(value, str) and (allow_empty or bool(value.strip()))


def valid_unit(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        number = float(value)
    except OverflowError:
        return False
    return math.isfinite(number) and 0.0 <= number <= 1.0


def valid_finite(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


LATEST = datetime(2200, 1, 1, tzinfo=timezone.utc).timestamp()


def valid_timestamp(value: object) -> bool:
    """Seconds from 1970-01-01 to 2200-01-01 UTC: no milliseconds, nothing before 1970."""
    return valid_finite(value) and 0.0 <= float(value) <= LATEST  # type: ignore[arg-type]


def valid_int(value: object, minimum: int) -> bool:
    """An integer in [minimum, 2**63 - 1]: fields must fit the 64 bits JSON readers keep."""
    return (
        not isinstance(value, bool)
        and isinstance(value, numbers.Integral)
        and minimum <= value <= 2**63 - 1
    )


def valid_enum(value: object, enum_type: type[TaskCategory] | type[OutcomeStatus]) -> bool:
    return isinstance(value, str) and value in {member.value for member in enum_type}


def named_field(error: Exception) -> tuple[str, str]:
    """``(owner, field)`` named at the start of a validation message: ``Owner.field=...``."""
    match = re.match(r"(\w+)\.(\w+)=", str(error))
    assert match, f"the message names no field: {error}"
    return match.group(1), match.group(2)


def maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly valid values, sometimes anything at all."""
    return st.one_of(valid, valid, ANY_VALUE)


# --------------------------------------------------------------------------- construction


@given(
    description=maybe(st.text(min_size=1).filter(str.strip)),
    category=maybe(st.sampled_from([*TaskCategory, *(c.value for c in TaskCategory)])),
    complexity=maybe(st.floats(0.0, 1.0) | st.integers(0, 1)),
)
@fuzz_settings(300)
def test_task_description_builds_or_names_the_bad_field(
    description: Any, category: Any, complexity: Any
) -> None:
    invalid = {
        name
        for name, ok in (
            ("description", valid_text(description, allow_empty=False)),
            ("category", valid_enum(category, TaskCategory)),
            ("complexity", valid_unit(complexity)),
        )
        if not ok
    }
    if invalid:
        with pytest.raises(EpisodeValidationError) as caught:
            TaskDescription(description, category, complexity)
        assert isinstance(caught.value, ValueError)
        assert named_field(caught.value) in {("TaskDescription", name) for name in invalid}
        return
    task = TaskDescription(description, category, complexity)
    assert TaskDescription.from_dict(task.to_dict()) == task
    assert TaskDescription.from_dict(json.loads(json.dumps(task.to_dict()))) == task
    assert type(task.complexity) is float


@given(
    reward=maybe(st.floats(0.0, 1.0)),
    message=maybe(st.text()),
    tests_passed=maybe(st.integers(0, 50)),
    tests_total=maybe(st.integers(0, 50)),
)
@fuzz_settings(300)
def test_feedback_builds_or_names_the_bad_field(
    reward: Any, message: Any, tests_passed: Any, tests_total: Any
) -> None:
    invalid = {
        name
        for name, ok in (
            ("reward", valid_unit(reward)),
            ("message", valid_text(message, allow_empty=True)),
            ("tests_passed", valid_int(tests_passed, 0)),
            ("tests_total", valid_int(tests_total, 0)),
        )
        if not ok
    }
    if not invalid and tests_passed > tests_total:
        invalid = {"tests_passed"}
    if invalid:
        with pytest.raises(EpisodeValidationError) as caught:
            Feedback(reward, message, tests_passed, tests_total)
        assert named_field(caught.value) in {("Feedback", name) for name in invalid}
        return
    feedback = Feedback(reward, message, tests_passed, tests_total)
    assert Feedback.from_dict(json.loads(json.dumps(feedback.to_dict()))) == feedback
    assert 0.0 <= feedback.pass_rate <= 1.0


@given(agent=maybe(st.none() | st.text()), run_id=maybe(st.none() | st.text()))
@fuzz_settings(150)
def test_episode_source_builds_or_names_the_bad_field(agent: Any, run_id: Any) -> None:
    def ok(value: object) -> bool:
        return value is None or valid_text(value, allow_empty=False)

    invalid = {name for name, value in (("agent", agent), ("run_id", run_id)) if not ok(value)}
    if not invalid and agent is None and run_id is None:
        invalid = {"agent"}
    if invalid:
        with pytest.raises(EpisodeValidationError) as caught:
            EpisodeSource(agent, run_id)
        assert named_field(caught.value) in {("EpisodeSource", name) for name in invalid}
        return
    source = EpisodeSource(agent, run_id)
    assert EpisodeSource.from_dict(json.loads(json.dumps(source.to_dict()))) == source


@given(
    fields=valid_episode_fields(),
    overrides=st.dictionaries(
        st.sampled_from(
            [
                *("episode_id", "task", "solution", "feedback", "outcome", "timestamp"),
                *("iterations", "strategy_used", "source"),
            ]
        ),
        ANY_VALUE,
        max_size=3,
    ),
    source=st.none() | st.builds(EpisodeSource, agent=st.text(min_size=1).filter(str.strip)),
)
@fuzz_settings(300)
def test_episode_builds_or_names_the_bad_field(
    fields: dict[str, Any], overrides: dict[str, Any], source: EpisodeSource | None
) -> None:
    base = make_episode(**fields)
    kwargs: dict[str, Any] = {
        "episode_id": base.episode_id,
        "task": base.task,
        "solution": base.solution,
        "feedback": base.feedback,
        "outcome": base.outcome,
        "timestamp": base.timestamp,
        "iterations": base.iterations,
        "strategy_used": base.strategy_used,
        "source": source,
    }
    kwargs.update(overrides)
    rules = {
        "episode_id": lambda v: valid_text(v, allow_empty=False),
        "task": lambda v: isinstance(v, TaskDescription),
        "solution": lambda v: valid_text(v, allow_empty=True),
        "feedback": lambda v: isinstance(v, Feedback),
        "outcome": lambda v: valid_enum(v, OutcomeStatus),
        "timestamp": valid_timestamp,
        "iterations": lambda v: valid_int(v, 1),
        "strategy_used": lambda v: valid_text(v, allow_empty=False),
        "source": lambda v: v is None or isinstance(v, EpisodeSource),
    }
    invalid = {name for name, rule in rules.items() if not rule(kwargs[name])}
    if invalid:
        with pytest.raises(EpisodeValidationError) as caught:
            Episode(**kwargs)
        assert named_field(caught.value) in {("Episode", name) for name in invalid}
        return
    episode = Episode(**kwargs)
    assert Episode.from_dict(episode.to_dict()) == episode
    assert Episode.from_dict(json.loads(json.dumps(episode.to_dict()))) == episode
    # The form every store keeps, read back the way every store reads it.
    assert decode_episode(episode.episode_id, encode_episode(episode)) == episode


@given(st.floats(allow_nan=False, allow_infinity=False) | TIMESTAMPS)
@fuzz_settings(300)
def test_a_timestamp_is_seconds_from_1970_to_2200_yet_stored_ones_always_load(
    stamp: float,
) -> None:
    data = make_episode(timestamp=1.0).to_dict()
    data["timestamp"] = stamp
    if valid_timestamp(stamp):
        assert Episode.from_dict(data).timestamp == stamp
    else:
        with pytest.raises(EpisodeValidationError, match=r"^Episode\.timestamp=") as caught:
            Episode.from_dict(data)
        assert re.search(r"milliseconds|microseconds|nanoseconds|must be [<>]= ", str(caught.value))
    # Whatever an earlier version stored (any finite number) still reads back, as stored.
    stored = decode_episode("old", json.dumps(data))
    assert stored is not None
    assert stored.timestamp == stamp


# --------------------------------------------------------------------------- from_dict


@st.composite
def mutated_episode_dicts(draw: st.DrawFn) -> tuple[dict[str, Any], set[str]]:
    """A valid ``to_dict()`` with a few fields removed, added or replaced; and their paths."""
    data = make_episode(**draw(valid_episode_fields())).to_dict()
    if draw(st.booleans()):
        data["source"] = {"agent": "coder"}
    touched: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        owner = draw(st.sampled_from(["", "task", "feedback", "source"]))
        target = data if not owner else data.get(owner)
        if not isinstance(target, dict):
            continue
        key = draw(st.sampled_from([*target, "unexpected"]))
        action = draw(st.sampled_from(["delete", "replace"]))
        if action == "delete":
            target.pop(key, None)
        else:
            target[key] = draw(ANY_VALUE)
        touched.add(f"{owner}.{key}" if owner else key)
    return data, touched


OWNER_OF = {
    "": "Episode",
    "task": "TaskDescription",
    "feedback": "Feedback",
    "source": "EpisodeSource",
}


@given(mutated_episode_dicts())
@fuzz_settings(400)
def test_from_dict_of_a_damaged_dict_round_trips_or_names_the_damage(
    case: tuple[dict[str, Any], set[str]],
) -> None:
    data, touched = case
    try:
        episode = Episode.from_dict(data)
    except EpisodeValidationError as error:
        message = str(error)
        owners = {OWNER_OF[path.rpartition(".")[0]] for path in touched}
        # A replaced nested dict is named by its own class ("TaskDescription data=None").
        owners |= {OWNER_OF[key] for key in touched & {"task", "feedback", "source"}}
        assert re.split(r"[. ]", message, maxsplit=1)[0] in owners, (message, touched)
        if not any(word in message for word in ("missing", "unknown", "must be a mapping")):
            _, field = named_field(error)
            fields = {path.rpartition(".")[2] for path in touched}
            assert field in fields | {"tests_passed"}, (message, touched)
        return
    except TypeError as error:  # pragma: no cover - reported as a bug if it ever happens
        pytest.fail(f"from_dict raised TypeError instead of naming the field: {error}")
    assert Episode.from_dict(json.loads(json.dumps(episode.to_dict()))) == episode


@given(ANY_VALUE)
@fuzz_settings(100)
def test_from_dict_of_a_non_mapping_says_so(data: Any) -> None:
    assume(not isinstance(data, dict))
    with pytest.raises(EpisodeValidationError, match=r"Episode data=.* must be a mapping"):
        Episode.from_dict(data)


# --------------------------------------------------------------------------- huge texts


def test_a_one_megabyte_solution_round_trips_through_chroma() -> None:
    solution = "".join(chr(0x20 + (i * 7919) % 0xD7C0) for i in range(1 << 20))  # no surrogates
    assert len(solution.encode("utf-8")) > 1 << 20
    huge = make_episode(
        episode_id="huge",
        description="Implement the parser " + "tokens " * 2000,
        solution=solution,
        message="log " * 50_000,
        iterations=2**62,
        tests_passed=10**12,
        tests_total=10**12,
    )
    store = ChromaEpisodeStore()
    memory = EpisodicMemory(store=store)
    assert memory.record(huge) is True
    [hit] = memory.recall("Implement the parser", top_k=1, current_time=0.0, ranking="article")
    assert hit.episode == huge
    assert store.get("default", ["huge"]) == {"huge": huge}
    assert list(memory.episodes()) == [huge]
    assert EpisodicMemory(store=store).short_term == (huge,)
    assert memory.record(huge) is False  # the immutability check compares 1 MB exactly


# --------------------------------------------------------------------------- test counts


@given(
    tests_passed=maybe(st.integers(0, 20)),
    tests_total=maybe(st.integers(0, 20)),
    message=maybe(st.text(max_size=10)),
    success_at=maybe(st.floats(0.5, 1.0)),
    partial_at=maybe(st.floats(0.0, 0.5)),
)
@fuzz_settings(300)
def test_feedback_from_tests_follows_the_rule_or_names_the_argument(
    tests_passed: Any, tests_total: Any, message: Any, success_at: Any, partial_at: Any
) -> None:
    counts_ok = (
        valid_int(tests_passed, 0)
        and valid_int(tests_total, 0)
        and valid_text(message, allow_empty=True)
        and tests_passed <= tests_total
    )
    thresholds_ok = valid_unit(success_at) and valid_unit(partial_at) and partial_at <= success_at
    # tests_total == 0 with bad thresholds: see test_thresholds_are_checked_when_no_test_ran.
    assume(not (counts_ok and tests_total == 0 and not thresholds_ok))
    if not (counts_ok and thresholds_ok):
        with pytest.raises(EpisodicValueError) as caught:
            feedback_from_tests(
                tests_passed, tests_total, message, success_at=success_at, partial_at=partial_at
            )
        assert re.search(
            r"(Feedback\.(tests_passed|tests_total|message)|success_at|partial_at)=",
            str(caught.value),
        ), caught.value
        return
    feedback, outcome = feedback_from_tests(
        tests_passed, tests_total, message, success_at=success_at, partial_at=partial_at
    )
    rate = tests_passed / tests_total if tests_total else 0.0
    assert feedback.reward == feedback.pass_rate == rate
    if tests_total == 0 or rate < partial_at:
        assert outcome is OutcomeStatus.FAILURE
    elif rate >= success_at:
        assert outcome is OutcomeStatus.SUCCESS
    else:
        assert outcome is OutcomeStatus.PARTIAL


@pytest.mark.parametrize(
    "thresholds",
    [{"success_at": math.nan}, {"partial_at": 2.0}, {"success_at": 0.2, "partial_at": 0.9}],
)
def test_thresholds_are_checked_when_no_test_ran(thresholds: dict[str, float]) -> None:
    with pytest.raises(EpisodicValueError, match=r"(success_at|partial_at)="):
        feedback_from_tests(0, 0, **thresholds)


@given(
    task=maybe(DESCRIPTIONS | st.builds(TaskDescription, DESCRIPTIONS)),
    solution=maybe(st.text(max_size=20)),
    strategy_used=maybe(st.sampled_from(["iterative", "defensive"])),
    iterations=maybe(st.integers(1, 10)),
    episode_id=maybe(st.none() | st.text(min_size=1).filter(str.strip)),
    timestamp=maybe(st.none() | TIMESTAMPS | st.floats(allow_nan=False, allow_infinity=False)),
)
@fuzz_settings(300)
def test_episode_from_tests_builds_or_names_the_bad_field(
    task: Any,
    solution: Any,
    strategy_used: Any,
    iterations: Any,
    episode_id: Any,
    timestamp: Any,
) -> None:
    before = time.time()
    try:
        episode = episode_from_tests(
            task,
            solution,
            3,
            4,
            strategy_used=strategy_used,
            iterations=iterations,
            episode_id=episode_id,
            timestamp=timestamp,
        )
    except EpisodeValidationError as error:
        owner, field = named_field(error)
        if field == "timestamp":
            assert not valid_timestamp(timestamp)
        assert (owner, field) in {
            ("TaskDescription", "description"),
            ("Episode", "task"),
            ("Episode", "solution"),
            ("Episode", "strategy_used"),
            ("Episode", "iterations"),
            ("Episode", "episode_id"),
            ("Episode", "timestamp"),
        }
        return
    assert isinstance(task, (str, TaskDescription))
    if timestamp is None:  # a missing timestamp means now
        assert before <= episode.timestamp <= time.time()
    else:
        assert valid_timestamp(timestamp)
        assert episode.timestamp == float(timestamp)
    assert episode.feedback.reward == 0.75
    assert episode.outcome is OutcomeStatus.PARTIAL
    assert Episode.from_dict(json.loads(json.dumps(episode.to_dict()))) == episode


# --------------------------------------------------------------------------- recall arguments


@pytest.fixture(scope="module")
def small_memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: 0.0)
    memory.record_many(
        make_episode(episode_id=f"e{i}", description=w)
        for i, w in enumerate(
            ["Implement login form", "Fix parser bug", "Refactor payment service"]
        )
    )
    return memory


@given(
    top_k=maybe(st.integers(1, 5)),
    fetch_k=maybe(st.none() | st.integers(5, 8)),
    half_life=maybe(st.floats(1.0, 1e9)),
    current_time=maybe(st.none() | st.floats(-1e12, 1e12)),
    min_similarity=maybe(st.none() | st.floats(-1.0, 1.0)),
    weights=maybe(st.none() | st.builds(ReplayWeights, *[st.floats(0.0, 2.0)] * 4)),
)
@fuzz_settings(150)
def test_recall_arguments_are_used_or_named(
    small_memory: EpisodicMemory,
    top_k: Any,
    fetch_k: Any,
    half_life: Any,
    current_time: Any,
    min_similarity: Any,
    weights: Any,
) -> None:
    checks = {
        "top_k": valid_int(top_k, 1),
        "fetch_k": fetch_k is None
        or (valid_int(fetch_k, 1) and valid_int(top_k, 1) and fetch_k >= top_k),
        "current_time": current_time is None or valid_finite(current_time),
        "half_life": valid_finite(half_life) and half_life > 0,
        "weights": weights is None or isinstance(weights, ReplayWeights),
        "min_similarity": min_similarity is None
        or (valid_finite(min_similarity) and -1.0 <= min_similarity <= 1.0),
    }
    invalid = {name for name, ok in checks.items() if not ok}
    # Counts past Chroma's C long: see test_huge_top_k_or_fetch_k_is_refused_or_clamped.
    assume(invalid or max(top_k, fetch_k or 0) < 2**31)
    call = {
        "top_k": top_k,
        "fetch_k": fetch_k,
        "half_life": half_life,
        "current_time": current_time,
        "min_similarity": min_similarity,
        "weights": weights,
    }
    if invalid:
        # A value out of range is an EpisodicValueError; an object of the wrong type
        # where a ReplayWeights belongs is a TypeError. Either names the argument.
        with pytest.raises((EpisodicValueError, TypeError)) as caught:
            small_memory.recall("Implement a login page", **call)
        named = re.match(r"(\w+)=", str(caught.value)).group(1)  # type: ignore[union-attr]
        assert named in invalid, caught.value
        assert (named == "weights") == isinstance(caught.value, TypeError), caught.value
        return
    results = small_memory.recall("Implement a login page", **call)
    assert len(results) <= top_k
    priorities = [r.priority for r in results]
    assert priorities == sorted(priorities, reverse=True)
    assert all(math.isfinite(p) for p in priorities)
    if min_similarity is not None:
        assert all(r.similarity >= min_similarity for r in results)


# --------------------------------------------------------------------------- batches


@given(
    good=st.lists(valid_episode_fields(text=DESCRIPTIONS), min_size=1, max_size=4),
    bad=st.sampled_from(["not an episode", None, 42, {"episode_id": "x"}, b"bytes"]),
    position=st.integers(0, 4),
)
@fuzz_settings(25)
def test_record_many_with_one_bad_item_writes_nothing(
    good: list[dict[str, Any]], bad: Any, position: int
) -> None:
    store = ChromaEpisodeStore()
    memory = EpisodicMemory(store=store, clock=lambda: 0.0)
    memory.record(make_episode(episode_id="kept", description="Implement login form"))
    batch: list[Any] = [
        make_episode(**{**fields, "episode_id": f"new-{i}"}) for i, fields in enumerate(good)
    ]
    batch.insert(min(position, len(batch)), bad)
    with pytest.raises(TypeError, match=rf"episodes\[{min(position, len(good))}\]"):
        memory.record_many(batch)
    assert len(memory) == 1
    assert [e.episode_id for e in memory.episodes()] == ["kept"]
    assert [e.episode_id for e in memory.short_term] == ["kept"]
    assert memory.recall("Implement login form")[0].episode.episode_id == "kept"
    assert EpisodicMemory(store=store).skill_profiles() == memory.skill_profiles()


# --------------------------------------------------------------------------- known gaps


@pytest.mark.parametrize("field", ["episode_id", "description", "solution", "strategy"])
def test_text_that_is_not_valid_unicode_is_refused_naming_the_field(field: str) -> None:
    # A lone surrogate is a Python str but no UTF-8: Chroma, JSON files and the
    # embeddings cannot take it. It must be refused when the episode is built.
    with pytest.raises(
        EpisodeValidationError, match=r"\.(episode_id|description|solution|strategy_used)="
    ):
        make_episode(**{field: "login \ud800 form"})


def test_integers_too_long_for_json_are_refused_naming_the_field() -> None:
    # Python refuses to print ints over 4300 digits, so such an episode has no JSON form.
    with pytest.raises(EpisodeValidationError, match=r"Episode\.iterations="):
        make_episode(iterations=10**5000)


@pytest.mark.parametrize(("top_k", "fetch_k"), [(2**31, None), (1, 2**63), (10**30, 10**30)])
def test_huge_top_k_or_fetch_k_is_refused_or_clamped(
    small_memory: EpisodicMemory, top_k: int, fetch_k: int | None
) -> None:
    # Chroma's bindings raise OverflowError past a C long; the caller asked for "all".
    outcome: tuple[object, ...] | EpisodicValueError
    try:
        outcome = small_memory.recall(
            "Implement a login page", top_k=top_k, fetch_k=fetch_k, ranking="article"
        )
    except EpisodicValueError as error:
        outcome = error
    if isinstance(outcome, EpisodicValueError):
        assert re.match(r"(top_k|fetch_k)=", str(outcome))
    else:
        assert len(outcome) == 3
