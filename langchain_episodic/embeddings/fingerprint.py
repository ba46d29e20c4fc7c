"""Which embedding model built a store: a fingerprint to record and compare.

Vectors of two models are not comparable, even of one dimension: cosine similarities
between them are noise. A memory therefore records an `EmbedderFingerprint`
when it creates a namespace and compares it with the one of the model it is opened
with (see `EpisodicMemory`).

A fingerprint holds:

* ``embedder``: the class, as ``module.QualName``;
* ``model``: the model name, where the embedder exposes one (``model_name``,
  ``model`` or ``model_id``; `HashingEmbeddings` gives its parameters);
* ``dimension``: the length of its vectors;
* ``sketch``: `SKETCH_SIZE` numbers summarising its unit vector for
  `PROBE_TEXT`: a fixed ±1 random projection (the signs come from SHAKE-256,
  so every process and platform draws the same). Distances between sketches estimate
  distances between the vectors, so two models of one class and dimension but other
  weights are told apart while float noise (another process, BLAS, GPU) is not.

The vectors decide: two fingerprints are of the same model when the dimensions are
equal and the sketches estimate a cosine similarity of at least
`SAME_MODEL_SIMILARITY`. Class and model name only describe the model in
messages, so a renamed wrapper around the same weights still matches.

Examples:
    >>> from langchain_episodic.embeddings import HashingEmbeddings
    >>> a = fingerprint_embeddings(HashingEmbeddings())
    >>> a == EmbedderFingerprint.from_json(a.to_json())
    True
    >>> a.mismatch(fingerprint_embeddings(HashingEmbeddings())) is None
    True
    >>> print(a.mismatch(fingerprint_embeddings(HashingEmbeddings(dimensions=256))))
    its vectors have a dimension of 384, the given model's 256
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray

from langchain_episodic.embeddings.hashing import HashingEmbeddings

__all__ = [
    "PROBE_TEXT",
    "SAME_MODEL_SIMILARITY",
    "SKETCH_SIZE",
    "EmbedderFingerprint",
    "RefusingEmbeddings",
    "fingerprint_embeddings",
    "fingerprint_from_vector",
    "model_name",
]

FINGERPRINT_VERSION = 1
PROBE_TEXT = (
    "langchain-episodic embedding probe: Fix the failing login test in the auth "
    "service (v2), then refactor the payment module; 42 checks must pass."
)
"""The text every fingerprint embeds (with ``embed_documents``, as episodes are)."""
SKETCH_SIZE = 32
"""Numbers in a fingerprint's sketch of the probe vector."""
SAME_MODEL_SIMILARITY = 0.999
"""Least estimated cosine similarity between two probe vectors of one model.

Float noise across processes and BLAS builds stays near 1e-6 below 1, GPU or
half-precision inference and non-deterministic APIs near 1e-4; two models fall far
below (unrelated weights near 0; ``HashingEmbeddings`` with ``bigram_weight`` 0.6
instead of 0.5 at 0.997). Spaces closer than this are the same space for recall."""
_DECIMALS = 5
_MODEL_ATTRIBUTES = ("model_name", "model", "model_id")


@lru_cache(maxsize=8)
def _projection(dimension: int) -> NDArray[np.float64]:
    """A fixed SKETCH_SIZE x dimension matrix of ±1/sqrt(SKETCH_SIZE), equal everywhere."""
    size = (dimension + 7) // 8  # bytes a row's signs take
    seeds = (f"langchain-episodic sketch {row}".encode() for row in range(SKETCH_SIZE))
    raw = b"".join(hashlib.shake_256(seed).digest(size) for seed in seeds)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8)).reshape(SKETCH_SIZE, -1)
    signs = bits[:, :dimension].astype(np.float64) * 2.0 - 1.0
    matrix: NDArray[np.float64] = signs / math.sqrt(SKETCH_SIZE)
    matrix.setflags(write=False)
    return matrix


def _sketch(vector: NDArray[np.float64]) -> tuple[float, ...]:
    unit = vector / np.linalg.norm(vector)
    # + 0.0 turns -0.0 into 0.0, so equal sketches serialise equally.
    return tuple(round(float(x), _DECIMALS) + 0.0 for x in _projection(len(unit)) @ unit)


def model_name(embeddings: Embeddings) -> str | None:
    """The model an embedder names, or ``None`` when it names none.

    `HashingEmbeddings` has no model: its parameters stand for one.

    Examples:
        >>> model_name(HashingEmbeddings(dimensions=64))
        'dimensions=64 char_ngram=3-5 word_weight=1.0 bigram_weight=0.5 char_weight=0.2'
    """
    if isinstance(embeddings, HashingEmbeddings):
        e = embeddings
        return (
            f"dimensions={e.dimensions} char_ngram={e.char_ngram_min}-{e.char_ngram_max} "
            f"word_weight={e.word_weight} bigram_weight={e.bigram_weight} "
            f"char_weight={e.char_weight}"
        )
    for attribute in _MODEL_ATTRIBUTES:
        value = getattr(embeddings, attribute, None)
        if isinstance(value, str) and value.strip():
            return value
    return None


