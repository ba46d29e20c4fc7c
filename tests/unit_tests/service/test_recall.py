"""``Recall``: search and rank one namespace for a task; a task's category inferred."""

from __future__ import annotations

import numpy as np

from langchain_episodic import EpisodicMemory, TaskCategory, TaskDescription
from langchain_episodic.service.recall import hit_fields
from langchain_episodic.stores import InMemoryEpisodeStore
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


def test_with_categories_reads_a_batch_as_with_category_reads_each_task() -> None:
    recall = services().recall
    tasks = [
        TaskDescription("Fix the crash in the login handler"),
        TaskDescription("Write unit tests for the cart totals"),
        TaskDescription("Split the payment module into smaller services"),
        TaskDescription("Bake a chocolate cake for the party"),
        TaskDescription("Add a signup form", TaskCategory.TESTING),  # named: kept
    ]
    batch = recall.with_categories(tasks)
    assert [t.category for t in batch] == [recall.with_category(t).category for t in tasks]
    assert batch[4] is tasks[4]
    assert batch[0].category is TaskCategory.DEBUGGING
    assert batch[3].category is TaskCategory.UNKNOWN  # everyday: the background wins
    assert recall.with_categories([tasks[4]]) == [tasks[4]]  # nothing to infer, nothing embedded


def test_what_the_store_cannot_filter_is_filtered_before_candidates_are_chosen() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: 0.0)
    near = [
        make_episode(episode_id=f"near-{i}", description="Fix the login form crash", reward=0.9)
        for i in range(40)
    ]
    far = [  # distinct texts: an index may miss one of several identical vectors
        make_episode(episode_id=f"far-{i}", description=text, reward=0.1)
        for i, text in enumerate(
            [
                "Fix the crash in the login handler",
                "Repair the login handler that crashes on empty input",
                "The sign-in page crashes when the password is blank",
            ]
        )
    ]
    memory.record_many(near + far)
    where = {"reward": {"$lt": 0.5}}
    got = memory.recall("Fix the login form crash", top_k=3, filters=where, ranking="article")
    assert sorted(r.episode.episode_id for r in got) == ["far-0", "far-1", "far-2"]
    assert (
        memory.recall("Fix the login form crash", top_k=3, filters={"reward": {"$gt": 2.0}}) == ()
    )


def test_hit_fields_are_what_a_filter_reads() -> None:
    memory = EpisodicMemory()
    memory.record(make_episode(episode_id="e", reward=0.25, timestamp=7.0))
    (hit,) = memory.store.search_hits(
        "default", np.asarray(memory.embeddings.embed_query("x"), np.float32), 1, None
    )
    fields = hit_fields(hit)
    assert fields["reward"] == 0.25
    assert fields["timestamp"] == 7.0
    assert fields["pass_rate"] == 0.8  # 4 of 5 tests
    assert fields["outcome"] == hit.outcome.value
    assert fields["category"] == memory.get_episodes("e")["e"].task.category.value
