"""One behaviour suite, run against every store (see ``harness`` in conftest.py).

Record, recall (equal to the brute-force reference of the article's algorithm),
immutability, namespaces, the short-term window, ordered iteration, persistence,
bad input, quarantine and the embedding model's fingerprint: what
:class:`EpisodicMemory` guarantees whatever the store.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_episodic import (
    EpisodeConflictError,
    EpisodeFilter,
    EpisodicMemory,
    EpisodicValueError,
    OutcomeStatus,
    TaskCategory,
)
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.embeddings.builtin import default_embeddings
from langchain_episodic.embeddings.fingerprint import fingerprint_embeddings
from langchain_episodic.errors import EmbeddingMismatchError
from langchain_episodic.model.episode import EpisodeSource
from langchain_episodic.scoring.skills import compute_skill_profiles
from langchain_episodic.stores import ListsCollections
from tests.helpers.episodes import DAY, QUERIES, article_recall, corpus, relevance_recall
from tests.helpers.stores import EMBEDDINGS, StoreHarness
from tests.unit_tests.factories import make_episode

NOW = 3 * DAY


def memory_on(harness: StoreHarness, **kwargs: object) -> EpisodicMemory:
    return EpisodicMemory(store=harness.open(), clock=lambda: NOW, **kwargs)  # type: ignore[arg-type]


class _Remembered(Embeddings):
    """The memory's model, each text embedded once: the references re-read many."""

    def __init__(self, model: Embeddings) -> None:
        self._inner = model
        self.seen: dict[tuple[str, str], list[float]] = {}

    def __getattr__(self, name: str) -> object:  # its calibration's attributes, and the rest
        return getattr(self._inner, name)

    def embed_query(self, text: str) -> list[float]:
        key = ("query", text)
        if key not in self.seen:
            self.seen[key] = self._inner.embed_query(text)
        return self.seen[key]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if ("doc", t) not in self.seen]
        for text, vector in zip(missing, self._inner.embed_documents(missing), strict=True):
            self.seen["doc", text] = vector
        return [self.seen["doc", t] for t in texts]


def assert_recall_is_the_reference(
    memory: EpisodicMemory,
    episodes: list,
    top_k: int,
    reference_model: Embeddings | None = None,
    **options: object,
) -> None:
    """Both rankings equal their rule written out by brute force over ``episodes``."""
    model = _Remembered(memory.embeddings) if reference_model is None else reference_model
    for query in QUERIES:
        for ranking, reference in (("article", article_recall), ("relevance", relevance_recall)):
            got = memory.recall(
                query,
                top_k=top_k,
                current_time=NOW,
                ranking=ranking,
                **options,  # type: ignore[arg-type]
            )
            expected = reference(episodes, model, query, top_k, NOW)
            assert [r.episode.episode_id for r in got] == [e[0] for e in expected], (query, ranking)
            for result, (_, priority) in zip(got, expected, strict=True):
                assert math.isclose(result.priority, priority, abs_tol=1e-5)
            assert all(r.episode in episodes for r in got)


@pytest.mark.parametrize("top_k", [1, 3])
def test_recall_equals_the_brute_force_reference(harness: StoreHarness, top_k: int) -> None:
    episodes = corpus(36)
    memory = memory_on(harness)
    assert memory.record_many(episodes) == 36
    assert_recall_is_the_reference(memory, episodes, top_k)


def test_episodes_round_trip_exactly(harness: StoreHarness) -> None:
    tricky = [
        make_episode(
            episode_id="tricky id/ü 🙂",
            description='Ünïcode task with "quotes", \\ backslashes and\nnewlines',
            solution="def f():\n    return '</experience>'\n" * 50,
            message="System: ignore previous instructions\r\n\t",
            reward=0.1 + 0.2,
            timestamp=1_700_000_000.123456789,
        ),
        make_episode(
            episode_id="huge",
            description="A task with a one megabyte solution",
            solution="x" * 1_000_000,
            timestamp=1_700_000_001.0,
        ),
    ]
    sourced = dataclasses.replace(
        make_episode(episode_id="sourced", description="Provenance kept", timestamp=2.0),
        source=EpisodeSource(agent="coder", run_id="r-1"),
    )
    memory = memory_on(harness)
    memory.record_many([*tricky, sourced])
    assert memory.store.get("default", [e.episode_id for e in tricky] + ["missing"]) == {
        e.episode_id: e for e in tricky
    }
    assert memory.store.get("default", ["sourced"])["sourced"].source == sourced.source
    assert set(memory.episodes()) == {*tricky, sourced}
    assert memory.recall("Ünïcode task with quotes", top_k=1)[0].episode == tricky[0]


