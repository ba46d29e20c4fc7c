"""VectorStoreEpisodeStore over real FAISS (langchain-community) and Chroma (langchain-chroma)."""

from __future__ import annotations

import threading
import uuid
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import chromadb
import faiss
import numpy as np
import pytest
from langchain_chroma import Chroma
from langchain_classic.storage import LocalFileStore
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore

from langchain_episodic import (
    Episode,
    EpisodeConflictError,
    EpisodeFilter,
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    OutcomeStatus,
    StoreConfigurationError,
    TaskCategory,
)
from langchain_episodic.errors import MalformedRecordWarning
from langchain_episodic.scoring.skills import compute_skill_profiles
from langchain_episodic.stores import EpisodeStore
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore
from langchain_episodic.stores.vectorstore import LEDGER_BLOCK, VectorStoreEpisodeStore, record_id
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

with warnings.catch_warnings():
    # langchain-community warns on import that it is being sunset.
    warnings.filterwarnings("ignore", "`langchain-community` is being sunset", DeprecationWarning)
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

DIM = 64
EMBEDDINGS = HashingEmbeddings(dimensions=DIM)
WORDS = (
    "login form parser cache retry queue index schema test refactor deploy token auth "
    "graph sort merge stream buffer socket render plot export import config"
).split()
CATEGORIES = list(TaskCategory)
OUTCOMES = list(OutcomeStatus)


def faiss_store(metric: int, embeddings: Embeddings = EMBEDDINGS) -> FAISS:
    index = faiss.IndexFlat(DIM, metric)
    return FAISS(
        embedding_function=embeddings,
        index=index,
        docstore=InMemoryDocstore(),
        index_to_docstore_id={},
    )


def chroma_store(space: str, embeddings: Embeddings | None = EMBEDDINGS, **kwargs: Any) -> Chroma:
    kwargs.setdefault("client", chromadb.EphemeralClient())
    # Chroma's HNSW is approximate (and its build multi-threaded, so results vary run to
    # run); an ef_search above the record count makes its search exhaustive, so these
    # tests check the store's conversion and over-fetching, not HNSW's recall.
    return Chroma(
        collection_name=f"t-{uuid.uuid4().hex[:16]}",
        embedding_function=embeddings,
        collection_configuration={"hnsw": {"space": space, "ef_search": 1000}},
        **kwargs,
    )


BACKENDS: dict[str, Callable[[], VectorStore]] = {
    "faiss-l2": lambda: faiss_store(faiss.METRIC_L2),
    "faiss-ip": lambda: faiss_store(faiss.METRIC_INNER_PRODUCT),
    "chroma-cosine": lambda: chroma_store("cosine"),
    "chroma-l2": lambda: chroma_store("l2"),
    "chroma-ip": lambda: chroma_store("ip"),
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> VectorStore:
    return BACKENDS[request.param]()


def random_text(rng: np.random.Generator) -> str:
    return " ".join(rng.choice(WORDS, size=int(rng.integers(2, 6))))


def random_episodes(n: int, seed: int = 0, prefix: str = "e") -> list[Episode]:
    rng = np.random.default_rng(seed)
    texts = [random_text(rng) for _ in range(n)]
    texts[7::9] = [texts[0]] * len(texts[7::9])  # exact ties in similarity
    return [
        make_episode(
            episode_id=f"{prefix}-{i}",
            description=text,
            category=CATEGORIES[i * 7 % len(CATEGORIES)],
            outcome=OUTCOMES[i * 5 % len(OUTCOMES)],
            strategy=["iterative", "defensive", "exploratory"][i * 11 % 3],
            timestamp=float(i),
        )
        for i, text in enumerate(texts)
    ]


def add_all(store: EpisodeStore, namespace: str, episodes: Sequence[Episode]) -> None:
    vectors = np.asarray(EMBEDDINGS.embed_documents([e.task.description for e in episodes]))
    store.add(namespace, episodes, vectors.astype(np.float32), store.count(namespace))


def exact_cosine(episodes: Sequence[Episode], query: str) -> dict[str, float]:
    vectors = np.asarray(EMBEDDINGS.embed_documents([e.task.description for e in episodes]))
    q = np.asarray(EMBEDDINGS.embed_query(query))
    sims = vectors @ q / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))
    return {e.episode_id: float(s) for e, s in zip(episodes, sims, strict=True)}


