"""The relevance test of one memory: its embedder's calibration and its background.

Recall (episodes) and the lessons share it: a candidate is relevant when its
similarity to the task reaches the calibrated floor and the task's own background
bar (`langchain_episodic.scoring.relevance`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray

from langchain_episodic.embeddings.background import background_vectors
from langchain_episodic.embeddings.fingerprint import EmbedderFingerprint
from langchain_episodic.scoring.relevance import (
    Calibration,
    background_similarity,
    relevance_threshold,
)

__all__ = ["RelevanceTest"]


class RelevanceTest:
    """The similarity a stored episode or lesson must reach to count as relevant.

    Args:
        embeddings: The memory's embedding model (embeds the background once).
        calibration: How this embedder's similarities read (floor and offset).
        background: The texts the test compares a task against
            (`langchain_episodic.embeddings.background`); empty: no such test.
        fingerprint: The embedder's fingerprint, taken on open: keys the background's
            vectors, shared by every memory over the same model.
    """

    def __init__(
        self,
        embeddings: Embeddings,
        calibration: Calibration,
        background: Sequence[str] = (),
        fingerprint: EmbedderFingerprint | None = None,
    ) -> None:
        self.embeddings = embeddings
        self.calibration = calibration
        self.background_texts = tuple(background)
        self.fingerprint = fingerprint
        self._background: NDArray[np.float32] | None = None
        self._lock = threading.Lock()

    def background_bar(self, vector: NDArray[np.float32]) -> float | None:
        """The similarity the task of ``vector`` sets: its background plus the model's offset.

        ``None`` when the memory has no background. The background is embedded on
        first use (once per model and process).
        """
        if not self.background_texts:
            return None
        if self._background is None:
            with self._lock:
                if self._background is None:
                    self._background = self.vectors(self.background_texts)
        return background_similarity(vector, self._background) + self.calibration.offset

    def bar(self, vector: NDArray[np.float32], floor: float | None = None) -> float:
        """The similarity a candidate needs for the task of ``vector``.

        ``floor``: the similarity floor (the calibration's when ``None``).
        """
        chosen = self.calibration.floor if floor is None else floor
        return relevance_threshold(chosen, background=self.background_bar(vector))

    def vectors(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of fixed texts (background, examples), cached per model and process."""
        return background_vectors(self.embeddings, texts, self.fingerprint)
