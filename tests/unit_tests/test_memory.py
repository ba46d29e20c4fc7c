"""EpisodicMemory over a real in-process Chroma: record, recall, tiers, namespaces."""

from __future__ import annotations

import inspect
import math

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodeConflictError,
    EpisodeFilter,
    EpisodicMemory,
    EpisodicValueError,
    OutcomeStatus,
    ReplayWeights,
    StaticEmbeddings,
    TaskCategory,
)
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.skills import compute_skill_profiles
from langchain_episodic.service.credit import Runs
from langchain_episodic.service.erasure import Eraser
from langchain_episodic.service.journal import Journal
from langchain_episodic.service.lessons import Lessons
from langchain_episodic.service.quarantine import Quarantine
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.episodes import DAY, QUERIES, TASKS, article_recall, corpus
from tests.unit_tests.factories import a_lesson, logins_memory, make_episode


@pytest.mark.parametrize("top_k", [1, 3, 5])
@pytest.mark.parametrize("query", QUERIES)
def test_recall_equals_article_algorithm(query: str, top_k: int) -> None:
    episodes = corpus(36)
    memory = EpisodicMemory()
    memory.record_many(episodes)
    now = 2 * DAY
    got = memory.recall(query, top_k=top_k, current_time=now, fetch_k=2 * top_k, ranking="article")
    expected = article_recall(episodes, memory.embeddings, query, top_k, now)
    assert [r.episode.episode_id for r in got] == [e[0] for e in expected]
    for result, (_, priority) in zip(got, expected, strict=True):
        assert math.isclose(result.priority, priority, abs_tol=1e-6)


def test_default_fetch_k_is_twice_top_k(memory: EpisodicMemory) -> None:
    episodes = corpus(36)
    memory.record_many(episodes)
    weights = ReplayWeights.for_phase("late")
    got = memory.recall(
        QUERIES[0], top_k=2, current_time=DAY, weights=weights, half_life=3600.0, ranking="article"
    )
    expected = article_recall(episodes, memory.embeddings, QUERIES[0], 2, DAY, weights, 3600.0)
    assert [r.episode.episode_id for r in got] == [e[0] for e in expected]


def test_recall_ranks_by_priority_not_similarity(memory: EpisodicMemory) -> None:
    old_success = make_episode(
        episode_id="old", description="Implement login form", timestamp=0.0, reward=0.2
    )
    recent_similar = make_episode(
        episode_id="recent",
        description="Implement login form quickly",
        timestamp=10 * DAY,
        reward=1.0,
    )
    memory.record_many([old_success, recent_similar])
    results = memory.recall(
        "Implement login form", top_k=2, current_time=10 * DAY, ranking="article"
    )
    assert results[0].similarity < results[1].similarity
    assert [r.episode.episode_id for r in results] == ["recent", "old"]
    assert results[0].priority > results[1].priority


def test_recall_on_empty_memory_returns_nothing(memory: EpisodicMemory) -> None:
    assert memory.recall("anything") == ()


def test_recall_accepts_task_description_and_filters(memory: EpisodicMemory) -> None:
    memory.record_many(corpus(24))
    task = make_episode(description="Fix the login crash").task
    debugging = memory.recall(task, top_k=5, category="debugging")
    assert debugging
    assert all(r.episode.task.category is TaskCategory.DEBUGGING for r in debugging)
    failures = memory.recall(task, top_k=5, filters=EpisodeFilter(outcome=["failure"]))
    assert failures
    assert all(r.episode.outcome is OutcomeStatus.FAILURE for r in failures)


def test_similarity_floor_drops_unrelated_episodes(memory: EpisodicMemory) -> None:
    memory.record_many(corpus(12))
    everything = memory.recall("Implement login form", top_k=6, ranking="article")
    floor = sorted(r.similarity for r in everything)[2]  # drops the two least similar
    floored = memory.recall(
        "Implement login form", top_k=6, min_similarity=floor, ranking="article"
    )
    assert len(floored) < len(everything)
    assert all(r.similarity >= floor for r in floored)


async def test_arecall_matches_recall(memory: EpisodicMemory) -> None:
    await memory.arecord_many(corpus(12))
    assert await memory.arecord(corpus(1)[0]) is False
    sync = memory.recall(QUERIES[1], top_k=3, current_time=DAY)
    asynchronous = await memory.arecall(QUERIES[1], top_k=3, current_time=DAY)
    assert sync == asynchronous