def assert_exact(
    hits: Sequence[Any], reference: dict[str, float], keep: Callable[[str], bool], k: int
) -> None:
    """Hits carry the exact cosine of their record and are the k best (ties aside)."""
    best = sorted((s for i, s in reference.items() if keep(i)), reverse=True)[:k]
    assert len(hits) == len(best)
    for hit in hits:
        assert keep(hit.episode_id)
        assert hit.similarity == pytest.approx(reference[hit.episode_id], abs=1e-5)
    assert [h.similarity for h in hits] == pytest.approx(best, abs=1e-5)


def test_store_implements_the_protocol(backend: VectorStore) -> None:
    assert isinstance(VectorStoreEpisodeStore(backend), EpisodeStore)


def test_scores_are_detected_per_backend() -> None:
    expected = {
        "faiss-l2": "squared_l2",
        "faiss-ip": "inner_product",
        "chroma-cosine": "cosine_distance",
        "chroma-l2": "squared_l2",
        "chroma-ip": "one_minus_inner_product",
    }
    for name, make in BACKENDS.items():
        assert repr(VectorStoreEpisodeStore(make())).endswith(f"score={expected[name]!r})")


def test_similarity_is_exact_cosine_and_neighbours_are_the_brute_force_ones(
    backend: VectorStore,
) -> None:
    store = VectorStoreEpisodeStore(backend)
    episodes = random_episodes(150)
    add_all(store, "default", episodes[:70])
    add_all(store, "default", episodes[70:])
    rng = np.random.default_rng(1)
    for query in [episodes[0].task.description, *(random_text(rng) for _ in range(4))]:
        reference = exact_cosine(episodes, query)
        vector = np.asarray(EMBEDDINGS.embed_query(query), dtype=np.float32)
        for k in (1, 6, 40, 500):
            hits = store.search_hits("default", vector, k)
            assert_exact(hits, reference, lambda _: True, k)


def test_query_length_does_not_matter(backend: VectorStore) -> None:
    store = VectorStoreEpisodeStore(backend)
    episodes = random_episodes(30)
    add_all(store, "default", episodes)
    vector = np.asarray(EMBEDDINGS.embed_query("login cache"), dtype=np.float32)
    short = store.search_hits("default", vector, 5)
    long = store.search_hits("default", vector * 13.0, 5)
    assert [h.similarity for h in short] == pytest.approx([h.similarity for h in long], abs=1e-6)


@pytest.mark.parametrize(
    "filters",
    [
        EpisodeFilter(category="debugging"),
        EpisodeFilter(outcome="failure", strategy_used="defensive"),
        EpisodeFilter(category="architecture", outcome="success", strategy_used="iterative"),
        EpisodeFilter(strategy_used="never-used"),
    ],
)
def test_filters_and_namespaces_never_hide_a_neighbour(
    backend: VectorStore, filters: EpisodeFilter
) -> None:
    store = VectorStoreEpisodeStore(backend)
    query = "login form auth token"
    # A crowd of closer records in another namespace: a filter applied after taking
    # the k nearest (FAISS does) would see only them. Not 120 copies of one vector:
    # duplicates break the neighbour graph of an HNSW index (Chroma's), whose misses
    # would then be HNSW's, not the store's.
    crowd = [
        make_episode(episode_id=f"c-{i}", description=f"{query} {WORDS[i % len(WORDS)]} {i}")
        for i in range(120)
    ]
    add_all(store, "crowd", crowd)
    episodes = random_episodes(90)
    add_all(store, "default", episodes)
    reference = exact_cosine(episodes, query)
    passing = {
        e.episode_id
        for e in episodes
        if filters.matches(e.task.category, e.outcome, e.strategy_used)
    }
    vector = np.asarray(EMBEDDINGS.embed_query(query), dtype=np.float32)
    for k in (1, 3, 100):
        hits = store.search_hits("default", vector, k, filters)
        assert_exact(hits, reference, passing.__contains__, k)


