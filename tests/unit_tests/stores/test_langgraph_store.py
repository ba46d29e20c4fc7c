"""LangGraphEpisodeStore: what it refuses, how it searches, and its errors.

The behaviour suite (tests/store_suite, kind ``langgraph-memory``) checks what every
store guarantees; this file checks what is particular to a LangGraph store: the
refusals at construction and on the first write, the search by query text checked
against the stored vectors, the exact search without a text, and migration to and
from Chroma.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Op, PutOp, Result, SearchOp
from langgraph.store.memory import InMemoryStore

import langchain_episodic.stores as stores_package
from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodeFilter,
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    OutcomeStatus,
    TaskCategory,
)
from langchain_episodic.errors import MalformedRecordWarning, StoreConfigurationError
from langchain_episodic.migration import migrate_namespace
from langchain_episodic.stores import InMemoryEpisodeStore, LangGraphEpisodeStore
from langchain_episodic.stores.base import JournalEntry
from tests.helpers.episodes import QUERIES, corpus

NOW = 1_000_000.0
EMBEDDINGS = HashingEmbeddings()
DIMS = len(EMBEDDINGS.embed_query("dimension"))
OTHER_MODEL = HashingEmbeddings(char_ngram_min=2, char_ngram_max=2, word_weight=0.2)


def graph_store(embeddings: Embeddings = EMBEDDINGS, **index: Any) -> InMemoryStore:
    return InMemoryStore(index={"dims": DIMS, "embed": embeddings, **index})


def memory_on(store: LangGraphEpisodeStore, **kwargs: Any) -> EpisodicMemory:
    kwargs.setdefault("embeddings", EMBEDDINGS)
    return EpisodicMemory(store=store, clock=lambda: NOW, **kwargs)


class ScaledEmbeddings(Embeddings):
    """The hashing model's vectors, three times as long: same cosines, not unit length."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[3.0 * x for x in v] for v in EMBEDDINGS.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return [3.0 * x for x in EMBEDDINGS.embed_query(text)]


