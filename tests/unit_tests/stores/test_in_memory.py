"""InMemoryEpisodeStore: exact cosine search, filters, namespaces, threads."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from langchain_episodic import (
    Episode,
    EpisodeConflictError,
    EpisodeFilter,
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    OutcomeStatus,
    TaskCategory,
)
from langchain_episodic.scoring.skills import compute_skill_profiles
from langchain_episodic.stores import EpisodeStore
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

CATEGORIES = list(TaskCategory)
OUTCOMES = list(OutcomeStatus)
STRATEGIES = ["iterative", "defensive", "exploratory"]


def random_episodes(n: int, prefix: str = "r") -> list[Episode]:
    return [
        make_episode(
            episode_id=f"{prefix}-{i}",
            description=f"task {i}",
            category=CATEGORIES[i * 7 % len(CATEGORIES)],
            outcome=OUTCOMES[i * 5 % len(OUTCOMES)],
            strategy=STRATEGIES[i * 11 % len(STRATEGIES)],
            timestamp=float(i),
        )
        for i in range(n)
    ]


def random_vectors(n: int, dim: int, seed: int) -> NDArray[np.float32]:
    """Gaussian vectors with exact duplicates every 10th row (ties) and scaled rows."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    vectors[10::10] = vectors[0]  # several records exactly tied with the first
    vectors[5::25] *= 8.0  # length must not matter to cosine (x8 is exact in float32)
    return vectors


def brute_force(
    vectors: NDArray[np.float32], query: NDArray[np.float32], rows: Sequence[int], k: int
) -> list[tuple[int, float]]:
    """Float64 cosine over ``rows``, best first, ties by recording order."""
    unit = vectors.astype(np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    q = query.astype(np.float64) / np.linalg.norm(query.astype(np.float64))
    sims = unit @ q
    ranked = sorted(rows, key=lambda row: (-float(sims[row]), row))
    return [(row, float(sims[row])) for row in ranked[:k]]


def filled_store(
    n: int = 300, dim: int = 24, seed: int = 0, batch: int = 37
) -> tuple[InMemoryEpisodeStore, list[Episode], NDArray[np.float32]]:
    store = InMemoryEpisodeStore()
    episodes = random_episodes(n)
    vectors = random_vectors(n, dim, seed)
    for start in range(0, n, batch):
        store.add("default", episodes[start : start + batch], vectors[start : start + batch], start)
    return store, episodes, vectors


def test_store_implements_the_protocol() -> None:
    assert isinstance(InMemoryEpisodeStore(), EpisodeStore)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_equals_brute_force_cosine_including_ties(seed: int) -> None:
    store, episodes, vectors = filled_store(seed=seed)
    rng = np.random.default_rng(100 + seed)
    queries = [vectors[0], vectors[5] * 0.1, *rng.normal(size=(5, vectors.shape[1]))]
    for query in queries:
        query32 = np.asarray(query, dtype=np.float32)
        for k in (1, 7, 31, 300):
            hits = store.search_hits("default", query32, k)
            expected = brute_force(vectors, query32, range(len(episodes)), k)
            assert [h.episode_id for h in hits] == [episodes[row].episode_id for row, _ in expected]
            for hit, (_, similarity) in zip(hits, expected, strict=True):
                assert hit.similarity == pytest.approx(similarity, abs=1e-6)


def test_ties_keep_recording_order_even_at_the_k_boundary() -> None:
    store, episodes, vectors = filled_store()
    tied = [row for row in range(len(episodes)) if row % 10 == 0]
    # The query is the first vector: the tied rows (row 30 is 8x row 0) all score 1.0,
    # and k cuts through them.
    hits = store.search_hits("default", vectors[0], 4)
    assert [h.episode_id for h in hits] == [episodes[row].episode_id for row in tied[:4]]
    assert all(h.similarity == pytest.approx(1.0, abs=1e-6) for h in hits)


def test_k_larger_than_the_namespace_returns_every_record() -> None:
    store, episodes, vectors = filled_store(n=20)
    hits = store.search_hits("default", vectors[3], 1000)
    assert sorted(h.episode_id for h in hits) == sorted(e.episode_id for e in episodes)
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)