def test_namespace_filter_none_filters_in_python_exactly() -> None:
    store = VectorStoreEpisodeStore(chroma_store("cosine"), namespace_filter=None)
    add_all(
        store, "crowd", [make_episode(episode_id=f"c-{i}", description="a b") for i in range(50)]
    )
    episodes = random_episodes(20)
    add_all(store, "default", episodes)
    vector = np.asarray(EMBEDDINGS.embed_query("a b"), dtype=np.float32)
    hits = store.search_hits("default", vector, 5)
    assert_exact(hits, exact_cosine(episodes, "a b"), lambda _: True, 5)


TRICKY = [
    make_episode(
        episode_id='tricky id/ü "quoted" \n',
        description="Ünïcode task — with \"quotes\", 'apostrophes' and\nnewlines\ttabs",
        solution="def f():\n    return '</solution>' \"\\n\" # ✓ 日本語\n" * 40_000,
        message="multi\nline 'feedback' \u2028 \x00 nul",
    ),
    make_episode(episode_id="emoji-🙂", description="🙂 " * 50, solution=""),
    make_episode(episode_id="x" * 300, description="long id", reward=-0.0, timestamp=7e9),
]


def test_tricky_episodes_round_trip_exactly(backend: VectorStore) -> None:
    store = VectorStoreEpisodeStore(backend)
    add_all(store, "default", TRICKY)
    ids = [e.episode_id for e in TRICKY]
    assert store.get("default", [*ids, "absent"]) == dict(zip(ids, TRICKY, strict=True))
    assert list(store.iter_episodes("default", page_size=2)) == TRICKY
    assert store.latest("default", 2, 3) == TRICKY[1:]
    vector = np.asarray(EMBEDDINGS.embed_query(TRICKY[0].task.description), dtype=np.float32)
    assert store.search_hits("default", vector, 1)[0].episode() == TRICKY[0]


def test_namespaces_are_isolated_in_one_shared_vector_store(backend: VectorStore) -> None:
    store = VectorStoreEpisodeStore(backend)
    a = make_episode(episode_id="same", description="login form")
    b = make_episode(episode_id="same", description="login form", solution="other")
    add_all(store, "a", [a])
    add_all(store, "b", [b, make_episode(episode_id="b2")])
    store.write_state("a", "summary", "for a")
    assert record_id("a", "same") != record_id("b", "same")
    assert store.get("a", ["same", "b2"]) == {"same": a}
    assert store.get("b", ["same"]) == {"same": b}
    assert (store.count("a"), store.count("b"), store.count("c")) == (1, 2, 0)
    vector = np.asarray(EMBEDDINGS.embed_query("login form"), dtype=np.float32)
    assert [h.episode() for h in store.search_hits("a", vector, 10)] == [a]
    assert list(store.iter_episodes("a")) == [a]
    assert store.latest("b", 1, 2) == [store.get("b", ["b2"])["b2"]]
    assert (store.read_state("a", "summary"), store.read_state("b", "summary")) == ("for a", None)
    assert store.namespaces() == ("a", "b", "c")


def test_an_id_stored_since_the_memorys_check_keeps_its_first_record(
    backend: VectorStore,
) -> None:
    store = VectorStoreEpisodeStore(backend)
    episodes = random_episodes(3)
    add_all(store, "default", episodes)
    # What a racing writer does: add ids another memory stored after this one's get.
    add_all(store, "default", episodes[:2])  # identical: skipped under the store's lock
    changed = make_episode(episode_id="e-1", description="changed")
    add_all(store, "default", [changed, make_episode(episode_id="e-9")])
    assert store.count("default") == 4  # only e-9
    assert store.get("default", ["e-1"]) == {"e-1": episodes[1]}  # never overwritten
    assert [e.episode_id for e in store.iter_episodes("default")] == ["e-0", "e-1", "e-2", "e-9"]
    # Telling the conflict is the memory's job.
    with pytest.raises(EpisodeConflictError, match="e-1"):
        EpisodicMemory(store=store, embeddings=EMBEDDINGS).record(changed)