class CountingStore(InMemoryStore):
    """An InMemoryStore that notes the searches it runs."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.searches: list[SearchOp] = []

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.searches.extend(op for op in ops if isinstance(op, SearchOp))
        return super().batch(ops)


class OtherStore(BaseStore):
    """A LangGraph store of unknown kind, with an index and embeddings."""

    def __init__(self, module: str = __name__, **config: Any) -> None:
        self.index_config = {"dims": DIMS, "embed": EMBEDDINGS, **config}
        self.embeddings = EMBEDDINGS
        type(self).__module__ = module

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise NotImplementedError

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        raise NotImplementedError


def other_store(module: str, **config: Any) -> BaseStore:
    cls = type("SomeStore", (OtherStore,), {})
    return cls(module, **config)


# ----------------------------------------------------------------- construction


def test_a_store_without_a_vector_index_or_embeddings_is_refused() -> None:
    with pytest.raises(TypeError, match="LangGraph BaseStore"):
        LangGraphEpisodeStore(InMemoryEpisodeStore())  # type: ignore[arg-type]
    with pytest.raises(StoreConfigurationError, match="no vector index"):
        LangGraphEpisodeStore(InMemoryStore())
    without = other_store(__name__)
    without.embeddings = None  # type: ignore[attr-defined]
    with pytest.raises(StoreConfigurationError, match="no embeddings model"):
        LangGraphEpisodeStore(without, score="cosine_similarity")


def test_the_score_is_detected_named_or_refused() -> None:
    assert "cosine_similarity" in repr(LangGraphEpisodeStore(graph_store()))
    with pytest.raises(StoreConfigurationError, match="pass score="):
        LangGraphEpisodeStore(other_store(__name__))
    assert "'inner_product'" in repr(
        LangGraphEpisodeStore(other_store(__name__), score="inner_product")
    )
    assert "'custom'" in repr(LangGraphEpisodeStore(other_store(__name__), score=lambda s: s))
    with pytest.raises(EpisodicValueError, match="score='dot'"):
        LangGraphEpisodeStore(graph_store(), score="dot")  # type: ignore[arg-type]
    postgres = "langgraph.store.postgres.base"
    for distance, kind in (
        ("cosine", "cosine_similarity"),
        ("l2", "negative_l2"),
        ("inner_product", "inner_product"),
    ):
        store = LangGraphEpisodeStore(other_store(postgres, distance_type=distance))
        assert repr(store).endswith(f"score={kind!r})")
    sqlite = "langgraph.store.sqlite.base"
    assert "cosine_similarity" in repr(LangGraphEpisodeStore(other_store(sqlite)))
    for distance in ("l2", "inner_product"):
        with pytest.raises(StoreConfigurationError, match="wrong order"):
            LangGraphEpisodeStore(other_store(sqlite, distance_type=distance))


@pytest.mark.parametrize("prefix", [(), ("a.b",), ("",), ("langgraph",), "episodes", ("a\x00",)])
def test_a_bad_prefix_or_batch_size_is_named(prefix: Any) -> None:
    with pytest.raises(EpisodicValueError, match="prefix="):
        LangGraphEpisodeStore(graph_store(), prefix=prefix)
    with pytest.raises(EpisodicValueError, match="batch_size=0"):
        LangGraphEpisodeStore(graph_store(), batch_size=0)


def test_the_class_is_exported_lazily() -> None:
    assert stores_package.LangGraphEpisodeStore is LangGraphEpisodeStore
    with pytest.raises(AttributeError, match="Nothing"):
        _ = stores_package.Nothing  # type: ignore[attr-defined]
    # langgraph is optional: the package and its stores import without loading it.
    code = (
        "import sys, langchain_episodic, langchain_episodic.stores\n"
        "print(sorted(m for m in sys.modules if m.startswith('langgraph')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------- first write


def test_an_index_with_another_model_is_refused_on_the_first_write() -> None:
    store = LangGraphEpisodeStore(graph_store(OTHER_MODEL))
    memory = memory_on(store)
    with pytest.raises(StoreConfigurationError, match="other vectors than the memory's"):
        memory.record_many(corpus(3))
    assert len(memory) == 0
    assert store.get("default", ["ep-0"]) == {}


def test_a_score_that_needs_unit_vectors_refuses_a_model_without_them() -> None:
    scaled = ScaledEmbeddings()
    store = LangGraphEpisodeStore(graph_store(scaled), score="inner_product")
    with pytest.raises(StoreConfigurationError, match="length 3"):
        memory_on(store, embeddings=scaled).record_many(corpus(2))
    # Cosine scores do not care: the same model is fine, and similarities are cosine.
    cosine = memory_on(LangGraphEpisodeStore(graph_store(scaled)), embeddings=scaled)
    cosine.record_many(corpus(2))
    [hit] = cosine.recall(corpus(2)[1].task.description, top_k=1, ranking="article")
    assert hit.similarity == pytest.approx(1.0, abs=1e-6)


# ------------------------------------------------------------------------ search


def test_recall_searches_the_index_with_the_text_and_reports_exact_cosine() -> None:
    backend = CountingStore(index={"dims": DIMS, "embed": EMBEDDINGS})
    ours = memory_on(LangGraphEpisodeStore(backend))
    reference = memory_on(InMemoryEpisodeStore())
    episodes = corpus(36)
    ours.record_many(episodes)
    reference.record_many(episodes)
    for query in QUERIES:
        backend.searches.clear()
        got = ours.recall(query, top_k=5, current_time=NOW, ranking="article")
        assert [op.query for op in backend.searches] == [query]
        expected = reference.recall(query, top_k=5, current_time=NOW, ranking="article")
        assert [r.episode for r in got] == [r.episode for r in expected]
        for mine, theirs in zip(got, expected, strict=True):
            assert mine.similarity == pytest.approx(theirs.similarity, abs=1e-6)


def test_a_search_without_text_is_exact_and_equals_the_indexed_one() -> None:
    store = LangGraphEpisodeStore(graph_store())
    episodes = corpus(36)
    memory_on(store).record_many(episodes)
    filters = [
        None,
        EpisodeFilter(outcome="success"),  # one value: the backend's filter
        EpisodeFilter(category=TaskCategory.DEBUGGING, outcome=[OutcomeStatus.SUCCESS, "partial"]),
        EpisodeFilter(strategy_used="nobody uses this"),
    ]
    for query in QUERIES:
        vector = np.asarray(EMBEDDINGS.embed_query(query), dtype=np.float32)
        for only in filters:
            for k in (1, 4, 100):
                indexed = store.search_hits("default", vector, k, only, query_text=query)
                scanned = store.search_hits("default", vector, k, only)
                assert [h.episode_id for h in indexed] == [h.episode_id for h in scanned]
                kept = [
                    e
                    for e in episodes
                    if only is None or only.matches(e.task.category, e.outcome, e.strategy_used)
                ]
                assert len(indexed) == min(k, len(kept))
                sims = [h.similarity for h in indexed]
                assert sims == sorted(sims, reverse=True)


def test_an_index_that_embeds_queries_with_another_model_is_refused_on_search() -> None:
    store = LangGraphEpisodeStore(graph_store())
    memory_on(store).record_many(corpus(6))
    other = np.asarray(OTHER_MODEL.embed_query(QUERIES[0]), dtype=np.float32)
    with pytest.raises(StoreConfigurationError, match="another model"):
        store.search_hits("default", other, 3, query_text=QUERIES[0])
    with pytest.raises(EpisodicValueError, match="dimensions"):
        store.search_hits("default", np.ones(DIMS // 2, dtype=np.float32), 3)
    with pytest.raises(EpisodicValueError, match="k=0"):
        store.search_hits("default", other, 0)
    assert store.search_hits("empty", other, 3) == []
    assert store.search_hits("empty", other, 3, query_text=QUERIES[0]) == []


def test_a_record_without_a_readable_vector_is_skipped_with_a_warning() -> None:
    backend = graph_store()
    store = LangGraphEpisodeStore(backend)
    memory_on(store).record_many(corpus(3))
    [item] = backend.search(("langchain_episodic", "episodes"), filter={"seq": 1})
    backend.put(item.namespace, item.key, {**item.value, "vector": "not base64!"}, index=["text"])
    vector = np.asarray(EMBEDDINGS.embed_query(QUERIES[0]), dtype=np.float32)
    with pytest.warns(MalformedRecordWarning, match="no readable vector"):
        hits = store.search_hits("default", vector, 10)
    assert len(hits) == 2
    backend.delete(item.namespace, item.key)
    with pytest.warns(MalformedRecordWarning, match="not found in the store"):
        assert len(list(store.iter_episodes("default"))) == 2


# ------------------------------------------------------------- layout and state


def test_unicode_namespaces_never_meet_and_keep_their_own_ledger() -> None:
    backend = graph_store()
    store = LangGraphEpisodeStore(backend)
    names = ["a.b", "a/b", "🙂 ü", "langgraph", "a"]
    for index, name in enumerate(names):
        memory_on(store, namespace=name).record_many(corpus(index + 1))
        store.append_journal(name, [JournalEntry(f"e-{index}", f"run/{index}", name)])
    reopened = LangGraphEpisodeStore(backend)
    assert set(names) <= set(reopened.namespaces())
    vector = np.asarray(EMBEDDINGS.embed_query(QUERIES[0]), dtype=np.float32)
    for index, name in enumerate(names):
        assert reopened.count(name) == index + 1
        hits = reopened.search_hits(name, vector, 100, query_text=QUERIES[0])
        assert len(hits) == index + 1
        assert [e.episode_id for e in reopened.iter_episodes(name, page_size=2)] == [
            e.episode_id for e in corpus(index + 1)
        ]
        assert reopened.read_journal(name) == [JournalEntry(f"e-{index}", f"run/{index}", name)]
        assert reopened.read_journal(name, f"run/{index}") == reopened.read_journal(name)
        assert reopened.read_journal(name, "other run") == []
    # Everything lives under the prefix; nothing else in the LangGraph store is touched.
    assert all(ns[0] == "langchain_episodic" for ns in backend.list_namespaces())
    mine = LangGraphEpisodeStore(backend, prefix=["app", "memories"])
    assert mine.namespaces() == ()
    assert mine.count("a") == 0


def test_ids_stored_since_the_memorys_check_are_not_written_twice() -> None:
    backend = graph_store()
    first, second = LangGraphEpisodeStore(backend), LangGraphEpisodeStore(backend)
    episodes = corpus(4)
    vectors = np.asarray(
        EMBEDDINGS.embed_documents([e.task.description for e in episodes]), dtype=np.float32
    )
    first.add("default", episodes[:3], vectors[:3], first_seq=0)
    second.add("default", episodes, vectors, first_seq=0)  # as if both found them missing
    assert second.count("default") == 4
    assert [e.episode_id for e in first.iter_episodes("default")] == [
        e.episode_id for e in episodes
    ]
    assert len(backend.search(("langchain_episodic", "episodes"), limit=100)) == 4


def test_puts_carry_no_ttl_and_index_only_the_text() -> None:
    seen: list[PutOp] = []

    class Spy(InMemoryStore):
        def batch(self, ops: Iterable[Op]) -> list[Result]:
            ops = list(ops)
            seen.extend(op for op in ops if isinstance(op, PutOp))
            return super().batch(ops)

    memory_on(LangGraphEpisodeStore(Spy(index={"dims": DIMS, "embed": EMBEDDINGS}))).record_many(
        corpus(2)
    )
    episodes = [op for op in seen if "episodes" in op.namespace]
    assert [op.index for op in episodes] == [["text"], ["text"]]
    assert all(op.index is False for op in seen if "ledger" in op.namespace)
    assert all(op.ttl is None for op in seen)


# --------------------------------------------------------------------- migration


def test_a_namespace_travels_to_chroma_and_back(tmp_path: Path) -> None:
    source = memory_on(LangGraphEpisodeStore(graph_store()), namespace="agent")
    episodes = corpus(300, spacing=1.0)
    source.record_many(episodes[150:])
    source.record_many(episodes[:150])
    source.quarantine.add(["ep-7", "ep-8"], "bad tool run", by="ops")
    source.quarantine.release("ep-8", "fine after all", by="ops")
    recorded = list(source.episodes())
    with warnings.catch_warnings():
        warnings.simplefilter("error", MalformedRecordWarning)
        chroma = memory_on(ChromaEpisodeStore(path=tmp_path / "chroma"), namespace="agent")
        assert migrate_namespace(source, chroma, batch_size=120).copied == 300
        back = memory_on(LangGraphEpisodeStore(graph_store()), namespace="agent")
        assert migrate_namespace(chroma, back, batch_size=70).copied == 300
    for copy in (chroma, back):
        assert list(copy.episodes()) == recorded
        assert copy.short_term == source.short_term
        assert copy.quarantine.log() == source.quarantine.log()
        assert set(copy.quarantine.list()) == {"ep-7"}
    for query in QUERIES:
        assert back.recall(query, top_k=3, current_time=NOW) == source.recall(
            query, top_k=3, current_time=NOW
        )


def test_records_a_killed_writer_wrote_but_never_committed_are_written_again() -> None:
    backend = graph_store()
    dying = LangGraphEpisodeStore(backend)
    episodes = corpus(12)
    memory_on(dying).record_many(episodes[:4])

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the process dies between the items and the ledger

    dying._ledger.appended = killed  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        memory_on(dying).record_many(episodes[4:8])
    # The items are there, the ledger never committed them: they are not stored yet.
    fresh = LangGraphEpisodeStore(backend)
    assert len(memory_on(fresh)) == 4
    assert fresh.get("default", [e.episode_id for e in episodes[4:8]]) == {}
    # The next writer writes them again, in its own order, and commits them.
    assert memory_on(fresh).record_many(episodes[4:12]) == 8
    again = memory_on(LangGraphEpisodeStore(backend))
    assert len(again) == 12
    assert [e.episode_id for e in again.episodes()] == [e.episode_id for e in episodes]
