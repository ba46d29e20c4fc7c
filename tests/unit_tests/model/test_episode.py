"""Unit tests for the episode data model (article, section 2)."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from typing import Any

import numpy as np
import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.errors import EpisodeValidationError, EpisodicValueError
from langchain_episodic.model.episode import (
    MAX_TIMESTAMP,
    Episode,
    EpisodeSource,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
    episode_from_stored,
)
from tests.unit_tests.factories import make_episode

NAN = float("nan")
INF = float("inf")


def assert_names(error: pytest.ExceptionInfo[EpisodeValidationError], *parts: str) -> None:
    """The error is a ValueError whose message contains every one of ``parts``."""
    assert isinstance(error.value, ValueError)
    assert isinstance(error.value, EpisodicValueError)
    message = str(error.value)
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


def full_episode() -> Episode:
    return Episode(
        episode_id="login-1",
        task=TaskDescription("Implement a login form", TaskCategory.CODE_GENERATION, 0.6),
        solution="def login(user, password):\n    return check(user, password)\n",
        feedback=Feedback(reward=0.9, message="9/10 pass", tests_passed=9, tests_total=10),
        outcome=OutcomeStatus.SUCCESS,
        timestamp=1_700_000_000.5,
        iterations=3,
        strategy_used="iterative",
    )


FULL_DICT: dict[str, Any] = {
    "episode_id": "login-1",
    "task": {
        "description": "Implement a login form",
        "category": "code_generation",
        "complexity": 0.6,
    },
    "solution": "def login(user, password):\n    return check(user, password)\n",
    "feedback": {"reward": 0.9, "message": "9/10 pass", "tests_passed": 9, "tests_total": 10},
    "outcome": "success",
    "timestamp": 1_700_000_000.5,
    "iterations": 3,
    "strategy_used": "iterative",
}


# --------------------------------------------------------------------------- construction


def test_error_hierarchy_is_value_error() -> None:
    assert issubclass(EpisodeValidationError, EpisodicValueError)
    assert issubclass(EpisodeValidationError, ValueError)


def test_enum_values_match_article() -> None:
    assert [m.value for m in OutcomeStatus] == ["success", "partial", "failure"]
    assert [m.value for m in TaskCategory] == [
        "code_generation",
        "debugging",
        "refactoring",
        "testing",
        "architecture",
        "unknown",
    ]


def test_defaults_match_article() -> None:
    task = TaskDescription("Sort a list")
    assert task.category is TaskCategory.UNKNOWN
    assert task.complexity == 0.5
    feedback = Feedback(reward=0.3)
    assert (feedback.message, feedback.tests_passed, feedback.tests_total) == ("", 0, 0)
    before = time.time()
    episode = Episode("e1", task, "sorted(xs)", feedback, OutcomeStatus.FAILURE)
    # Changed on purpose: the article's 0.0 dated every such episode 1970 (recency 0).
    assert before <= episode.timestamp <= time.time()
    assert episode.iterations == 1
    assert episode.strategy_used == "default"


def test_construction_keeps_every_field() -> None:
    episode = full_episode()
    assert episode.episode_id == "login-1"
    assert episode.task.description == "Implement a login form"
    assert episode.task.category is TaskCategory.CODE_GENERATION
    assert episode.task.complexity == 0.6
    assert episode.solution.startswith("def login")
    assert episode.feedback.reward == 0.9
    assert episode.feedback.message == "9/10 pass"
    assert episode.feedback.tests_passed == 9
    assert episode.feedback.tests_total == 10
    assert episode.outcome is OutcomeStatus.SUCCESS
    assert episode.timestamp == 1_700_000_000.5
    assert episode.iterations == 3
    assert episode.strategy_used == "iterative"


def test_factory_builds_the_documented_defaults() -> None:
    episode = make_episode()
    assert episode.episode_id == "e1"
    assert episode.task == TaskDescription("Implement login form", TaskCategory.CODE_GENERATION)
    assert episode.feedback == Feedback(0.8, "ok", 4, 5)
    assert episode.outcome is OutcomeStatus.SUCCESS
    assert episode.strategy_used == "iterative"
    assert episode.solution == "def f(): pass"


def test_boundary_values_are_accepted() -> None:
    low = make_episode(reward=0.0, complexity=0.0, tests_passed=0, tests_total=0, solution="")
    high = make_episode(reward=1.0, complexity=1.0, tests_passed=7, tests_total=7, iterations=99)
    assert (low.feedback.reward, low.task.complexity, low.solution) == (0.0, 0.0, "")
    assert (high.feedback.reward, high.task.complexity, high.iterations) == (1.0, 1.0, 99)
    assert make_episode(timestamp=0.0).timestamp == 0.0
    assert make_episode(timestamp=MAX_TIMESTAMP).timestamp == MAX_TIMESTAMP


def test_int_numbers_are_normalised_to_float() -> None:
    episode = make_episode(reward=1, complexity=0, timestamp=1_700_000_000)
    assert type(episode.feedback.reward) is float
    assert type(episode.task.complexity) is float
    assert type(episode.timestamp) is float
    assert episode.timestamp == 1_700_000_000.0


@pytest.mark.parametrize(
    "instance",
    [
        full_episode(),
        full_episode().task,
        full_episode().feedback,
    ],
    ids=["episode", "task", "feedback"],
)
def test_instances_are_frozen(instance: object) -> None:
    field = dataclasses.fields(instance)[0].name  # type: ignore[arg-type]
    before = getattr(instance, field)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(instance, field, "changed")
    assert getattr(instance, field) == before


def test_episode_cannot_be_mutated_through_any_field() -> None:
    episode = full_episode()
    for field in dataclasses.fields(episode):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(episode, field.name, None)
    assert episode == full_episode()


def test_equal_episodes_are_equal_and_hashable() -> None:
    assert full_episode() == full_episode()
    assert hash(full_episode()) == hash(full_episode())
    assert len({full_episode(), full_episode(), make_episode()}) == 2
    assert make_episode(reward=0.8) != make_episode(reward=0.7)


# ---------------------------------------------------------------------- enum coercion


def test_strings_are_coerced_to_enums() -> None:
    task = TaskDescription("Fix the flaky test", "debugging", 0.4)
    assert task.category is TaskCategory.DEBUGGING
    episode = Episode("e1", task, "", Feedback(0.5), "partial")
    assert episode.outcome is OutcomeStatus.PARTIAL
    assert type(episode.outcome) is OutcomeStatus


@pytest.mark.parametrize("category", list(TaskCategory))
def test_every_category_string_coerces(category: TaskCategory) -> None:
    assert TaskDescription("t", category.value).category is category


@pytest.mark.parametrize("outcome", list(OutcomeStatus))
def test_every_outcome_string_coerces(outcome: OutcomeStatus) -> None:
    assert make_episode(outcome=outcome.value).outcome is outcome


@pytest.mark.parametrize("bad", ["Debugging", "DEBUGGING", "debug", "", " debugging", "success"])
def test_bad_category_string_is_rejected(bad: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        TaskDescription("t", bad)
    assert_names(error, "category", repr(bad), "'debugging'")


@pytest.mark.parametrize("bad", ["SUCCESS", "succes", "ok", "", "unknown"])
def test_bad_outcome_string_is_rejected(bad: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(outcome=bad)
    assert_names(error, "outcome", repr(bad), "'success'")


def test_enum_of_the_wrong_type_is_rejected() -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(outcome=TaskCategory.UNKNOWN)  # type: ignore[arg-type]
    assert_names(error, "outcome")
    with pytest.raises(EpisodeValidationError) as error:
        TaskDescription("t", OutcomeStatus.SUCCESS)  # type: ignore[arg-type]
    assert_names(error, "category")


@pytest.mark.parametrize("bad", [None, 1, ["debugging"]])
def test_non_string_category_is_rejected(bad: object) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        TaskDescription("t", bad)  # type: ignore[arg-type]
    assert_names(error, "category", repr(bad))


# -------------------------------------------------------------------- numeric validation


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1.5, "1.5"), (-0.1, "-0.1"), (1.0000001, "1.0000001"), (2, "2"), (NAN, "nan"), (INF, "inf")],
)
def test_reward_out_of_range_or_non_finite(value: float, shown: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Feedback(reward=value)
    assert_names(error, "reward", shown)


def test_negative_infinite_reward() -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Feedback(reward=-INF)
    assert_names(error, "reward", "-inf")


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1.5, "1.5"), (-0.25, "-0.25"), (NAN, "nan"), (INF, "inf"), (-INF, "-inf"), (3, "3")],
)
def test_complexity_out_of_range_or_non_finite(value: float, shown: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        TaskDescription("t", complexity=value)
    assert_names(error, "complexity", shown)


@pytest.mark.parametrize(("value", "shown"), [(NAN, "nan"), (INF, "inf"), (-INF, "-inf")])
def test_non_finite_timestamp(value: float, shown: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(timestamp=value)
    assert_names(error, "timestamp", shown)


# ------------------------------------------------------------------------ timestamps


def test_a_missing_timestamp_means_now_in_the_constructor_and_from_dict() -> None:
    data = {key: value for key, value in FULL_DICT.items() if key != "timestamp"}
    before = time.time()
    built = Episode("e1", TaskDescription("t"), "", Feedback(1.0), OutcomeStatus.SUCCESS)
    read = Episode.from_dict(data)
    after = time.time()
    assert before <= built.timestamp <= read.timestamp <= after
    assert type(built.timestamp) is float


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        (
            1_780_000_000_000.0,
            ["timestamp=1780000000000.0", "milliseconds", "year 58375", "1780000000.0"],
        ),
        (1_780_000_000_000_000, ["microseconds", "1780000000.0"]),
        (1.78e18, ["nanoseconds", "1780000000.0"]),
        (MAX_TIMESTAMP + 1.0, ["must be <= 7258118400.0", "2200-01-01", "year 2200"]),
        (1e300, ["must be <= 7258118400.0", "billions of years"]),
        (-5.0, ["timestamp=-5.0", "must be >= 0", "before 1970"]),
        (-1e-300, ["must be >= 0"]),
    ],
)
def test_milliseconds_far_future_and_pre_1970_timestamps_are_refused(
    value: float, parts: list[str]
) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(timestamp=value)
    assert_names(error, "Episode.timestamp=", *parts)
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict({**FULL_DICT, "timestamp": value})
    assert_names(error, "Episode.timestamp=", *parts)


@pytest.mark.parametrize("stamp", [0.0, 1_780_000_000_000.0, -5.0, 1e300])
def test_a_stored_record_from_an_earlier_version_keeps_its_timestamp(stamp: float) -> None:
    # Earlier versions stored any finite timestamp (0.0 for a missing one): still readable.
    data = json.loads(json.dumps({**FULL_DICT, "timestamp": stamp}))
    assert episode_from_stored(data).timestamp == stamp
    # Also on the slow path (a field that is not in the stored form, here an int).
    slow = {**data, "task": {**data["task"], "complexity": 1}}
    episode = episode_from_stored(slow)
    assert (episode.timestamp, episode.task.complexity) == (stamp, 1.0)
    # Every other rule still holds on that path.
    with pytest.raises(EpisodeValidationError, match="reward"):
        episode_from_stored({**slow, "feedback": {**data["feedback"], "reward": 2.0}})


@pytest.mark.parametrize("stamp", [0.0, 1_780_000_000_000.0, -5.0])
def test_an_old_stored_record_still_recalls_with_its_timestamp(stamp: float) -> None:
    # A record as an earlier version wrote it: 0.0 was the default, ms and < 0 passed.
    store = ChromaEpisodeStore()
    EpisodicMemory(store=store).record(make_episode(episode_id="new", description="Fix a bug"))
    store.collection("default").add(
        ids=["login-1"],
        embeddings=[EpisodicMemory().embeddings.embed_query("Implement a login form")],
        metadatas=[
            {
                "episode": json.dumps({**FULL_DICT, "timestamp": stamp}),
                "seq": 1,
                "category": "code_generation",
                "outcome": "success",
                "strategy_used": "iterative",
            }
        ],
    )
    memory = EpisodicMemory(store=store, clock=lambda: 1_780_000_000.0)  # reopened
    [hit] = memory.recall("Implement a login form", top_k=1)
    assert hit.episode.episode_id == "login-1"
    assert hit.episode.timestamp == stamp
    assert [e.timestamp for e in memory.episodes()][1] == stamp
    assert memory.record(hit.episode) is False  # still the identical episode: a no-op


def test_differences_name_each_field_with_both_values() -> None:
    episode = full_episode()
    other = dataclasses.replace(
        episode,
        timestamp=1_700_003_600.5,
        feedback=dataclasses.replace(episode.feedback, reward=0.5),
    )
    assert episode.differences(episode) == []
    assert episode.differences(other) == [
        ("feedback.reward", "0.9", "0.5"),
        ("timestamp", "1700000000.5", "1700003600.5"),
    ]
    long = dataclasses.replace(episode, solution="x" * 10_000)
    [(field, _, shown)] = episode.differences(long)
    assert field == "solution"
    assert len(shown) < 200


@pytest.mark.parametrize("field", ["tests_passed", "tests_total"])
def test_negative_test_counts(field: str) -> None:
    kwargs = {"tests_passed": 0, "tests_total": 3, field: -1}
    with pytest.raises(EpisodeValidationError) as error:
        Feedback(reward=0.5, **kwargs)
    assert_names(error, field, "-1")


def test_tests_passed_may_not_exceed_tests_total() -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Feedback(reward=0.5, tests_passed=5, tests_total=4)
    assert_names(error, "tests_passed", "5", "tests_total", "4")
    with pytest.raises(EpisodeValidationError) as error:
        Feedback(reward=0.5, tests_passed=1)
    assert_names(error, "tests_passed", "1", "tests_total")


@pytest.mark.parametrize("value", [0, -1, -100])
def test_iterations_below_one(value: int) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(iterations=value)
    assert_names(error, "iterations", str(value))


# ---------------------------------------------------------------------- type validation


@pytest.mark.parametrize(
    ("kwargs", "field", "shown"),
    [
        ({"tests_passed": True}, "tests_passed", "True"),
        ({"tests_total": True}, "tests_total", "True"),
        ({"tests_passed": 1, "tests_total": True}, "tests_total", "True"),
        ({"tests_passed": False, "tests_total": 3}, "tests_passed", "False"),
        ({"iterations": True}, "iterations", "True"),
        ({"reward": True}, "reward", "True"),
        ({"complexity": False}, "complexity", "False"),
        ({"timestamp": True}, "timestamp", "True"),
    ],
)
def test_bool_is_not_a_number(kwargs: dict[str, Any], field: str, shown: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(**kwargs)
    assert_names(error, field, shown)


@pytest.mark.parametrize(
    ("kwargs", "field", "shown"),
    [
        ({"tests_passed": 2.0}, "tests_passed", "2.0"),
        ({"tests_total": "5"}, "tests_total", "'5'"),
        ({"iterations": 2.0}, "iterations", "2.0"),
        ({"iterations": "3"}, "iterations", "'3'"),
        ({"reward": "0.5"}, "reward", "'0.5'"),
        ({"reward": None}, "reward", "None"),
        ({"complexity": "high"}, "complexity", "'high'"),
        ({"timestamp": "yesterday"}, "timestamp", "'yesterday'"),
        ({"timestamp": None}, "timestamp", "None"),
        ({"message": None}, "message", "None"),
        ({"message": 42}, "message", "42"),
        ({"solution": None}, "solution", "None"),
        ({"solution": b"code"}, "solution", "b'code'"),
        ({"description": 123}, "description", "123"),
        ({"episode_id": 7}, "episode_id", "7"),
        ({"strategy": None}, "strategy_used", "None"),
    ],
)
def test_wrong_types_are_rejected(kwargs: dict[str, Any], field: str, shown: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(**kwargs)
    assert_names(error, field, shown)


@pytest.mark.parametrize("bad", [{"reward": 1.0}, None, 0.9, "ok"])
def test_feedback_must_be_a_feedback(bad: object) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Episode("e1", TaskDescription("t"), "", bad, OutcomeStatus.SUCCESS)  # type: ignore[arg-type]
    assert_names(error, "feedback", repr(bad), "Feedback")


@pytest.mark.parametrize("bad", [{"description": "t"}, "Implement login", None])
def test_task_must_be_a_task_description(bad: object) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Episode("e1", bad, "", Feedback(1.0), OutcomeStatus.SUCCESS)  # type: ignore[arg-type]
    assert_names(error, "task", repr(bad), "TaskDescription")


# ---------------------------------------------------------------------- text validation


@pytest.mark.parametrize("blank", ["", " ", "\t\n  "])
def test_blank_description(blank: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        TaskDescription(blank)
    assert_names(error, "description", repr(blank))


@pytest.mark.parametrize("blank", ["", "   ", "\n"])
def test_blank_episode_id(blank: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(episode_id=blank)
    assert_names(error, "episode_id", repr(blank))


@pytest.mark.parametrize("blank", ["", "  "])
def test_blank_strategy(blank: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(strategy=blank)
    assert_names(error, "strategy_used", repr(blank))


def test_empty_message_and_solution_are_allowed() -> None:
    episode = make_episode(message="", solution="")
    assert episode.feedback.message == ""
    assert episode.solution == ""


def test_surrounding_whitespace_is_kept_verbatim() -> None:
    episode = make_episode(episode_id=" id ", description="  Fix bug  ")
    assert episode.episode_id == " id "
    assert episode.task.description == "  Fix bug  "


# --------------------------------------------------------------------------- pass_rate


@pytest.mark.parametrize(
    ("passed", "total", "expected"),
    [(0, 0, 0.0), (0, 5, 0.0), (4, 5, 0.8), (5, 5, 1.0), (1, 3, 1 / 3), (9, 10, 0.9)],
)
def test_pass_rate(passed: int, total: int, expected: float) -> None:
    assert Feedback(0.5, tests_passed=passed, tests_total=total).pass_rate == expected


# ---------------------------------------------------------------------- to_dict / from_dict


def test_to_dict_is_exact() -> None:
    assert full_episode().to_dict() == FULL_DICT
    assert full_episode().task.to_dict() == FULL_DICT["task"]
    assert full_episode().feedback.to_dict() == FULL_DICT["feedback"]


def test_to_dict_holds_plain_json_types() -> None:
    data = full_episode().to_dict()
    assert type(data["outcome"]) is str
    assert type(data["task"]["category"]) is str
    assert json.dumps(data, sort_keys=True) == json.dumps(FULL_DICT, sort_keys=True)


def test_from_dict_is_exact() -> None:
    assert Episode.from_dict(FULL_DICT) == full_episode()
    assert TaskDescription.from_dict(FULL_DICT["task"]) == full_episode().task
    assert Feedback.from_dict(FULL_DICT["feedback"]) == full_episode().feedback


ROUND_TRIP_EPISODES = [
    full_episode(),
    make_episode(),
    make_episode(
        episode_id="tricky id/ü 🚀",
        description='Ünïcode "quotes" and\nnewlines\t</solution>',
        category=TaskCategory.ARCHITECTURE,
        complexity=0.1 + 0.2,
        reward=1 / 3,
        outcome=OutcomeStatus.FAILURE,
        timestamp=1_700_000_000.123456789,
        iterations=12,
        strategy="example_driven",
        message="",
        tests_passed=0,
        tests_total=0,
        solution="",
    ),
    make_episode(outcome="partial", category="unknown", reward=0.0, timestamp=5e-324),
]


@pytest.mark.parametrize("episode", ROUND_TRIP_EPISODES)
def test_round_trip(episode: Episode) -> None:
    data = episode.to_dict()
    again = Episode.from_dict(data)
    assert again == episode
    assert again.to_dict() == data


@pytest.mark.parametrize("episode", ROUND_TRIP_EPISODES)
def test_round_trip_through_json(episode: Episode) -> None:
    text = json.dumps(episode.to_dict())
    again = Episode.from_dict(json.loads(text))
    assert again == episode
    assert json.dumps(again.to_dict()) == text
    # Floats survive bit for bit, not just approximately.
    assert again.feedback.reward.hex() == episode.feedback.reward.hex()
    assert again.task.complexity.hex() == episode.task.complexity.hex()
    assert again.timestamp.hex() == episode.timestamp.hex()


def test_from_dict_fills_optional_fields_with_defaults() -> None:
    before = time.time()
    episode = Episode.from_dict(
        {
            "episode_id": "e9",
            "task": {"description": "Sort a list"},
            "solution": "sorted(xs)",
            "feedback": {"reward": 0.5},
            "outcome": "failure",
        }
    )
    assert before <= episode.timestamp <= time.time()  # a missing timestamp means now
    assert episode == Episode(
        "e9",
        TaskDescription("Sort a list"),
        "sorted(xs)",
        Feedback(0.5),
        OutcomeStatus.FAILURE,
        timestamp=episode.timestamp,
    )
    assert episode.task.category is TaskCategory.UNKNOWN
    assert episode.strategy_used == "default"


def test_from_dict_coerces_strings_and_ints() -> None:
    data = {**FULL_DICT, "timestamp": 1_700_000_000, "outcome": "partial"}
    episode = Episode.from_dict(data)
    assert episode.outcome is OutcomeStatus.PARTIAL
    assert type(episode.timestamp) is float
    assert episode.task.category is TaskCategory.CODE_GENERATION


def test_from_dict_does_not_modify_its_input() -> None:
    data = json.loads(json.dumps(FULL_DICT))
    Episode.from_dict(data)
    assert data == FULL_DICT


@pytest.mark.parametrize("missing", ["episode_id", "task", "solution", "feedback", "outcome"])
def test_from_dict_missing_required_key(missing: str) -> None:
    data = {k: v for k, v in FULL_DICT.items() if k != missing}
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict(data)
    assert_names(error, "missing", missing)


def test_from_dict_missing_nested_keys() -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict({**FULL_DICT, "task": {"category": "debugging"}})
    assert_names(error, "TaskDescription", "missing", "description")
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict({**FULL_DICT, "feedback": {"message": "no reward"}})
    assert_names(error, "Feedback", "missing", "reward")


@pytest.mark.parametrize("extra", ["extra", "Outcome", "strategy"])
def test_from_dict_unknown_key(extra: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict({**FULL_DICT, extra: 1})
    assert_names(error, "unknown", extra)


def test_from_dict_unknown_nested_keys() -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict({**FULL_DICT, "task": {**FULL_DICT["task"], "priority": 1}})
    assert_names(error, "TaskDescription", "unknown", "priority")
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict({**FULL_DICT, "feedback": {**FULL_DICT["feedback"], "score": 1}})
    assert_names(error, "Feedback", "unknown", "score")


@pytest.mark.parametrize("bad", [None, [("episode_id", "e1")], "episode", 3])
def test_from_dict_requires_a_mapping(bad: object) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict(bad)  # type: ignore[arg-type]
    assert_names(error, "Episode", repr(bad), "mapping")


@pytest.mark.parametrize("field", ["task", "feedback"])
def test_from_dict_nested_value_must_be_a_mapping(field: str) -> None:
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict({**FULL_DICT, field: "not a mapping"})
    assert_names(error, "'not a mapping'", "mapping")


@pytest.mark.parametrize(
    ("path", "value", "field", "shown"),
    [
        (("feedback", "reward"), 1.5, "reward", "1.5"),
        (("feedback", "tests_passed"), 11, "tests_passed", "11"),
        (("feedback", "tests_total"), True, "tests_total", "True"),
        (("task", "complexity"), -0.5, "complexity", "-0.5"),
        (("task", "category"), "cooking", "category", "'cooking'"),
        (("task", "description"), "  ", "description", "'  '"),
        (("outcome",), "won", "outcome", "'won'"),
        (("iterations",), 0, "iterations", "0"),
        (("timestamp",), None, "timestamp", "None"),
        (("episode_id",), "", "episode_id", "''"),
    ],
)
def test_from_dict_validates_every_field(
    path: tuple[str, ...], value: object, field: str, shown: str
) -> None:
    data = json.loads(json.dumps(FULL_DICT))
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict(data)
    assert_names(error, field, shown)


def test_from_dict_rejects_non_finite_json_numbers() -> None:
    # json.loads accepts NaN / Infinity literals; they must not sneak into an episode.
    text = json.dumps(FULL_DICT).replace('"reward": 0.9', '"reward": NaN')
    data = json.loads(text)
    assert math.isnan(data["feedback"]["reward"])
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict(data)
    assert_names(error, "reward", "nan")


@pytest.mark.parametrize("field", ["reward", "complexity", "timestamp"])
def test_huge_integers_raise_a_validation_error(field: str) -> None:
    # float(10**400) overflows; that must surface as a validation error, not OverflowError.
    with pytest.raises(EpisodeValidationError) as error:
        make_episode(**{field: 10**400})
    assert_names(error, field, "1000000000")


def test_huge_integer_in_json_is_a_validation_error() -> None:
    data = json.loads(
        json.dumps(FULL_DICT).replace('"timestamp": 1700000000.5', '"timestamp": 1' + "0" * 400)
    )
    assert data["timestamp"] == 10**400
    with pytest.raises(EpisodeValidationError) as error:
        Episode.from_dict(data)
    assert_names(error, "timestamp")


def test_numpy_numbers_are_accepted_and_normalised() -> None:
    episode = make_episode(
        tests_passed=np.int64(3), tests_total=np.int64(4), iterations=np.int32(2)
    )
    assert type(episode.feedback.tests_passed) is int
    assert type(episode.iterations) is int
    assert Episode.from_dict(json.loads(json.dumps(episode.to_dict()))) == episode


def test_an_episode_id_that_looks_like_a_lesson_id_is_refused() -> None:
    with pytest.raises(EpisodeValidationError, match=r"episode_id='lesson-1'.*lesson ids"):
        make_episode(episode_id="lesson-1")


def test_source_round_trips_and_is_optional() -> None:
    plain = make_episode()
    assert "source" not in plain.to_dict()
    sourced = dataclasses.replace(plain, source=EpisodeSource(agent="coder", run_id="r-9"))
    data = sourced.to_dict()
    assert data["source"] == {"agent": "coder", "run_id": "r-9"}
    assert Episode.from_dict(json.loads(json.dumps(data))) == sourced
    assert episode_from_stored(data) == sourced
    assert Episode.from_dict({**data, "source": {"run_id": "r-1"}}).source == EpisodeSource(
        run_id="r-1"
    )


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ({}, "EpisodeSource.agent=None"),
        ({"agent": ""}, "EpisodeSource.agent=''"),
        ({"agent": 3}, "EpisodeSource.agent=3"),
        ({"agent": "a", "user": "b"}, r"unknown field\(s\) \['user'\]"),
        ("coder", "EpisodeSource data='coder'"),
    ],
)
def test_bad_sources_are_named(source: object, named: str) -> None:
    data = {**make_episode().to_dict(), "source": source}
    with pytest.raises(EpisodeValidationError, match=named):
        Episode.from_dict(data)
    with pytest.raises(EpisodeValidationError, match=named):
        episode_from_stored(data)


def test_episode_source_must_be_an_episode_source() -> None:
    with pytest.raises(EpisodeValidationError, match=r"Episode\.source="):
        dataclasses.replace(make_episode(), source={"agent": "x"})  # type: ignore[arg-type]
