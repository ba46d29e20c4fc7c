"""``Recall``: search and rank one namespace for a task; a task's category inferred."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory, TaskCategory, TaskDescription
from tests.unit_tests.factories import make_episode


def test_a_task_without_a_category_gets_the_one_its_text_says(memory: EpisodicMemory) -> None:
    recall = memory._s.recall
    guessed = recall.with_category(TaskDescription("Fix the crash in the login handler"))
    assert guessed.category == TaskCategory.DEBUGGING
    named = TaskDescription("Fix the crash in the login handler", TaskCategory.TESTING)
    assert recall.with_category(named).category == TaskCategory.TESTING


def test_memories_over_one_model_and_background_share_one_category_probe() -> None:
    first, second = EpisodicMemory(), EpisodicMemory()
    probe = first._s.recall.category_probe()
    assert second._s.recall.category_probe() is probe
    assert probe.has_background
    assert set(probe.labels) == {c.value for c in TaskCategory if c is not TaskCategory.UNKNOWN}
    other = EpisodicMemory(background=["Bake a cake", "Walk the dog"])._s.recall
    assert other.category_probe() is not probe  # another background, another fit
    assert not EpisodicMemory(background=[])._s.recall.category_probe().has_background


def test_without_holdout_runs_recall_never_backs_off(memory: EpisodicMemory) -> None:
    assert memory._s.recall.backing_off("debugging") is False


def test_the_background_bar_is_a_similarity_and_none_without_background() -> None:
    with_background = EpisodicMemory(clock=lambda: 0.0)
    bar = with_background._s.recall.background_bar(
        with_background._s.context.embeddings.embed_query("Fix the login bug")  # type: ignore[arg-type]
    )
    assert bar is not None
    assert -1.0 <= bar <= 1.0
    without = EpisodicMemory(clock=lambda: 0.0, background=[])
    assert without._s.recall.background_bar([0.0]) is None  # type: ignore[arg-type]


def test_recall_returns_the_nearest_episode_first(memory: EpisodicMemory) -> None:
    memory.record_many(
        [
            make_episode(episode_id="login", description="Fix the login form validation"),
            make_episode(episode_id="csv", description="Parse a CSV file with quotes"),
        ]
    )
    (first, *_) = memory.recall("Fix the login form", top_k=2, ranking="article")
    assert first.episode.episode_id == "login"
