"""The package's own embedders: the default one, and rebuilding one from its fingerprint."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_episodic import HashingEmbeddings, StaticEmbeddings
from langchain_episodic.embeddings.builtin import (
    builtin_embeddings_for,
    builtin_expression,
    default_embeddings,
)
from langchain_episodic.embeddings.fingerprint import fingerprint_embeddings


def test_the_default_is_the_packaged_static_model() -> None:
    assert isinstance(default_embeddings(), StaticEmbeddings)


def test_a_package_embedder_is_rebuilt_from_its_fingerprint() -> None:
    for embeddings in (StaticEmbeddings(), HashingEmbeddings()):
        fingerprint = fingerprint_embeddings(embeddings)
        rebuilt = builtin_embeddings_for(fingerprint)
        assert type(rebuilt) is type(embeddings)
        assert builtin_expression(fingerprint) == f"{type(embeddings).__name__}()"


def test_any_other_model_is_not_rebuilt() -> None:
    fingerprint = fingerprint_embeddings(DeterministicFakeEmbedding(size=8))
    assert builtin_embeddings_for(fingerprint) is None
    assert builtin_expression(fingerprint) is None
