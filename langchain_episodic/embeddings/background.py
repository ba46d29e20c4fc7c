"""The background a relevance test compares against: everyday texts, embedded once per model.

"Is this stored episode about the task?" cannot be told from one cosine similarity:
each model has its own scale, and an off-topic task that shares a word with a stored
one ("Schedule a dentist appointment" / "Scheduled reports run an hour late") can be
more similar than a true paraphrase. So recall also asks how similar the task is to
texts known *not* to be about the memory's work: a candidate must be at least about as
similar to the task as the task's nearest background texts
(`background_similarity`).

The packaged background (`default_background_texts`) is 622 short everyday
requests written for this package, none about software: 482 over 54 domains
(cooking, travel, health, law, sport, gardening, ...) and 140 that use about 150
words of programming jargon in their everyday sense (a patch on jeans, logs for the
fire, a python at the zoo, a thread for a button), so that sharing such a word does
not make an everyday task look like a stored coding task. An agent whose own tasks
are everyday tasks passes its own background (texts its tasks are *not* about) or
none (``EpisodicMemory(background=())``).

Vectors are computed once per model and text set (keyed by the model's
`EmbedderFingerprint`), so many
memories over one model embed the background once per process.

Examples:
    >>> from langchain_episodic.embeddings import HashingEmbeddings
    >>> texts = default_background_texts()
    >>> len(texts), texts[0]
    (622, 'Find a vegetarian lasagne recipe that serves six people.')
    >>> background_vectors(HashingEmbeddings(), texts[:4]).shape
    (4, 384)
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

import numpy as np
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray

from langchain_episodic.embeddings.fingerprint import EmbedderFingerprint, fingerprint_embeddings

__all__ = ["BACKGROUND_FILE", "background_vectors", "default_background_texts"]

BACKGROUND_FILE = "data/background_en.txt"
"""The packaged background, one text per line, relative to this package."""

_CACHE: dict[tuple[str, str], NDArray[np.float32]] = {}
_CACHE_LIMIT = 16
_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def default_background_texts() -> tuple[str, ...]:
    """The packaged everyday texts (622 lines, none about software)."""
    raw = resources.files("langchain_episodic.embeddings").joinpath(BACKGROUND_FILE)
    lines = raw.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip())


def background_vectors(
    embeddings: Embeddings, texts: Sequence[str], fingerprint: EmbedderFingerprint | None = None
) -> NDArray[np.float32]:
    """``texts`` embedded by ``embeddings`` as unit rows, computed once per model and texts.

    Args:
        embeddings: The model.
        texts: The background texts.
        fingerprint: The model's fingerprint when the caller has it (the memory
            takes one on open); taken here otherwise (one probe embedding).

    Raises:
        ValueError: The model returned no usable vector for some text (not one
            finite, non-zero vector per text, of equal length).
    """
    digest = hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()
    if fingerprint is None:
        fingerprint = fingerprint_embeddings(embeddings)
    key = (fingerprint.to_json() if fingerprint is not None else f"id:{id(embeddings)}", digest)
    with _LOCK:
        found = _CACHE.get(key)
    if found is not None:
        return found
    matrix = np.asarray(embeddings.embed_documents(list(texts)), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True) if matrix.ndim == 2 else None
    if (
        norms is None
        or matrix.shape[0] != len(texts)
        or not np.isfinite(matrix).all()
        or not (norms > 0).all()
    ):
        msg = (
            f"the embeddings model returned unusable vectors for the {len(texts)} background "
            "texts: expected one finite, non-zero vector of equal length per text"
        )
        raise ValueError(msg)
    unit: NDArray[np.float32] = matrix / norms
    unit.setflags(write=False)
    with _LOCK:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = unit
    return unit