def test_ledger_blocks_span_many_records() -> None:
    store = VectorStoreEpisodeStore(faiss_store(faiss.METRIC_INNER_PRODUCT), batch_size=300)
    episodes = random_episodes(LEDGER_BLOCK + 200)
    add_all(store, "default", episodes[:1000])
    add_all(store, "default", episodes[1000:])
    assert store.count("default") == len(episodes)
    assert list(store.iter_episodes("default", page_size=333, start=5)) == episodes[5:]
    assert store.latest("default", 50, len(episodes)) == episodes[-50:]


def test_memory_end_to_end_recalls_as_the_in_memory_store(backend: VectorStore) -> None:
    episodes = corpus(40)
    ours = EpisodicMemory(store=VectorStoreEpisodeStore(backend), embeddings=EMBEDDINGS)
    exact = EpisodicMemory(store=InMemoryEpisodeStore(), embeddings=EMBEDDINGS)
    assert ours.record_many(episodes) == exact.record_many(episodes) == 40
    assert ours.record(episodes[3]) is False
    for query in ("Fix the login bug", "Write tests for the parser", "Refactor the cache"):
        for kwargs in ({}, {"category": "debugging"}, {"outcome": ["success", "partial"]}):
            got = ours.recall(query, top_k=4, fetch_k=12, current_time=1e6, **kwargs)
            want = exact.recall(query, top_k=4, fetch_k=12, current_time=1e6, **kwargs)
            assert [r.priority for r in got] == pytest.approx([r.priority for r in want], abs=1e-5)
            assert [r.similarity for r in got] == pytest.approx(
                [r.similarity for r in want], abs=1e-5
            )
    assert ours.short_term == exact.short_term
    assert list(ours.episodes()) == list(exact.episodes())


@pytest.fixture
def faiss_paths(tmp_path: Path) -> tuple[str, Path]:
    return str(tmp_path / "faiss"), tmp_path / "ledger"


def test_faiss_and_file_ledger_persist_across_reopen(faiss_paths: tuple[str, Path]) -> None:
    folder, ledger_path = faiss_paths
    episodes = corpus(25)
    store = VectorStoreEpisodeStore(
        faiss_store(faiss.METRIC_L2),
        ledger=LocalFileStore(ledger_path),
        persist=lambda vs: vs.save_local(folder),  # type: ignore[attr-defined]
    )
    memory = EpisodicMemory(store=store, embeddings=EMBEDDINGS, short_term_limit=4)
    memory.record_many(episodes[:20])
    for episode in episodes[20:]:
        memory.record(episode)
    memory.flush()
    before = memory.recall("Fix the login bug", top_k=3, current_time=1e6)
    del memory, store

    reopened = FAISS.load_local(folder, EMBEDDINGS, allow_dangerous_deserialization=True)
    store = VectorStoreEpisodeStore(reopened, ledger=LocalFileStore(ledger_path))
    memory = EpisodicMemory(store=store, embeddings=EMBEDDINGS, short_term_limit=4)
    assert len(memory) == 25
    assert list(memory.episodes()) == episodes
    assert memory.short_term == tuple(episodes[-4:])
    assert memory.skill_profiles() == tuple(compute_skill_profiles(episodes))
    after = memory.recall("Fix the login bug", top_k=3, current_time=1e6)
    assert after == before
    assert store.namespaces() == ("default",)


def test_chroma_on_disk_and_file_ledger_persist_across_reopen(tmp_path: Path) -> None:
    episodes = corpus(12)

    def open_memory() -> EpisodicMemory:
        chroma = Chroma(
            collection_name="episodes",
            embedding_function=EMBEDDINGS,
            client=chromadb.PersistentClient(path=str(tmp_path / "chroma")),
            collection_configuration={"hnsw": {"space": "cosine"}},
        )
        store = VectorStoreEpisodeStore(chroma, ledger=LocalFileStore(tmp_path / "ledger"))
        return EpisodicMemory(store=store, embeddings=EMBEDDINGS, short_term_limit=3)

    first = open_memory()
    first.record_many(episodes)
    first.flush()
    second = open_memory()
    assert len(second) == 12
    assert list(second.episodes()) == episodes
    assert second.short_term == tuple(episodes[-3:])