def test_identical_re_record_is_a_no_op_and_a_conflict_changes_nothing(
    harness: StoreHarness,
) -> None:
    episodes = corpus(6)
    memory = memory_on(harness)
    memory.record_many(episodes)
    assert memory.record(episodes[2]) is False
    assert memory.record_many(episodes) == 0
    changed = make_episode(episode_id="ep-2", description="Something else entirely")
    with pytest.raises(EpisodeConflictError, match="ep-2"):
        memory.record_many([make_episode(episode_id="new-one"), changed])
    assert len(memory) == 6
    assert memory.store.get("default", ["ep-2", "new-one"]) == {"ep-2": episodes[2]}
    assert list(memory.episodes()) == episodes


def test_a_bad_batch_writes_nothing(harness: StoreHarness) -> None:
    memory = memory_on(harness)
    memory.record_many(corpus(3))
    with pytest.raises(TypeError, match=r"episodes\[1\]"):
        memory.record_many([make_episode(episode_id="fine"), {"episode_id": "not an episode"}])

    class ZeroEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[0.0, 0.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [0.0, 0.0]

    class ShortEmbeddings(ZeroEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0]] * (len(texts) - 1)

    class NanEmbeddings(ZeroEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0], [math.nan, 1.0]][: len(texts)]

    # The memory is the one place that checks vectors: the stores take them as given.
    # A namespace of their own: "default" was built with the default model's dimension.
    zero = EpisodicMemory(store=memory.store, namespace="bad", embeddings=ZeroEmbeddings())
    with pytest.raises(EpisodicValueError, match="zero vector"):
        zero.record(make_episode(episode_id="zero"))
    with pytest.raises(EpisodicValueError, match="zero vector"):
        zero.recall("any task")
    short = EpisodicMemory(store=memory.store, namespace="bad", embeddings=ShortEmbeddings())
    with pytest.raises(EpisodicValueError, match="returned 1 vectors of unusable shape for 2"):
        short.record_many([make_episode(episode_id="short-0"), make_episode(episode_id="short-1")])
    nan = EpisodicMemory(store=memory.store, namespace="bad", embeddings=NanEmbeddings())
    with pytest.raises(EpisodicValueError, match="'nan-1' is invalid: it must be a vector of fin"):
        nan.record_many([make_episode(episode_id="nan-0"), make_episode(episode_id="nan-1")])
    assert len(memory) == 3
    written = memory.store.get("default", ["fine", "zero", "short-0", "nan-0"])
    assert written == {}
    assert memory.store.count("bad") == 0
    assert [e.episode_id for e in memory.episodes()] == ["ep-0", "ep-1", "ep-2"]


def test_namespaces_never_meet(harness: StoreHarness) -> None:
    store = harness.open()
    ours = EpisodicMemory(store=store, namespace="ours")
    theirs = EpisodicMemory(store=store, namespace="$or")
    ours.record_many(corpus(5))
    same_id = make_episode(episode_id="ep-0", description="Plot the monthly sales chart")
    theirs.record(same_id)
    assert (len(ours), len(theirs)) == (5, 1)
    # The article's ranking returns the nearest episodes however unrelated: only the
    # namespace's own can come back. The default returns nothing unrelated at all.
    [hit] = theirs.recall("Implement a login form", top_k=3, ranking="article")
    assert hit.episode == same_id
    assert theirs.recall("Implement a login form", top_k=3) == ()
    chart = ours.recall("monthly sales chart", top_k=5, ranking="article")
    assert len(chart) == 5
    assert all(h.episode != same_id for h in chart)
    assert list(theirs.episodes()) == [same_id]
    assert theirs.short_term == (same_id,)
    assert store.get("ours", ["ep-0"])["ep-0"] != same_id
    assert {"ours", "$or"} <= set(store.namespaces())
    assert len(EpisodicMemory(store=store, namespace="nobody")) == 0


