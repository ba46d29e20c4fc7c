"""A task's category inferred from its text (scoring.categories, memory.task)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from langchain.agents import create_agent

from langchain_episodic import EpisodicMemory, TaskCategory, TaskDescription, episode_from_tests
from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
from langchain_episodic.scoring.categories import head, vote
from tests.helpers.models import make_model, user

RUNS = {
    "Fix the crash when the shopping cart is empty": "debugging",
    "Write unit tests for the invoice calculator": "testing",
    "Design the database schema for a booking system": "architecture",
    "Implement a function that reverses the words of a sentence": "code_generation",
    "Refactor the long report builder into smaller functions": "refactoring",
}


def test_the_vote_weighs_by_similarity_and_abstains_below_the_bar() -> None:
    labels = ["a", "a", "b"]
    assert vote(np.array([0.5, 0.4, 0.8]), labels, bar=None, k=3) == "a"  # 0.9 against 0.8
    assert vote(np.array([0.5, 0.4, 0.8]), labels, bar=None, k=1) == "b"
    assert vote(np.array([0.5, 0.4, 0.8]), labels, bar=0.8, k=3) is None
    assert vote(np.array([]), [], bar=None) is None
    assert head("Fix: the login crash") == "Fix the"


@pytest.mark.parametrize(("text", "category"), list(RUNS.items()))
def test_memory_task_infers_the_category_of_text(text: str, category: str) -> None:
    assert EpisodicMemory().task(text).category.value == category


def test_a_named_category_is_kept_and_everyday_requests_stay_unknown() -> None:
    memory = EpisodicMemory()
    named = TaskDescription("Fix the crash when the cart is empty", TaskCategory.TESTING, 0.3)
    assert memory.task(named) is named
    assert memory.task("Book a table for two at an Italian restaurant").category.value == "unknown"


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
