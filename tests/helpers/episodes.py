"""Episodes shared by the suites: the 12-task corpus, its queries and the article's recall.

``corpus`` and ``QUERIES`` are the data most tests record and ask about;
``article_recall`` is the article's recall by brute force, the reference that
``EpisodicMemory.recall`` is checked against; ``diverse_corpus`` is ``corpus`` with
descriptions an approximate index cannot confuse.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from functools import cache

from langchain_core.embeddings import Embeddings

from langchain_episodic import Episode, OutcomeStatus, ReplayWeights, TaskCategory
from langchain_episodic.embeddings.background import default_background_texts
from langchain_episodic.scoring.priority import SearchResult, compute_priority, cosine_similarity
from langchain_episodic.scoring.relevance import calibration_for
from tests.unit_tests.factories import make_episode

DAY = 86_400.0

TASKS = [
    ("Implement a login form with email validation", TaskCategory.CODE_GENERATION),
    ("Fix the login bug where sessions expire too early", TaskCategory.DEBUGGING),
    ("Write unit tests for the CSV parser", TaskCategory.TESTING),
    ("Refactor the payment module into smaller services", TaskCategory.REFACTORING),
    ("Implement a signup form with password strength validation", TaskCategory.CODE_GENERATION),
    ("Debug the crash in the login handler on empty passwords", TaskCategory.DEBUGGING),
    ("Design the architecture of the notification service", TaskCategory.ARCHITECTURE),
    ("Add retry logic to the payment API client", TaskCategory.CODE_GENERATION),
    ("Write integration tests for the login flow", TaskCategory.TESTING),
    ("Implement password reset by email", TaskCategory.CODE_GENERATION),
    ("Fix off-by-one error in the CSV parser pagination", TaskCategory.DEBUGGING),
    ("Refactor the login controller to remove duplication", TaskCategory.REFACTORING),
]
OUTCOMES = [OutcomeStatus.SUCCESS, OutcomeStatus.PARTIAL, OutcomeStatus.FAILURE]

QUERIES = [
    "Implement a password reset form",
    "Fix the login session bug",
    "tests for the parser",
    "payment service refactoring",
    "architecture for notifications",
]


def corpus(n: int = len(TASKS), spacing: float = 3600.0) -> list[Episode]:
    return [
        make_episode(
            episode_id=f"ep-{i}",
            description=TASKS[i % len(TASKS)][0] + ("" if i < len(TASKS) else f" (variant {i})"),
            category=TASKS[i % len(TASKS)][1],
            reward=round((i * 37 % 100) / 100, 2),
            outcome=OUTCOMES[i % 3],
            timestamp=i * spacing,
            strategy=["iterative", "defensive", "exploratory"][i % 3],
        )
        for i in range(n)
    ]


def article_recall(
    episodes: Sequence[Episode],
    embeddings: Embeddings,
    query: str,
    top_k: int,
    now: float,
    weights: ReplayWeights | None = None,
    half_life: float = DAY,
) -> list[tuple[str, float]]:
    """The article's EmbeddingStore.search + EpisodicMemory.recall, by brute force."""
    query_vector = embeddings.embed_query(query)
    scored = [
        SearchResult(
            ep, cosine_similarity(query_vector, embeddings.embed_query(ep.task.description))
        )
        for ep in episodes
    ]
    scored.sort(key=lambda r: r.similarity, reverse=True)
    prioritized = [compute_priority(r, now, weights, half_life) for r in scored[: 2 * top_k]]
    ranked = sorted(prioritized, key=lambda p: p.priority, reverse=True)
    return [(p.episode.episode_id, p.priority) for p in ranked[:top_k]]


def relevance_recall(
    episodes: Sequence[Episode],
    embeddings: Embeddings,
    query: str,
    top_k: int,
    now: float,
    floor: float | None = None,
    half_life: float = 30 * DAY,
    fetch_k: int | None = None,
) -> list[tuple[str, float]]:
    """The default relevance-first recall, written out by brute force from its rule.

    ``floor``: the embedder's calibrated floor (``calibration_for``) when ``None``.

    Candidates: the ``fetch_k`` (default ``2 * top_k``) most similar. Background: the
    mean similarity of the query to its 5 nearest packaged background texts, plus the
    embedder's offset. Relevant: similarity >= floor and >= background. Value: (0.3
    recency + 0.2 reward + 0.1 outcome) / 0.6 with recency decaying from 1 to 0.5.
    Priority: similarity * (0.8 + 0.2 * value).
    """
    calibration = calibration_for(embeddings)
    floor = calibration.floor if floor is None else floor
    query_vector = embeddings.embed_query(query)
    background_similarities = sorted(
        (
            cosine_similarity(query_vector, embeddings.embed_query(text))
            for text in default_background_texts()
        ),
        reverse=True,
    )[:5]
    background = sum(background_similarities) / 5 + calibration.offset
    scored = sorted(
        (
            (cosine_similarity(query_vector, embeddings.embed_query(ep.task.description)), ep)
            for ep in episodes
        ),
        key=lambda pair: pair[0],
        reverse=True,
    )[: fetch_k or 2 * top_k]
    outcome_value = {"success": 1.0, "partial": 0.5, "failure": 0.0}
    ranked = []
    for similarity, ep in scored:
        if similarity < floor or similarity < background:
            continue
        recency = 0.5 + 0.5 * 2 ** (-max(0.0, now - ep.timestamp) / half_life)
        value = (
            0.3 * recency + 0.2 * ep.feedback.reward + 0.1 * outcome_value[ep.outcome.value]
        ) / 0.6
        ranked.append((max(0.0, similarity) * (0.8 + 0.2 * value), ep.episode_id))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    return [(episode_id, priority) for priority, episode_id in ranked[:top_k]]


_SYLLABLES = "ka lo mi ne ru sa ti vo ze ba do fu gi ha ju".split()


@cache
def diverse_corpus(n: int) -> tuple[Episode, ...]:
    """``corpus(n)`` with six random made-up words as each task's description.

    ``corpus`` varies a dozen tasks, so hundreds of its episodes are near-duplicates,
    among which Chroma's approximate (HNSW) index may miss an episode's own nearest
    neighbour (measured: 71 of 1,509 self-queries, no crash involved). Here every
    episode is its own query's exact nearest neighbour (measured: 3,000 of 3,000), so
    a recall that misses one means the record is missing from the index.
    """
    words = random.Random(7)
    vocabulary = sorted({"".join(words.choices(_SYLLABLES, k=3)) for _ in range(800)})
    picks = random.Random(11)
    return tuple(
        dataclasses.replace(
            episode,
            task=dataclasses.replace(
                episode.task, description=" ".join(picks.sample(vocabulary, 6))
            ),
        )
        for episode in corpus(n, spacing=1.0)
    )