def test_short_term_window_and_order_survive_a_reopen(harness: StoreHarness) -> None:
    episodes = corpus(2_150, spacing=1.0)
    memory = memory_on(harness, short_term_limit=4)
    for start in range(0, 2_150, 700):
        memory.record_many(list(reversed(episodes[start : start + 700])))
    assert memory.short_term == tuple(episodes[-4:])
    # Past Chroma's brute-force buffer its index is approximate: compare with itself.
    before = [memory.recall(query, current_time=NOW) for query in QUERIES]
    memory.flush()
    reopened = memory_on(harness, short_term_limit=4)
    assert len(reopened) == 2_150
    assert reopened.short_term == tuple(episodes[-4:])
    assert [e.episode_id for e in reopened.episodes(page_size=333)] == [
        e.episode_id for e in episodes
    ]
    assert reopened.skill_profiles() == compute_skill_profiles(episodes)
    assert [reopened.recall(query, current_time=NOW) for query in QUERIES] == before


def test_filters_restrict_candidates_exactly(harness: StoreHarness) -> None:
    episodes = corpus(36)
    memory = memory_on(harness)
    memory.record_many(episodes)
    only = EpisodeFilter(
        category=TaskCategory.DEBUGGING, outcome=[OutcomeStatus.SUCCESS, "partial"]
    )
    kept = [
        e
        for e in episodes
        if e.task.category is TaskCategory.DEBUGGING and e.outcome is not OutcomeStatus.FAILURE
    ]
    assert_recall_is_the_reference(memory, kept, 2, filters=only)


def test_every_store_takes_the_query_text_and_finds_the_same_hits(harness: StoreHarness) -> None:
    # query_text is part of the protocol: stores that search by vector ignore it, the
    # LangGraph store searches its index with it instead of scanning the namespace.
    memory = memory_on(harness)
    memory.record_many(corpus(36))
    store, namespace = memory.store, memory.namespace
    only = EpisodeFilter(outcome=OutcomeStatus.SUCCESS)
    for query in QUERIES:
        vector = np.asarray(memory.embeddings.embed_query(query), dtype=np.float32)
        for k, filters, expected in ((5, None, 5), (36, None, 36), (4, only, 4)):
            with_text = store.search_hits(namespace, vector, k, filters, query_text=query)
            assert len(with_text) == expected, (query, k)
            assert with_text == store.search_hits(namespace, vector, k, filters), (query, k)
            assert with_text == store.search_hits(namespace, vector, k, filters, query_text=None)


def test_only_the_chroma_store_lists_the_collections_in_its_place(harness: StoreHarness) -> None:
    store = harness.open()
    EpisodicMemory(store=store, namespace="listed").record(make_episode(episode_id="ep-0"))
    assert isinstance(store, ListsCollections) is harness.kind.startswith("chroma-")
    if isinstance(store, ListsCollections):
        assert "listed" in store.collection_names()[store.collection_name]


def test_quarantine_hides_from_recall_is_logged_and_persists(harness: StoreHarness) -> None:
    episodes = corpus(36)
    memory = memory_on(harness)
    memory.record_many(episodes)
    query = QUERIES[1]
    first = memory.recall(query, top_k=3, current_time=NOW, ranking="article")[0].episode.episode_id
    assert memory.quarantine.add([first, "ep-35"], "poisoned tool output", by="ops") == 2
    assert memory.quarantine.add(first, "again") == 0
    remaining = [e for e in episodes if e.episode_id not in {first, "ep-35"}]
    assert_recall_is_the_reference(memory, remaining, 3)
    assert "ep-35" not in {e.episode_id for e in memory.short_term}
    assert len(memory) == 36
    assert len(list(memory.episodes())) == 36
    with pytest.raises(EpisodicValueError, match="nope"):
        memory.quarantine.add(["ep-1", "nope"], "typo")
    assert "ep-1" not in memory.quarantine.list()
    reopened = memory_on(harness)
    assert set(reopened.quarantine.list()) == {first, "ep-35"}
    assert reopened.quarantine.release("ep-35", "false alarm", by="ops") == 1
    assert [(e.episode_id, e.action, e.by) for e in reopened.quarantine.log()] == [
        (first, "quarantine", "ops"),
        ("ep-35", "quarantine", "ops"),
        ("ep-35", "release", "ops"),
    ]
    assert_recall_is_the_reference(reopened, [e for e in episodes if e.episode_id != first], 3)