@pytest.mark.parametrize(
    "filters",
    [
        EpisodeFilter(category="debugging"),
        EpisodeFilter(outcome=["success", "partial"]),
        EpisodeFilter(strategy_used="defensive"),
        EpisodeFilter(category=["testing", "architecture"], outcome="failure"),
        EpisodeFilter(strategy_used="never-used"),
        EpisodeFilter(category="unknown", outcome="success", strategy_used="iterative"),
        EpisodeFilter(),
    ],
)
def test_filters_are_applied_before_the_top_k(filters: EpisodeFilter) -> None:
    store, episodes, vectors = filled_store()
    query = np.asarray(np.random.default_rng(7).normal(size=vectors.shape[1]), dtype=np.float32)
    rows = [
        row
        for row, e in enumerate(episodes)
        if filters.matches(e.task.category, e.outcome, e.strategy_used)
    ]
    for k in (1, 5, 400):
        hits = store.search_hits("default", query, k, filters)
        expected = brute_force(vectors, query, rows, k)
        assert [h.episode_id for h in hits] == [episodes[row].episode_id for row, _ in expected]


def test_namespaces_are_isolated() -> None:
    store = InMemoryEpisodeStore()
    vector = np.ones((1, 8), dtype=np.float32)
    a = make_episode(episode_id="same", description="alpha")
    b = make_episode(episode_id="same", description="beta")
    store.add("a", [a], vector, 0)
    store.add("b", [b], vector * 2, 0)
    store.write_state("a", "summary", "A")
    assert store.get("a", ["same"]) == {"same": a}
    assert store.get("b", ["same"]) == {"same": b}
    assert [h.episode() for h in store.search_hits("a", vector[0], 5)] == [a]
    assert store.latest("b", 5, 1) == [b]
    assert list(store.iter_episodes("b")) == [b]
    assert (store.read_state("a", "summary"), store.read_state("b", "summary")) == ("A", None)
    assert store.count("c") == 0
    assert store.namespaces() == ("a", "b", "c")  # "c" was opened


def test_round_trip_latest_and_paged_iteration() -> None:
    store = InMemoryEpisodeStore()
    tricky = make_episode(
        episode_id='tricky id/ü "q"',
        description='Ünïcode task with "quotes" and\nnewlines',
        solution="def f():\n    return '</solution>' # ✓\n" * 20_000,
        message="multi\nline 'feedback' \u2028",
    )
    episodes = [*random_episodes(9), tricky]
    store.add("default", episodes, random_vectors(10, 6, 3), 0)
    assert store.get("default", [tricky.episode_id, "absent"]) == {tricky.episode_id: tricky}
    assert store.latest("default", 3, 10) == episodes[-3:]
    assert store.latest("default", 3, 5) == episodes[2:5]
    assert store.latest("default", 0, 10) == []
    assert list(store.iter_episodes("default", page_size=3)) == episodes
    assert list(store.iter_episodes("default", page_size=4, start=6)) == episodes[6:]
    assert store.count("default") == 10


def test_an_id_stored_since_the_memorys_check_keeps_its_first_record() -> None:
    store = InMemoryEpisodeStore()
    episodes = random_episodes(3)
    vectors = random_vectors(3, 4, 0)
    store.add("default", episodes, vectors, 0)
    # What a racing writer does: add ids another memory stored after this one's get.
    store.add("default", episodes[:1], vectors[:1], 3)  # identical: not written twice
    changed = make_episode(episode_id="r-1", description="something else")
    fresh = random_episodes(5)[4]
    store.add("default", [fresh, changed], vectors[:2], 3)
    assert store.count("default") == 4  # only the fresh one
    assert store.get("default", ["r-1"]) == {"r-1": episodes[1]}  # never overwritten
    assert [e.episode_id for e in store.iter_episodes("default")] == ["r-0", "r-1", "r-2", "r-4"]
    assert len(store.search_hits("default", vectors[1], 10)) == 4  # one row per id
    # Telling the conflict is the memory's job (its check comes before any embedding;
    # read-only because the 4-d vectors above are not the default embedder's).
    with pytest.raises(EpisodeConflictError, match="r-1"):
        EpisodicMemory(store=store, on_embedding_mismatch="read-only").record(changed)


