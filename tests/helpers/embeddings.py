"""Embeddings with chosen, exact similarities, and a memory built on them."""

from __future__ import annotations

import math

from langchain_core.embeddings import Embeddings

from langchain_episodic import EpisodicMemory
from langchain_episodic.stores import InMemoryEpisodeStore


class TableEmbeddings(Embeddings):
    """Texts mapped to fixed 3-d directions, so similarities are exact and chosen.

    Any other text (the memory's embedder probe, say) is orthogonal to the query.
    """

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.table.get(text, [0.0, 0.0, 1.0])


def unit(cos: float) -> list[float]:
    """A unit vector at cosine ``cos`` from the query direction [1, 0, 0]."""
    return [cos, math.sqrt(max(0.0, 1.0 - cos * cos)), 0.0]


def table_memory(similarities: dict[str, float], now: float) -> EpisodicMemory:
    """An in-memory memory where each text has the given similarity to ``"query"``."""
    table = {"query": [1.0, 0.0, 0.0]} | {text: unit(cos) for text, cos in similarities.items()}
    return EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=TableEmbeddings(table), clock=lambda: now
    )
