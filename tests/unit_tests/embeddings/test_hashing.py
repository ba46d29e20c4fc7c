"""Unit tests for the model-free HashingEmbeddings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_tests.unit_tests import EmbeddingsUnitTests
from pydantic import ValidationError

from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.scoring.priority import cosine_similarity

TEXTS = [
    "Fix the login bug in the auth service",
    "Implement a REST endpoint for user registration",
    "Ünïcode täsk: sortiere die Liste 🚀",
    "???",
    "def f(x): return x + 1",
]

# (query, shares words with the query, shares no words with the query)
CODING_PAIRS = [
    (
        "Fix the login bug in the auth service",
        "Debug the failing login in the auth module",
        "Plot a histogram of monthly sales",
    ),
    (
        "Implement a REST endpoint for user registration",
        "Add a REST endpoint to update the user profile",
        "Refactor the CSS grid layout of the landing page",
    ),
    (
        "Write unit tests for the date parser",
        "Add unit tests covering date parser edge cases",
        "Optimize SQL query performance on the orders table",
    ),
    (
        "Refactor the payment module to use dependency injection",
        "Refactor payment processing with dependency injection",
        "Write a bash script to rotate log files",
    ),
    (
        "Parse CSV files into pandas dataframes",
        "Read a CSV file and convert it into a dataframe",
        "Design a microservice architecture for chat",
    ),
]


@pytest.fixture
def embeddings() -> HashingEmbeddings:
    return HashingEmbeddings()


# --------------------------------------------------------------------------- shape


def test_is_a_langchain_embeddings(embeddings: HashingEmbeddings) -> None:
    assert isinstance(embeddings, Embeddings)


def test_default_dimension_is_384(embeddings: HashingEmbeddings) -> None:
    assert embeddings.dimensions == 384
    for vector in embeddings.embed_documents(TEXTS):
        assert len(vector) == 384
        assert all(type(x) is float for x in vector)


@pytest.mark.parametrize("dimensions", [8, 64, 1000])
def test_custom_dimension(dimensions: int) -> None:
    model = HashingEmbeddings(dimensions=dimensions)
    assert [len(v) for v in model.embed_documents(TEXTS)] == [dimensions] * len(TEXTS)
    assert len(model.embed_query("hello world")) == dimensions


@pytest.mark.parametrize("dimensions", [0, 7, -1])
def test_too_small_dimension_is_rejected(dimensions: int) -> None:
    with pytest.raises(ValidationError, match="dimensions"):
        HashingEmbeddings(dimensions=dimensions)


def test_settings_are_frozen(embeddings: HashingEmbeddings) -> None:
    with pytest.raises(ValidationError):
        embeddings.dimensions = 16  # type: ignore[misc]
    assert embeddings.dimensions == 384


@pytest.mark.parametrize("text", [*TEXTS, "the of and", "_", "a"])
def test_unit_l2_norm(embeddings: HashingEmbeddings, text: str) -> None:
    assert float(np.linalg.norm(embeddings.embed_query(text))) == pytest.approx(1.0, abs=1e-12)


def test_symbol_only_text_gets_a_nonzero_vector(embeddings: HashingEmbeddings) -> None:
    question, bang = embeddings.embed_documents(["???", "!!!"])
    assert any(question)
    assert float(np.linalg.norm(question)) == pytest.approx(1.0)
    assert question != bang


def test_stop_words_only_text_gets_a_nonzero_vector(embeddings: HashingEmbeddings) -> None:
    vector = embeddings.embed_query("the of and")
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["", " ", "\n\t  "])
def test_blank_text_gets_the_zero_vector(embeddings: HashingEmbeddings, text: str) -> None:
    vector = embeddings.embed_query(text)
    assert vector == [0.0] * 384


def test_empty_batch(embeddings: HashingEmbeddings) -> None:
    assert embeddings.embed_documents([]) == []


# --------------------------------------------------------------------- determinism


def test_query_equals_document(embeddings: HashingEmbeddings) -> None:
    documents = embeddings.embed_documents(TEXTS)
    assert documents == [embeddings.embed_query(text) for text in TEXTS]


def test_deterministic_across_instances() -> None:
    assert HashingEmbeddings().embed_documents(TEXTS) == HashingEmbeddings().embed_documents(TEXTS)


def test_different_texts_differ(embeddings: HashingEmbeddings) -> None:
    vectors = embeddings.embed_documents(TEXTS)
    assert len({tuple(v) for v in vectors}) == len(TEXTS)


def test_dimension_changes_the_vector() -> None:
    small = HashingEmbeddings(dimensions=64).embed_query("Fix the login bug")
    large = HashingEmbeddings(dimensions=128).embed_query("Fix the login bug")
    assert small != large[:64]


_CHILD = textwrap.dedent(
    """
    import json, sys
    from langchain_episodic.embeddings import HashingEmbeddings
    texts = json.loads(sys.stdin.read())
    json.dump(
        {"hash": hash("salted per process"), "vectors": HashingEmbeddings().embed_documents(texts)},
        sys.stdout,
    )
    """
)


def test_deterministic_across_processes(embeddings: HashingEmbeddings) -> None:
    root = Path(__file__).resolve().parents[3]
    children = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        children.append(
            subprocess.Popen(
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=root,
                text=True,
            )
        )
    outputs = []
    for child in children:
        out, err = child.communicate(json.dumps(TEXTS), timeout=120)
        assert child.returncode == 0, err
        outputs.append(json.loads(out))
    # The two children really do hash differently ...
    assert outputs[0]["hash"] != outputs[1]["hash"]
    # ... yet give bit-identical vectors, equal to this process's.
    expected = embeddings.embed_documents(TEXTS)
    assert outputs[0]["vectors"] == expected
    assert outputs[1]["vectors"] == expected


# ------------------------------------------------------------------- lexical quality


@pytest.mark.parametrize(("query", "related", "unrelated"), CODING_PAIRS)
def test_shared_words_score_clearly_higher(
    embeddings: HashingEmbeddings, query: str, related: str, unrelated: str
) -> None:
    q, r, u = embeddings.embed_documents([query, related, unrelated])
    related_score = cosine_similarity(q, r)
    unrelated_score = cosine_similarity(q, u)
    assert related_score > unrelated_score + 0.2
    assert related_score > 0.25
    assert abs(unrelated_score) < 0.15


def test_every_related_pair_beats_every_unrelated_pair(embeddings: HashingEmbeddings) -> None:
    related = []
    unrelated = []
    for query, near, far in CODING_PAIRS:
        q, r, u = embeddings.embed_documents([query, near, far])
        related.append(cosine_similarity(q, r))
        unrelated.append(cosine_similarity(q, u))
    assert min(related) > max(unrelated) + 0.2


def test_word_stems_are_similar(embeddings: HashingEmbeddings) -> None:
    # No shared whole word, but shared stems through the character n-grams.
    q, r, u = embeddings.embed_documents(
        ["Refactoring parsers", "Refactor the parser", "Deploy kubernetes cluster"]
    )
    assert cosine_similarity(q, r) > cosine_similarity(q, u) + 0.2


def test_case_and_punctuation_do_not_matter(embeddings: HashingEmbeddings) -> None:
    a, b = embeddings.embed_documents(["Fix the LOGIN bug!", "fix the login bug"])
    assert a == pytest.approx(b, abs=1e-12)


def test_stop_words_carry_no_weight(embeddings: HashingEmbeddings) -> None:
    a, b = embeddings.embed_documents(["Fix the login bug", "fix login bug"])
    assert a == pytest.approx(b, abs=1e-12)


def test_identical_text_has_similarity_one(embeddings: HashingEmbeddings) -> None:
    v = embeddings.embed_query("Add password reset to the login form")
    assert cosine_similarity(v, v) == pytest.approx(1.0, abs=1e-12)


# ------------------------------------------------------------------------------ async


async def test_aembed_query(embeddings: HashingEmbeddings) -> None:
    assert await embeddings.aembed_query("Fix the login bug") == embeddings.embed_query(
        "Fix the login bug"
    )


async def test_aembed_documents(embeddings: HashingEmbeddings) -> None:
    assert await embeddings.aembed_documents(TEXTS) == embeddings.embed_documents(TEXTS)


# --------------------------------------------------------------- LangChain standard tests


class TestHashingEmbeddingsStandard(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[HashingEmbeddings]:
        return HashingEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, object]:
        return {}


def test_inverted_ngram_range_is_refused() -> None:
    with pytest.raises(ValueError, match="char_ngram_min=6"):
        HashingEmbeddings(char_ngram_min=6, char_ngram_max=3)