def test_short_term_window_is_last_n_oldest_first(memory: EpisodicMemory) -> None:
    episodes = corpus(8)
    for episode in episodes:
        memory.record(episode)
    assert memory.short_term == tuple(episodes[-5:])
    assert len(memory) == 8


def test_record_many_writes_batches_in_time_order(memory: EpisodicMemory) -> None:
    episodes = corpus(9)
    memory.record_many(reversed(episodes))
    assert list(memory.episodes()) == episodes
    assert memory.short_term == tuple(episodes[-5:])


def test_skill_profiles_track_records(memory: EpisodicMemory) -> None:
    episodes = corpus(30)
    memory.record_many(episodes[:10])
    for episode in episodes[10:]:
        memory.record(episode)
    assert memory.skill_profiles() == compute_skill_profiles(episodes)


# ---------------------------------------------------------------- immutability


def test_recording_the_same_episode_twice_is_a_no_op(memory: EpisodicMemory) -> None:
    episode = make_episode()
    assert memory.record(episode) is True
    assert memory.record(episode) is False
    assert memory.record_many([episode, episode]) == 0
    assert len(memory) == 1
    assert memory.short_term == (episode,)
    assert memory.skill_profiles()[0].total_episodes == 1


def test_conflicting_episode_is_refused_and_stored_one_kept(memory: EpisodicMemory) -> None:
    original = make_episode(episode_id="same", reward=0.9)
    memory.record(original)
    with pytest.raises(EpisodeConflictError, match="'same'") as caught:
        memory.record(make_episode(episode_id="same", reward=0.1))
    assert isinstance(caught.value, ValueError)
    assert list(memory.episodes()) == [original]
    assert memory.recall("Implement login form")[0].episode == original


def test_conflict_inside_a_batch_writes_nothing(memory: EpisodicMemory) -> None:
    batch = [make_episode(episode_id="a"), make_episode(episode_id="b")]
    batch.append(make_episode(episode_id="a", solution="something else"))
    with pytest.raises(EpisodeConflictError):
        memory.record_many(batch)
    assert len(memory) == 0
    assert memory.short_term == ()


def test_conflict_with_store_writes_nothing_of_the_batch(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    with pytest.raises(EpisodeConflictError):
        memory.record_many([make_episode(episode_id="new"), make_episode(episode_id="a", reward=0)])
    assert [e.episode_id for e in memory.episodes()] == ["a"]


# ---------------------------------------------------------------- namespaces


def test_namespaces_sharing_a_store_never_meet() -> None:
    store = ChromaEpisodeStore()
    alice = EpisodicMemory(store=store, namespace="alice")
    bob = EpisodicMemory(store=store, namespace="bob/team 2")
    alice.record_many(corpus(6))
    bob.record(make_episode(episode_id="ep-0", description="Plot the monthly sales", reward=0.1))
    assert len(alice) == 6
    assert len(bob) == 1
    assert [e.episode_id for e in bob.episodes()] == ["ep-0"]
    # The article's ranking returns the nearest episode however unrelated: isolation shows.
    [bobs] = bob.recall("Implement a login form", ranking="article")
    assert bobs.episode.task.description.startswith("Plot")
    alice_hits = alice.recall("Plot the monthly sales", top_k=6, ranking="article")
    assert len(alice_hits) == 6
    assert not any(r.episode.task.description.startswith("Plot") for r in alice_hits)
    reopened = EpisodicMemory(store=store, namespace="bob/team 2")
    assert [e.episode_id for e in reopened.short_term] == ["ep-0"]
    assert set(store.namespaces()) == {"alice", "bob/team 2"}


def test_default_memories_do_not_share_data() -> None:
    first, second = EpisodicMemory(), EpisodicMemory()
    first.record(make_episode())
    assert len(second) == 0


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"top_k": 0}, "top_k=0"),
        ({"top_k": 2.5}, "top_k=2.5"),
        ({"fetch_k": 1, "top_k": 3}, "fetch_k=1"),
        ({"half_life": 0.0}, "half_life=0.0"),
        ({"half_life": -5}, "half_life=-5"),
        ({"half_life": math.inf}, "half_life=inf"),
        ({"current_time": math.nan}, "current_time=nan"),
        ({"min_similarity": 2.0}, "min_similarity=2.0"),
        ({"category": "cooking"}, "cooking"),
        ({"outcome": "won"}, "won"),
    ],
)
def test_invalid_recall_arguments_are_named(
    memory: EpisodicMemory, kwargs: dict[str, object], named: str
) -> None:
    memory.record(make_episode())
    with pytest.raises(EpisodicValueError) as caught:
        memory.recall("Implement login", **kwargs)  # type: ignore[arg-type]
    assert named in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"weights": {"similarity": 1}}, "weights="),
        ({"filters": "debugging"}, "filters="),
        ({"filters": EpisodeFilter(category="debugging"), "category": "debugging"}, "not both"),
    ],
)
def test_recall_arguments_of_the_wrong_type_are_type_errors(
    memory: EpisodicMemory, kwargs: dict[str, object], named: str
) -> None:
    with pytest.raises(TypeError) as caught:
        memory.recall("Implement login", **kwargs)  # type: ignore[arg-type]
    assert named in str(caught.value)