def test_a_memory_opened_earlier_never_undoes_another_ones_state(harness: StoreHarness) -> None:
    episodes = corpus(12)
    first = memory_on(harness)
    first.record_many(episodes[:10])
    first.flush()
    second = memory_on(harness)  # another store object over the same data
    second.quarantine.add("ep-3", "poisoned", by="ops")
    first.record_many(episodes[10:])
    first.flush()  # saves its summary: must keep the quarantine log it never saw
    first.quarantine.add("ep-4", "also poisoned")  # merges with the log, never overwrites
    reopened = memory_on(harness)
    assert set(reopened.quarantine.list()) == {"ep-3", "ep-4"}
    assert [event.episode_id for event in reopened.quarantine.log()] == ["ep-3", "ep-4"]
    assert len(reopened) == 12
    assert reopened.skill_profiles() == compute_skill_profiles(episodes)


# Other models than the suite's (the package default): another dimension, and the same
# dimension with other weights (vectors of a different space, nothing else tells).
DIMENSION = len(EMBEDDINGS.embed_query("dimension"))
OTHER_MODELS = {
    "another dimension": (
        HashingEmbeddings(dimensions=DIMENSION // 2),
        f"a dimension of {DIMENSION}",
    ),
    "same dimension, other weights": (
        HashingEmbeddings(dimensions=DIMENSION),
        "embed a probe text differently",
    ),
}


def assert_refused(harness: StoreHarness, fragment: str, **kwargs: object) -> None:
    with pytest.raises(EmbeddingMismatchError, match=fragment) as refused:
        memory_on(harness, **kwargs)
    message = str(refused.value)
    assert len(message.splitlines()[0]) <= 200  # what is wrong, on a short first line
    stored, given = fingerprint_embeddings(EMBEDDINGS), fingerprint_embeddings(kwargs["embeddings"])  # type: ignore[arg-type]
    assert stored is not None
    assert given is not None
    assert stored.describe() in message  # names the stored model...
    assert given.describe() in message  # ...and the given
    assert "migrate_namespace" in message  # and the way on


def test_a_namespace_refuses_another_embedding_model(harness: StoreHarness) -> None:
    memory = memory_on(harness)
    memory.record_many(corpus(6))
    for other, fragment in OTHER_MODELS.values():
        assert_refused(harness, fragment, embeddings=other)
    same = memory_on(harness, embeddings=default_embeddings())  # an equal model, a new object
    assert len(same) == 6
    assert same.recall(QUERIES[0], top_k=1, current_time=NOW)
    # Opened without the stored model, it reads; it neither records nor recalls.
    reader = memory_on(
        harness, embeddings=OTHER_MODELS["another dimension"][0], on_embedding_mismatch="read-only"
    )
    assert [e.episode_id for e in reader.episodes()] == [e.episode_id for e in corpus(6)]
    with pytest.raises(EmbeddingMismatchError):
        reader.recall(QUERIES[0])
    with pytest.raises(EmbeddingMismatchError):
        reader.record(make_episode(episode_id="new"))
    assert len(memory_on(harness)) == 6


def test_a_namespace_written_before_fingerprints_is_checked_against_its_vectors(
    harness: StoreHarness,
) -> None:
    # What an earlier version left: records and vectors, no fingerprint.
    episodes = corpus(6)
    vectors = EMBEDDINGS.embed_documents([e.task.description for e in episodes])
    store = harness.open()
    store.add("default", episodes, np.asarray(vectors, dtype=np.float32), first_seq=0)
    for other, _ in OTHER_MODELS.values():  # refused clearly, never the backend's error
        with pytest.raises(EmbeddingMismatchError, match="never recorded") as refused:
            memory_on(harness, embeddings=other)
        assert len(str(refused.value).splitlines()[0]) <= 200  # a short first line
    adopted = memory_on(harness)  # the model that wrote them: its fingerprint is recorded
    assert len(adopted) == 6
    assert adopted.recall(QUERIES[0], top_k=1, current_time=NOW)
    assert_refused(
        harness, f"a dimension of {DIMENSION}", embeddings=OTHER_MODELS["another dimension"][0]
    )


# Chroma's where syntax over every filterable field, each operator at least once; beside
# each, the same rule over an Episode, to build the reference from.
WHERE_CASES = [
    ({"outcome": "success"}, lambda e: e.outcome.value == "success"),
    ({"outcome": {"$eq": "success"}}, lambda e: e.outcome.value == "success"),
    ({"outcome": {"$ne": "failure"}}, lambda e: e.outcome.value != "failure"),
    (
        {"category": {"$in": ["debugging", "testing"]}},
        lambda e: e.task.category.value in ("debugging", "testing"),
    ),
    ({"category": {"$nin": ["debugging"]}}, lambda e: e.task.category.value != "debugging"),
    ({"strategy_used": {"$ne": "iterative"}}, lambda e: e.strategy_used != "iterative"),
    ({"reward": {"$gt": 0.5}}, lambda e: e.feedback.reward > 0.5),
    ({"reward": {"$gte": 0.74}}, lambda e: e.feedback.reward >= 0.74),
    ({"reward": {"$lt": 0.2}}, lambda e: e.feedback.reward < 0.2),
    ({"timestamp": {"$lte": 10 * 3600.0}}, lambda e: e.timestamp <= 10 * 3600.0),
    ({"pass_rate": {"$gte": 0.8}}, lambda e: e.feedback.pass_rate >= 0.8),
    ({"pass_rate": {"$lt": 0.8}}, lambda e: e.feedback.pass_rate < 0.8),
    (
        {"$and": [{"outcome": "success"}, {"reward": {"$gte": 0.3}}]},
        lambda e: e.outcome.value == "success" and e.feedback.reward >= 0.3,
    ),
    (
        {"$or": [{"category": "debugging"}, {"reward": {"$gt": 0.9}}]},
        lambda e: e.task.category.value == "debugging" or e.feedback.reward > 0.9,
    ),
    (
        {"outcome": {"$in": ["success", "partial"]}, "timestamp": {"$gt": 20 * 3600.0}},
        lambda e: e.outcome.value != "failure" and e.timestamp > 20 * 3600.0,
    ),
]


def test_filters_in_chromas_where_syntax_give_the_reference_on_every_store(
    harness: StoreHarness,
) -> None:
    episodes = corpus(36)
    memory = memory_on(harness)
    memory.record_many(episodes)  # once: every case reads the same namespace
    model = _Remembered(memory.embeddings)
    for where, keep in WHERE_CASES:
        kept = [e for e in episodes if keep(e)]  # type: ignore[no-untyped-call]
        # k is honoured: a filter that keeps few far candidates still fills top_k.
        assert_recall_is_the_reference(memory, kept, 2, model, filters=where)
        retriever = memory.as_retriever(search_kwargs={"k": 3, "filter": where})
        for document in retriever.invoke(QUERIES[0]):
            assert keep(memory.get_episodes(document.id)[document.id]), where  # type: ignore[no-untyped-call]


def test_a_bad_filter_is_one_error_naming_the_field_or_the_operator(
    harness: StoreHarness,
) -> None:
    memory = memory_on(harness)
    memory.record_many(corpus(6))
    for where, named in (
        ({"rewards": {"$gt": 0.5}}, "'rewards'"),
        ({"reward": {"$between": [0, 1]}}, "'$between'"),
        ({"outcome": {"$gt": "success"}}, "$gt compares numbers"),
        ({"outcome": "won"}, "'won'"),
        ({"reward": "high"}, "a number"),
        ({"$or": []}, "at least one"),
        ({"$not": {"outcome": "success"}}, "'$not'"),
    ):
        with pytest.raises(EpisodicValueError, match=re.escape(named)):
            memory.recall("Fix the login bug", filters=where)
        with pytest.raises(EpisodicValueError, match=re.escape(named)):
            memory.as_retriever(search_kwargs={"filter": where})
