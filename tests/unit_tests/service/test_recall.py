"""``Recall``: search and rank one namespace for a task; a task's category inferred."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory, TaskCategory, TaskDescription
from tests.helpers.services import services
from tests.unit_tests.factories import make_episode


def test_a_task_without_a_category_gets_the_one_its_text_says() -> None:
    recall = services().recall
    guessed = recall.with_category(TaskDescription("Fix the crash in the login handler"))
    assert guessed.category == TaskCategory.DEBUGGING
    named = TaskDescription("Fix the crash in the login handler", TaskCategory.TESTING)
    assert recall.with_category(named).category == TaskCategory.TESTING


def test_memories_over_one_model_and_background_share_one_category_probe() -> None:
    probe = services().recall.category_probe()
    assert services().recall.category_probe() is probe
    assert probe.has_background
    assert set(probe.labels) == {c.value for c in TaskCategory if c is not TaskCategory.UNKNOWN}
    other = services(background=["Bake a cake", "Walk the dog"]).recall
    assert other.category_probe() is not probe  # another background, another fit
    assert not services(background=[]).recall.category_probe().has_background


def test_without_holdout_runs_recall_never_backs_off() -> None:
    assert services().recall.backing_off("debugging") is False


def test_recall_returns_the_nearest_episode_first(memory: EpisodicMemory) -> None:
    memory.record_many(
        [
            make_episode(episode_id="login", description="Fix the login form validation"),
            make_episode(episode_id="csv", description="Parse a CSV file with quotes"),
        ]
    )
    (first, *_) = memory.recall("Fix the login form", top_k=2, ranking="article")
    assert first.episode.episode_id == "login"