@pytest.mark.parametrize("query", ["", "   ", None, 42])
def test_invalid_query_is_named(memory: EpisodicMemory, query: object) -> None:
    with pytest.raises(EpisodicValueError, match="query="):
        memory.recall(query)  # type: ignore[arg-type]


def test_recording_a_non_episode_is_a_type_error(memory: EpisodicMemory) -> None:
    with pytest.raises(TypeError, match="not an Episode"):
        memory.record(make_episode().to_dict())  # type: ignore[arg-type]


def test_record_many_validates_everything_before_writing(memory: EpisodicMemory) -> None:
    with pytest.raises(TypeError, match=r"episodes\[2\]"):
        memory.record_many([make_episode(episode_id="a"), make_episode(episode_id="b"), "oops"])  # type: ignore[list-item]
    assert len(memory) == 0


class NaNEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[math.nan, 1.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def test_unusable_embeddings_write_nothing() -> None:
    memory = EpisodicMemory(embeddings=NaNEmbeddings())
    with pytest.raises(EpisodicValueError, match="episode_id='e1'"):
        memory.record(make_episode(episode_id="e1"))
    assert len(memory) == 0


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"short_term_limit": -1}, "short_term_limit=-1"),
        ({"namespace": ""}, "namespace=''"),
    ],
)
def test_invalid_memory_arguments_are_named(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(EpisodicValueError, match=named):
        EpisodicMemory(**kwargs)  # type: ignore[arg-type]


def test_any_langchain_embeddings_work() -> None:
    memory = EpisodicMemory(embeddings=DeterministicFakeEmbedding(size=32))
    memory.record_many(corpus(5))
    exact = memory.recall(TASKS[3][0], top_k=1, current_time=0.0, fetch_k=5)
    assert exact[0].episode.episode_id == "ep-3"
    assert math.isclose(exact[0].similarity, 1.0, abs_tol=1e-5)


def test_the_packaged_static_model_is_the_default(memory: EpisodicMemory) -> None:
    assert isinstance(memory.embeddings, StaticEmbeddings)
    assert memory.embeddings.model_name == StaticEmbeddings().model_name


async def test_arecord_many_can_keep_the_given_order() -> None:
    memory = EpisodicMemory()
    episodes = corpus(4)
    assert await memory.arecord_many(list(reversed(episodes)), in_time_order=False) == 4
    assert [e.episode_id for e in memory.episodes()] == ["ep-3", "ep-2", "ep-1", "ep-0"]
    other = EpisodicMemory()
    await other.arecord_many(list(reversed(episodes)))
    assert [e.episode_id for e in other.episodes()] == ["ep-0", "ep-1", "ep-2", "ep-3"]


def test_two_memories_writing_one_namespace_leave_skill_profiles_that_add_up() -> None:
    # Each memory tallies only its own writes; saving those tallies as the namespace's
    # summary would make the next open trust a wrong count by category.
    store = InMemoryEpisodeStore()
    first, second = EpisodicMemory(store=store), EpisodicMemory(store=store)
    categories = ["code_generation", "debugging", "architecture", "refactoring"]
    for i in range(12):
        writer = first if i % 2 == 0 else second
        writer.record(make_episode(episode_id=f"e{i}", category=categories[i % 4], timestamp=i))
    first.flush()
    second.flush()

    reopened = EpisodicMemory(store=store)
    assert len(reopened) == 12
    assert reopened.skill_profiles() == compute_skill_profiles(reopened.episodes())


def test_a_dropped_memory_is_freed_at_once_without_the_cyclic_collector() -> None:
    # The façade and its services hold no reference back to the memory: a cycle would
    # keep its store (and an embedded store's folder lock) alive until gc runs.
    import gc  # noqa: PLC0415
    import weakref  # noqa: PLC0415

    from langchain_episodic.stores import InMemoryEpisodeStore  # noqa: PLC0415

    gc.disable()
    try:
        memory = EpisodicMemory(store=InMemoryEpisodeStore())
        memory.recall("anything")
        memory.for_namespace("other").recall("anything")
        held = weakref.ref(memory)
        del memory
        assert held() is None
    finally:
        gc.enable()


# The façade's own promises, on two login episodes: reads by id, an async twin for every
# method that embeds or touches the store, and the retriever and runnable it builds.
TWINS = [
    (EpisodicMemory, "arecord", "record"),
    (EpisodicMemory, "arecord_many", "record_many"),
    (EpisodicMemory, "aget_episodes", "get_episodes"),
    (EpisodicMemory, "arecall", "recall"),
    (EpisodicMemory, "atask", "task"),
    (EpisodicMemory, "aforget", "forget"),
    (Runs, "anote", "note"),
    (Runs, "acredit", "credit"),
    (Runs, "aclose", "close"),
    (Runs, "aexpire", "expire"),
    (Runs, "areload", "reload"),
    (Lessons, "aadd", "add"),
    (Lessons, "arevise", "revise"),
    (Lessons, "aconsolidate", "consolidate"),
    (Lessons, "arecall", "recall"),
    (Quarantine, "aadd", "add"),
    (Quarantine, "arelease", "release"),
    (Quarantine, "apin", "pin"),
    (Quarantine, "aunpin", "unpin"),
    (Eraser, "aforget", "forget"),
    (Eraser, "aforget_all", "forget_all"),
    (Eraser, "aprune", "prune"),
    (Eraser, "areceipts", "receipts"),
    (Eraser, "acompact", "compact"),
    (Journal, "acheckpoint", "checkpoint"),
]


class TestTheFacadeOnTwoLogins:
    @pytest.fixture
    def memory(self) -> EpisodicMemory:
        return logins_memory()

    def test_get_episodes_reads_by_id(self, memory: EpisodicMemory) -> None:
        found = memory.get_episodes(["login-1", "nope"])
        assert list(found) == ["login-1"]
        assert memory.get_episodes("login-2").keys() == {"login-2"}
        assert memory.namespaces() == ("default",)

    @pytest.mark.parametrize(("owner", "twin", "method"), TWINS)
    def test_every_async_twin_is_a_coroutine_function_with_its_methods_signature(
        self, owner: type, twin: str, method: str
    ) -> None:
        assert inspect.iscoroutinefunction(getattr(owner, twin))
        assert getattr(owner, twin).__name__ == twin
        assert inspect.signature(getattr(owner, twin)) == inspect.signature(getattr(owner, method))

    async def test_async_twins_give_what_their_methods_give(self, memory: EpisodicMemory) -> None:
        options = RecallOptions(top_k=2)
        assert await memory.arecall("login form", options=options, explain=True) == memory.recall(
            "login form", options=options, explain=True
        )
        assert (await memory.aget_episodes(["login-1"])).keys() == {"login-1"}
        lesson = a_lesson()
        assert await memory.lessons.aadd([lesson]) == 1
        assert await memory.lessons.arecall("login form e-mail", 1) == memory.lessons.recall(
            "login form e-mail", 1
        )
        revised = await memory.lessons.arevise(lesson.lesson_id, title="Strip every e-mail")
        assert memory.lessons.status(lesson.lesson_id) == "archived"
        assert await memory.lessons.aconsolidate() == ()
        assert memory.lessons.list() == (revised,)
        await memory.runs.anote("run-a", ["login-1"], "login form")
        event = await memory.runs.aclose("run-a", 0.6)
        assert event is not None
        assert await memory.runs.aclose("run-a", 0.1) == event

    def test_as_retriever_and_as_runnable_are_wired_by_the_package(
        self, memory: EpisodicMemory
    ) -> None:
        from langchain_episodic import EpisodicRetriever  # noqa: PLC0415

        retriever = memory.as_retriever(k=1)
        assert isinstance(retriever, EpisodicRetriever)
        assert retriever.memory is memory
        assert "login" in memory.as_runnable().invoke("Implement a login form")