def test_vectors_of_another_length_or_a_bad_k_are_refused() -> None:
    store = InMemoryEpisodeStore()
    episode = make_episode()
    store.add("default", [episode], np.ones((1, 4), dtype=np.float32), 0)
    with pytest.raises(EpisodicValueError, match="4-dimensional"):
        store.add("default", [make_episode(episode_id="e2")], np.ones((1, 5), np.float32), 1)
    assert store.count("default") == 1
    with pytest.raises(EpisodicValueError, match="dimensions"):
        store.search_hits("default", np.ones(5, dtype=np.float32), 1)
    with pytest.raises(EpisodicValueError, match="k=0"):
        store.search_hits("default", np.ones(4, dtype=np.float32), 0)
    assert store.search_hits("empty", np.ones(3, dtype=np.float32), 3) == []


def test_matrix_grows_geometrically_not_per_add() -> None:
    store = InMemoryEpisodeStore()
    capacities = set()
    for i, episode in enumerate(random_episodes(1000)):
        store.add("default", [episode], np.ones((1, 4), dtype=np.float32) + i, i)
        capacities.add(store._namespaces["default"].vectors.shape[0])
    assert sorted(capacities) == [64, 128, 256, 512, 1024]


def test_memory_end_to_end_and_reopen() -> None:
    store = InMemoryEpisodeStore()
    embeddings = HashingEmbeddings()
    memory = EpisodicMemory(store=store, embeddings=embeddings, short_term_limit=3)
    episodes = corpus(30)
    assert memory.record_many(episodes) == 30
    best = memory.recall("Fix the login bug", top_k=1, fetch_k=30)[0]
    assert "login" in best.episode.task.description.lower()
    memory.flush()
    again = EpisodicMemory(store=store, embeddings=embeddings, short_term_limit=3)
    assert len(again) == 30
    assert again.short_term == tuple(episodes[-3:])
    assert list(again.episodes()) == episodes
    assert again.skill_profiles() == tuple(compute_skill_profiles(episodes))


def test_threads_recording_and_recalling_through_one_memory() -> None:
    store = InMemoryEpisodeStore()
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings(dimensions=64))
    other = EpisodicMemory(store=store, embeddings=HashingEmbeddings(dimensions=64))
    per_thread, threads_n = 40, 6
    errors: list[BaseException] = []
    start = threading.Barrier(threads_n)

    def work(t: int) -> None:
        try:
            start.wait()
            target = memory if t % 2 else other  # two memories on one namespace too
            for i in range(per_thread):
                target.record(
                    make_episode(
                        episode_id=f"t{t}-{i}", description=f"thread {t} task {i}", timestamp=i
                    )
                )
                target.recall(f"thread {t} task", top_k=2)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    total = per_thread * threads_n
    assert store.count("default") == total
    stored = list(store.iter_episodes("default"))
    assert len({e.episode_id for e in stored}) == total
    for t in range(threads_n):  # each thread's records keep its order
        mine = [e.episode_id for e in stored if e.episode_id.startswith(f"t{t}-")]
        assert mine == [f"t{t}-{i}" for i in range(per_thread)]
    assert store.latest("default", total, total) == stored


@pytest.mark.parametrize("page_size", [0, -1])
def test_iter_episodes_refuses_a_page_size_below_one(page_size: int) -> None:
    store = InMemoryEpisodeStore()
    with pytest.raises(EpisodicValueError, match=f"page_size={page_size}"):
        list(store.iter_episodes("default", page_size=page_size))