@dataclass(frozen=True)
class EmbedderFingerprint:
    """What tells one embedding model's vectors from another's.

    Attributes:
        embedder: The embedder's class, as ``module.QualName``.
        model: The model name it exposes, or its parameters; ``None`` if neither.
        dimension: Length of its vectors.
        sketch: `SKETCH_SIZE` numbers: the probe vector's unit vector projected
            on fixed ±1 directions, rounded to 5 decimals.
    """

    embedder: str
    model: str | None
    dimension: int
    sketch: tuple[float, ...]

    def describe(self) -> str:
        """The model in one line, for messages."""
        model = f" model={self.model!r}" if self.model is not None else ""
        return f"{self.embedder}{model} ({self.dimension} dimensions)"

    def to_json(self) -> str:
        """Compact, deterministic JSON (sorted keys): what a store keeps."""
        data = {"version": FINGERPRINT_VERSION, **asdict(self)}
        return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> EmbedderFingerprint | None:
        """The fingerprint in ``text``, or ``None`` when ``text`` is not a readable one."""
        try:
            data: Any = json.loads(text)
        except (TypeError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("version") != FINGERPRINT_VERSION:
            return None
        embedder, model, dimension, sketch = (
            data.get(key) for key in ("embedder", "model", "dimension", "sketch")
        )
        if (
            not isinstance(embedder, str)
            or not (model is None or isinstance(model, str))
            or not isinstance(dimension, int)
            or isinstance(dimension, bool)
            or dimension < 1
            or not isinstance(sketch, list)
            or len(sketch) != SKETCH_SIZE
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in sketch)
        ):
            return None
        return cls(embedder, model, dimension, tuple(float(x) for x in sketch))

    def similarity(self, other: EmbedderFingerprint) -> float:
        """The cosine similarity of the two probe vectors, estimated from the sketches."""
        distance = float(np.linalg.norm(np.subtract(self.sketch, other.sketch)))
        return 1.0 - distance * distance / 2.0

    def mismatch(self, given: EmbedderFingerprint) -> str | None:
        """Why ``given`` (the model at hand) is not this one, or ``None`` if it is."""
        if given.dimension != self.dimension:
            dimensions = f"{self.dimension}, the given model's {given.dimension}"
            return f"its vectors have a dimension of {dimensions}"
        similarity = self.similarity(given)
        if similarity < SAME_MODEL_SIMILARITY:
            return (
                f"the two models embed a probe text differently (similarity "
                f"{similarity:.2f}; one model gives at least {SAME_MODEL_SIMILARITY})"
            )
        return None


def fingerprint_from_vector(embeddings: Embeddings, vector: Sequence[float]) -> EmbedderFingerprint:
    """The fingerprint of ``embeddings`` from its (finite, non-zero) vector for the probe."""
    array = np.asarray(vector, dtype=np.float64)
    kind = type(embeddings)
    embedder = f"{kind.__module__}.{kind.__qualname__}"
    return EmbedderFingerprint(embedder, model_name(embeddings), len(array), _sketch(array))


def fingerprint_embeddings(embeddings: Embeddings) -> EmbedderFingerprint | None:
    """Embed `PROBE_TEXT` once and fingerprint ``embeddings``.

    Returns:
        The fingerprint, or ``None`` when the model's vector for the probe is not
        usable (not one finite, non-zero vector): such a model cannot be told apart,
        and the memory refuses its vectors where they are used instead.
    """
    vectors = embeddings.embed_documents([PROBE_TEXT])
    try:
        array = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if array.ndim != 2 or array.shape[0] != 1 or array.shape[1] == 0:
        return None
    if not np.isfinite(array).all() or not np.abs(array).max() > 0:
        return None
    return fingerprint_from_vector(embeddings, array[0].tolist())


class RefusingEmbeddings(Embeddings):
    """Stands in for a model that does not match the store: every call raises ``error``.

    A memory opened with ``on_embedding_mismatch="read-only"`` embeds with it, so
    reading works and recording or recalling fails with the mismatch error.
    """

    def __init__(self, error: Exception) -> None:
        self.error = error

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Raise the mismatch error."""
        raise self.error

    def embed_query(self, text: str) -> list[float]:
        """Raise the mismatch error."""
        raise self.error