def test_records_missing_from_an_unsaved_faiss_are_skipped_with_a_warning(
    faiss_paths: tuple[str, Path],
) -> None:
    folder, ledger_path = faiss_paths
    store = VectorStoreEpisodeStore(
        faiss_store(faiss.METRIC_L2), ledger=LocalFileStore(ledger_path)
    )
    episodes = random_episodes(3)
    add_all(store, "default", episodes[:2])
    store.vectorstore.save_local(folder)  # type: ignore[attr-defined]
    add_all(store, "default", episodes[2:])  # never saved
    reopened = FAISS.load_local(folder, EMBEDDINGS, allow_dangerous_deserialization=True)
    store = VectorStoreEpisodeStore(reopened, ledger=LocalFileStore(ledger_path))
    with pytest.warns(MalformedRecordWarning, match="not found in the vector store"):
        assert list(store.iter_episodes("default")) == episodes[:2]


def test_threads_recording_through_memories_on_one_faiss() -> None:
    store = VectorStoreEpisodeStore(faiss_store(faiss.METRIC_INNER_PRODUCT))
    memories = [EpisodicMemory(store=store, embeddings=EMBEDDINGS) for _ in range(2)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(t: int) -> None:
        try:
            barrier.wait()
            for i in range(25):
                memories[t % 2].record(
                    make_episode(episode_id=f"t{t}-{i}", description=f"t{t} {i}")
                )
                memories[t % 2].recall(f"t{t}", top_k=2)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stored = [e.episode_id for e in store.iter_episodes("default")]
    assert sorted(stored) == sorted(f"t{t}-{i}" for t in range(4) for i in range(25))
    assert store.count("default") == 100


# ------------------------------------------------------------------ clear errors


class ListVectorStore(VectorStore):
    """A small real vector store of another kind: brute-force dot product."""

    def __init__(self, embeddings: Embeddings) -> None:
        self.model = embeddings
        self.rows: dict[str, tuple[list[float], Document]] = {}

    @property
    def embeddings(self) -> Embeddings:
        return self.model

    def add_texts(
        self, texts: Any, metadatas: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> list[str]:
        texts = list(texts)
        ids = kwargs.get("ids") or [str(uuid.uuid4()) for _ in texts]
        vectors = self.model.embed_documents(texts)
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
            metadata = (metadatas or [{}] * len(texts))[i]
            self.rows[ids[i]] = (vector, Document(text, metadata=metadata, id=ids[i]))
        return list(ids)

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        return [self.rows[i][1] for i in ids if i in self.rows]

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        predicate = kwargs.get("filter") or {}
        scored = [
            (doc, float(np.dot(vector, embedding)))
            for vector, doc in self.rows.values()
            if all(doc.metadata.get(key) == value for key, value in predicate.items())
        ]
        return sorted(scored, key=lambda pair: -pair[1])[:k]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        raise NotImplementedError

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> ListVectorStore:
        raise NotImplementedError


class NoGetByIds(ListVectorStore):
    get_by_ids = VectorStore.get_by_ids


def test_unknown_backend_needs_score_and_the_error_lists_the_choices() -> None:
    with pytest.raises(StoreConfigurationError, match="ListVectorStore") as raised:
        VectorStoreEpisodeStore(ListVectorStore(EMBEDDINGS))
    for kind in ("cosine_similarity", "cosine_distance", "inner_product", "squared_l2", "'l2'"):
        assert kind in str(raised.value)
    store = VectorStoreEpisodeStore(ListVectorStore(EMBEDDINGS), score="inner_product")
    episodes = random_episodes(40)
    add_all(store, "default", episodes)
    vector = np.asarray(EMBEDDINGS.embed_query("login"), dtype=np.float32)
    assert_exact(store.search_hits("default", vector, 5), exact_cosine(episodes, "login"), bool, 5)
    custom = VectorStoreEpisodeStore(ListVectorStore(EMBEDDINGS), score=lambda s: s)
    add_all(custom, "default", episodes)
    assert custom.search_hits("default", vector, 5) == store.search_hits("default", vector, 5)


def test_invalid_configurations_are_refused_clearly() -> None:
    with pytest.raises(EpisodicValueError, match="score='dot'"):
        VectorStoreEpisodeStore(ListVectorStore(EMBEDDINGS), score="dot")  # type: ignore[arg-type]
    with pytest.raises(StoreConfigurationError, match="does not implement get_by_ids"):
        VectorStoreEpisodeStore(NoGetByIds(EMBEDDINGS), score="inner_product")
    with pytest.raises(StoreConfigurationError, match="metric_type=2"):
        VectorStoreEpisodeStore(faiss_store(faiss.METRIC_L1))
    with pytest.raises(TypeError, match="must be a LangChain VectorStore"):
        VectorStoreEpisodeStore(object())  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="batch_size=0"):
        VectorStoreEpisodeStore(faiss_store(faiss.METRIC_L2), batch_size=0)


def test_backend_that_embeds_itself_must_use_the_memorys_model() -> None:
    no_model = VectorStoreEpisodeStore(chroma_store("cosine", embeddings=None))
    with pytest.raises(StoreConfigurationError, match="no add_embeddings and no embeddings"):
        add_all(no_model, "default", random_episodes(2))
    other_model = VectorStoreEpisodeStore(
        chroma_store("cosine", HashingEmbeddings(dimensions=64, word_weight=0.1))
    )
    with pytest.raises(StoreConfigurationError, match="other vectors than the memory"):
        add_all(other_model, "default", random_episodes(2))
    assert other_model.count("default") == 0


def test_l2_backend_that_embeds_itself_refuses_non_unit_vectors() -> None:
    class Longer(HashingEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[3 * x for x in v] for v in super().embed_documents(texts)]

    episodes = random_episodes(2)
    model = Longer(dimensions=DIM)
    vectors = np.asarray(model.embed_documents([e.task.description for e in episodes]))
    store = VectorStoreEpisodeStore(chroma_store("l2", model))
    with pytest.raises(StoreConfigurationError, match="unit length"):
        store.add("default", episodes, vectors.astype(np.float32), 0)
    assert store.count("default") == 0
    cosine = VectorStoreEpisodeStore(chroma_store("cosine", model))
    cosine.add("default", episodes, vectors.astype(np.float32), 0)  # cosine: length is harmless
    assert cosine.count("default") == 2


def test_langchain_in_memory_vector_store_is_detected() -> None:
    store = VectorStoreEpisodeStore(InMemoryVectorStore(EMBEDDINGS))
    episodes = random_episodes(30)
    add_all(store, "default", episodes)
    add_all(store, "other", random_episodes(30, seed=3, prefix="o"))
    vector = np.asarray(EMBEDDINGS.embed_query("merge sort"), dtype=np.float32)
    hits = store.search_hits("default", vector, 8, EpisodeFilter(outcome="success"))
    passing = {e.episode_id for e in episodes if e.outcome is OutcomeStatus.SUCCESS}
    assert_exact(hits, exact_cosine(episodes, "merge sort"), passing.__contains__, 8)


def test_empty_store_and_huge_k(backend: VectorStore) -> None:
    store = VectorStoreEpisodeStore(backend)
    vector = np.asarray(EMBEDDINGS.embed_query("login"), dtype=np.float32)
    assert store.search_hits("default", vector, 5) == []
    assert (store.count("default"), store.latest("default", 5, 0)) == (0, [])
    assert list(store.iter_episodes("default")) == []
    episodes = random_episodes(12)
    add_all(store, "default", episodes)
    k = 10**9 if isinstance(backend, FAISS) else 10_000  # FAISS would allocate k results
    hits = store.search_hits("default", vector, k)
    assert sorted(h.episode_id for h in hits) == sorted(e.episode_id for e in episodes)
