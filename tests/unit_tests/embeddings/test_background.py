"""The calibrated relevance test: a stored episode must beat the task's everyday background."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_episodic import (
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    RecallOptions,
    StaticEmbeddings,
    TaskDescription,
    build_replay,
)
from langchain_episodic.embeddings.background import background_vectors, default_background_texts
from langchain_episodic.scoring.relevance import background_similarity, relevance_threshold
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import make_episode

NOW = 1_800_000_000.0

QUICKSTART = (
    "Implement a login form with email validation",
    "Implement a signup form with password strength validation",
    "Debug the crash in the login handler on empty passwords",
    "Implement password reset by email",
)


def remembering(*tasks: str, **settings: object) -> EpisodicMemory:
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(),
        clock=lambda: NOW,
        **settings,  # type: ignore[arg-type]
    )
    memory.record_many(
        [
            make_episode(episode_id=f"e{i}", description=t, timestamp=NOW)
            for i, t in enumerate(tasks)
        ]
    )
    return memory


def recalled(memory: EpisodicMemory, query: str, k: int = 3) -> list[str]:
    return [r.episode.task.description for r in memory.recall(query, top_k=k)]


def test_on_topic_neighbours_stay_where_a_margin_dropped_them() -> None:
    # The two examples: the login form (0.62 against the best 0.82) carries
    # the lesson "empty password accepted"; the redirect bug is about login too.
    memory = remembering(*QUICKSTART)
    found = recalled(memory, "Implement a password change form with validation")
    assert len(found) == 3
    assert "Implement a login form with email validation" in found
    login = remembering("build login page", "fix login redirect bug", "test login api")
    assert sorted(recalled(login, "login")) == [
        "build login page",
        "fix login redirect bug",
        "test login api",
    ]


def test_an_off_topic_task_that_shares_a_word_is_turned_away_with_the_reason() -> None:
    stored = "Scheduled reports run an hour late after the daylight saving time change"
    memory = remembering(stored, *QUICKSTART)
    report = memory.recall(
        "Schedule a dentist appointment next week",
        options=RecallOptions(current_time=NOW),
        explain=True,
    )
    assert report.results == ()
    nearest = report.nearest_rejected
    assert nearest is not None
    assert nearest.task == stored
    assert report.background is not None
    assert nearest.similarity > memory.calibration.floor  # the floor alone would let it in
    assert nearest.reason == (
        f"similarity {nearest.similarity:.2f} is below the task's background "
        f"{report.background:.2f} (its nearest everyday texts)"
    )
    assert report.threshold == pytest.approx(
        relevance_threshold(memory.calibration.floor, background=report.background)
    )
    # Without a background only the floor decides, and the look-alike comes back.
    bare = remembering(stored, *QUICKSTART, background=())
    assert bare.background == ()
    assert stored in recalled(bare, "Schedule a dentist appointment next week")


def test_the_background_is_the_tasks_mean_similarity_to_its_five_nearest_texts() -> None:
    memory = remembering(*QUICKSTART)
    query = "Plan a seating chart for a wedding of 120 guests"
    report = memory.recall(query, options=RecallOptions(current_time=NOW), explain=True)
    embeddings = StaticEmbeddings()
    texts = np.asarray(embeddings.embed_documents(list(default_background_texts())))
    texts /= np.linalg.norm(texts, axis=1, keepdims=True)
    vector = np.asarray(embeddings.embed_query(query))
    nearest = np.sort(texts @ (vector / np.linalg.norm(vector)))[-5:]
    assert report.background == pytest.approx(nearest.mean() + memory.calibration.offset, 1e-5)
    assert report.results == ()


def test_a_users_own_background_says_what_the_agent_is_not_about() -> None:
    # A background that holds the task itself: no stored episode is nearer to it.
    query = "Add a login page"
    assert len(remembering(*QUICKSTART).recall(query)) >= 1
    memory = remembering(*QUICKSTART, background=[query, query + ".", query + "!"])
    assert memory.background == (query, query + ".", query + "!")
    report = memory.recall(query, options=RecallOptions(current_time=NOW), explain=True)
    assert report.results == ()
    assert report.background is not None
    assert report.background > 0.9
    assert all(r.similarity < report.background for r in report.rejected)


def test_strategy_evidence_and_lessons_use_the_same_bar() -> None:
    stored = "Scheduled reports run an hour late after the daylight saving time change"
    memory = remembering(stored, stored + " again", stored + " twice")
    report = memory.replay.report(
        "Schedule a dentist appointment next week",
        RecallOptions(current_time=NOW),
        evidence_k=5,
    )
    assert report.neighbours == ()
    replay = build_replay(
        memory, TaskDescription("Schedule a dentist appointment next week"), include_strategy=True
    )
    assert replay.results == ()
    assert replay.strategy is not None
    assert replay.strategy.reason == "complexity"


class CountingEmbeddings(Embeddings):
    """HashingEmbeddings that count the texts they embed per call."""

    def __init__(self, calls: list[int]) -> None:
        self.calls = calls
        self.inner = HashingEmbeddings()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls.append(1)
        return self.inner.embed_query(text)


def test_the_background_is_embedded_once_per_model_and_only_when_recall_needs_it() -> None:
    calls: list[int] = []
    texts = ["Bake bread with a long cold proof", "Book a train to Milan", "Water the ferns"]
    first = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=CountingEmbeddings(calls), background=texts
    )
    assert calls == [1]  # the fingerprint probe on open
    first.recall("anything")  # an empty memory: no candidates, no background needed
    assert calls == [1, 1]
    first.record(make_episode())
    first.recall("Implement login form")
    first.recall("Implement a login form")
    assert calls == [1, 1, 1, 1, 3, 1]  # probe, query, record, query + background once, query
    second = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=CountingEmbeddings(calls), background=texts
    )
    second.record(make_episode())
    second.recall("Implement login form")
    assert calls[6:] == [1, 1, 1]  # probe, record, query: the background is shared


@pytest.mark.parametrize(
    ("background", "error", "named"),
    [
        ("Bake bread", TypeError, "background='Bake bread'"),
        (["Bake bread", "  "], EpisodicValueError, r"background\[1\]='  '"),
        (["Bake bread", 7], TypeError, r"background\[1\]=7"),
        (42, TypeError, "background=42"),
    ],
)
def test_a_bad_background_is_refused_before_anything_is_opened(
    background: object, error: type[Exception], named: str
) -> None:
    store = InMemoryEpisodeStore()
    with pytest.raises(error, match=named):
        EpisodicMemory(store=store, background=background)  # type: ignore[arg-type]
    assert not store.namespaces()


def test_background_similarity_averages_the_nearest_and_handles_few_texts() -> None:
    background = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    assert background_similarity(np.array([3.0, 0.0]), background, top=1) == pytest.approx(1.0)
    assert background_similarity(np.array([3.0, 0.0]), background, top=5) == pytest.approx(
        (1.0 + 0.0 + 0.6) / 3
    )
    assert background_similarity(np.array([1.0, 0.0]), background[:0]) == -1.0


def test_background_vectors_refuse_a_model_with_unusable_vectors() -> None:
    class Zero(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[0.0, 0.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [0.0, 0.0]

    with pytest.raises(ValueError, match="unusable vectors for the 2 background texts"):
        background_vectors(Zero(), ["a", "b"])
