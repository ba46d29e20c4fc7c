"""A task's category inferred from its text (scoring.categories, memory.task)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from langchain.agents import create_agent

from langchain_episodic import EpisodicMemory, TaskCategory, TaskDescription, episode_from_tests
from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
from langchain_episodic.scoring.categories import CategoryProbe, features, head
from tests.helpers.models import make_model, user

RUNS = {
    "Fix the crash when the shopping cart is empty": "debugging",
    "Write unit tests for the invoice calculator": "testing",
    "Design the database schema for a booking system": "architecture",
    "Implement a function that reverses the words of a sentence": "code_generation",
    "Refactor the long report builder into smaller functions": "refactoring",
}


def test_the_probe_tells_categories_apart_and_says_none_for_the_background() -> None:
    examples = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 1.0, 0.0], [0.1, 0.9, 0.0]])
    background = np.array([[0.0, 0.0, 1.0], [0.1, 0.0, 0.9], [0.0, 0.1, 0.9]])
    probe = CategoryProbe.fit(examples, ["a", "a", "b", "b"], background, ridge=0.1)
    assert probe.labels == ("a", "b")
    assert probe.has_background
    assert probe.classify(np.array([0.8, 0.1, 0.1])) == "a"
    assert probe.classify(np.array([0.1, 0.8, 0.1])) == "b"
    assert probe.classify(np.array([0.05, 0.05, 0.9])) is None
    without = CategoryProbe.fit(examples, ["a", "a", "b", "b"], ridge=0.1)
    assert not without.has_background
    assert without.classify(np.array([0.05, 0.05, 0.9])) in {"a", "b"}  # never none


def test_the_probe_fits_the_same_with_fewer_rows_than_features() -> None:
    rng = np.random.default_rng(3)
    rows, labels = rng.normal(size=(6, 4)), ["a", "b", "c", "a", "b", "c"]
    background = rng.normal(size=(3, 4))
    primal = CategoryProbe.fit(rows, labels, background)  # 9 rows, 5 columns
    wide = np.hstack([rows, np.zeros((6, 20))])  # 9 rows, 25 columns: the dual form
    dual = CategoryProbe.fit(wide, labels, np.hstack([background, np.zeros((3, 20))]))
    np.testing.assert_allclose(dual.weights[:4], primal.weights[:4], atol=1e-9)
    np.testing.assert_allclose(dual.weights[-1], primal.weights[-1], atol=1e-9)


def test_the_probe_refuses_what_it_cannot_fit_or_read() -> None:
    rows = np.eye(2)
    with pytest.raises(ValueError, match="2 example rows and 1 labels"):
        CategoryProbe.fit(rows, ["a"])
    with pytest.raises(ValueError, match="ridge=0"):
        CategoryProbe.fit(rows, ["a", "b"], ridge=0)
    with pytest.raises(ValueError, match="background rows of 3 values"):
        CategoryProbe.fit(rows, ["a", "b"], np.ones((1, 3)))
    with pytest.raises(ValueError, match="a row of 3 values"):
        CategoryProbe.fit(rows, ["a", "b"]).classify(np.ones(3))


def test_features_are_the_unit_text_then_the_weighted_unit_opening() -> None:
    row = features(np.array([[3.0, 4.0]]), np.array([[0.0, 2.0]]), opening_weight=0.5)
    np.testing.assert_allclose(row, [[0.6, 0.8, 0.0, 0.5]])
    assert head("Fix: the login crash") == "Fix the"


@pytest.mark.parametrize(("text", "category"), list(RUNS.items()))
def test_memory_task_infers_the_category_of_text(text: str, category: str) -> None:
    assert EpisodicMemory().task(text).category.value == category


def test_a_named_category_is_kept_and_everyday_requests_stay_unknown() -> None:
    memory = EpisodicMemory()
    named = TaskDescription("Fix the crash when the cart is empty", TaskCategory.TESTING, 0.3)
    assert memory.task(named) is named
    assert memory.task("Book a table for two at an Italian restaurant").category.value == "unknown"


def test_a_memory_without_a_background_always_infers_a_category() -> None:
    memory = EpisodicMemory(background=())
    assert memory.task("Book a table for two at an Italian restaurant").category.value != "unknown"


def _recorder(memory: EpisodicMemory) -> Any:
    def record(state: Any, runtime: Any) -> Any:
        task = EpisodicMemoryMiddleware.task_of(state)
        assert task is not None
        return episode_from_tests(task, "...", 5, 5, episode_id=f"run-{len(memory)}")

    return record


@pytest.mark.parametrize("infer", [True, False])
def test_the_middleware_records_inferred_categories(infer: bool) -> None:
    memory = EpisodicMemory()
    middleware = EpisodicMemoryMiddleware(
        memory, record_episode=_recorder(memory), infer_category=infer
    )
    agent = create_agent(make_model(*["ok"] * len(RUNS)), tools=[], middleware=[middleware])
    for text in RUNS:
        agent.invoke(user(text))
    recorded = {e.task.description: e.task.category.value for e in memory.episodes()}
    if infer:
        assert recorded == RUNS
        assert "unknown" not in {p.category.value for p in memory.skill_profiles()}
    else:
        assert set(recorded.values()) == {"unknown"}


def test_infer_category_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="infer_category='yes' is invalid"):
        EpisodicMemoryMiddleware(EpisodicMemory(), infer_category="yes")  # type: ignore[arg-type]


def test_classify_many_agrees_with_classify_row_by_row() -> None:
    rng = np.random.default_rng(7)
    probe = CategoryProbe.fit(
        rng.normal(size=(12, 4)), ["a", "b", "c"] * 4, rng.normal(size=(3, 4))
    )
    rows = rng.normal(size=(20, 4))
    assert probe.classify_many(rows) == [probe.classify(row) for row in rows]
    assert None in probe.classify_many(rows) or len(set(probe.classify_many(rows))) > 1
    with pytest.raises(ValueError, match="a row of 3 values"):
        probe.classify_many(rng.normal(size=(2, 3)))
