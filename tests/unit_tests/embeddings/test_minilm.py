"""The all-MiniLM-L6-v2 model, loaded offline from its package."""

from __future__ import annotations

import math

import pytest
from langchain_core.embeddings import Embeddings

from langchain_episodic.embeddings.minilm import MINILM_DIMENSIONS, minilm_embeddings


@pytest.fixture(scope="module")
def minilm() -> Embeddings:
    pytest.importorskip("sentence_transformers")
    return minilm_embeddings()


def test_vectors_have_the_models_dimension_and_unit_length(minilm: Embeddings) -> None:
    vector = minilm.embed_query("Fix the login form")
    assert len(vector) == MINILM_DIMENSIONS == 384
    assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-4)


def test_a_paraphrase_is_nearer_than_an_unrelated_task(minilm: Embeddings) -> None:
    login, paraphrase, csv = minilm.embed_documents(
        ["Fix the login form", "Repair the sign-in page", "Parse a CSV file"]
    )

    def cosine(a: list[float], b: list[float]) -> float:
        return math.fsum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(login, paraphrase) > cosine(login, csv)
