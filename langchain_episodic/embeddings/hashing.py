"""A deterministic, model-free embedding for offline use and tests.

`HashingEmbeddings` is feature hashing ("the hashing trick") of word unigrams,
word bigrams and character n-grams of each word, L2-normalised. It is lexical: texts
that share words (or word stems, through the character n-grams) score clearly higher
than texts that share none. It needs no model, no network and no state, and gives the
same vectors in every process: it hashes with BLAKE2b, never with Python's ``hash()``,
which is salted per process.

It was the memory's default before 0.2; the default is now the semantic
`StaticEmbeddings`. Any LangChain
`Embeddings` (OpenAI, HuggingFace, Ollama, ...) works too.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from functools import lru_cache

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["HashingEmbeddings"]

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

# Words so common in task descriptions that sharing them says nothing about the task.
_STOP_WORDS = frozenset(
    (
        "a an and are as at be by for from has have in into is it its of on or that the "
        "this to was were will with"
    ).split()
)


@lru_cache(maxsize=65_536)
def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    # The top bit picks a sign so that colliding features cancel out on average.
    return digest % dimensions, 1.0 if digest >> 63 else -1.0


class HashingEmbeddings(BaseModel, Embeddings):
    """Deterministic lexical embeddings by feature hashing; no model, fully offline.

    Setup:
        Nothing to install beyond ``langchain-episodic``.

    Instantiate:
        ```python
        from langchain_episodic import HashingEmbeddings

        embeddings = HashingEmbeddings()  # 384 dimensions by default
        ```

    Embed:
        ```python
        import numpy as np

        a, b, c = embeddings.embed_documents([
            "Fix the login bug in the auth service",
            "Debug the failing login in the auth module",
            "Plot a histogram of monthly sales",
        ])
        assert np.dot(a, b) > np.dot(a, c)
        ```

    Async:
        ```python
        vector = await embeddings.aembed_query("Fix the login bug")
        ```
    """

    model_config = ConfigDict(frozen=True)

    dimensions: int = Field(default=384, ge=8, description="Length of each vector.")
    char_ngram_min: int = Field(default=3, ge=1, description="Shortest character n-gram.")
    char_ngram_max: int = Field(default=5, ge=1, description="Longest character n-gram.")
    word_weight: float = Field(default=1.0, ge=0.0, description="Weight of each word.")
    bigram_weight: float = Field(default=0.5, ge=0.0, description="Weight of each word pair.")
    char_weight: float = Field(
        default=0.2, ge=0.0, description="Weight of each character n-gram of a word."
    )

    @model_validator(mode="after")
    def _check_ngram_range(self) -> HashingEmbeddings:
        if self.char_ngram_min > self.char_ngram_max:
            msg = (
                f"char_ngram_min={self.char_ngram_min!r} must not exceed "
                f"char_ngram_max={self.char_ngram_max!r}"
            )
            raise ValueError(msg)
        return self

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = [w for w in _TOKEN.findall(text.lower()) if w not in _STOP_WORDS]
        if not words:
            # A text of stop words or symbols only ("???") still deserves a vector of its
            # own: a zero vector has no direction and cannot be searched by cosine.
            words = _TOKEN.findall(text.lower()) or text.split()
        features: list[tuple[str, float]] = [("w:" + w, self.word_weight) for w in words]
        features += [(f"b:{a} {b}", self.bigram_weight) for a, b in itertools.pairwise(words)]
        for word in words:
            padded = f"<{word}>"
            for n in range(self.char_ngram_min, self.char_ngram_max + 1):
                features += [
                    ("c:" + padded[i : i + n], self.char_weight) for i in range(len(padded) - n + 1)
                ]
        return features

    def _embed(self, text: str) -> list[float]:
        vector = np.zeros(self.dimensions, dtype=np.float64)
        for feature, weight in self._features(text):
            index, sign = _bucket(feature, self.dimensions)
            vector[index] += sign * weight
        norm = float(np.linalg.norm(vector))
        if norm > 0.0:
            vector /= norm
        result: list[float] = vector.tolist()
        return result

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text; only a blank text gets the zero vector."""
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query text exactly as a document of the same text."""
        return self._embed(text)
