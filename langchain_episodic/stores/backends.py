"""What `VectorStoreEpisodeStore` knows of its backends.

A LangChain ``VectorStore`` says neither what its search scores with nor how to give it
precomputed vectors. This module finds out, for the backends the store knows (FAISS
from langchain-community, ``Chroma`` from langchain-chroma, LangChain's
``InMemoryVectorStore``), without importing any optional dependency:

* `ScoreKind` and `score_to_cosine`: what a score is, and how it becomes
  cosine similarity;
* `search_method`, `embeddings_writer`, `namespace_filter_for`: how to
  search by vector, write precomputed vectors and keep one namespace;
* `check_backend_embeddings`: for a backend that embeds texts itself, that its
  vectors still give cosine.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any, Literal, cast, get_args

import numpy as np
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore
from numpy.typing import NDArray

from langchain_episodic.errors import EpisodicValueError, StoreConfigurationError

__all__ = [
    "ScoreKind",
    "check_backend_embeddings",
    "embeddings_writer",
    "embeds_like",
    "is_faiss",
    "namespace_filter_for",
    "namespace_metadata_filter",
    "score_to_cosine",
    "search_method",
]

ScoreKind = Literal[
    "cosine_similarity",
    "cosine_distance",
    "inner_product",
    "one_minus_inner_product",
    "squared_l2",
    "l2",
]
"""What a backend's by-vector search returns as its score, and how it becomes cosine.

* ``"cosine_similarity"``: cosine itself (Qdrant ``Distance.COSINE``, LangChain's
  ``InMemoryVectorStore``).
* ``"cosine_distance"``: ``1 - cosine`` (Chroma ``cosine`` space, PGVector cosine);
  cosine = ``1 - d``.
* ``"inner_product"``: the dot product (FAISS ``IndexFlatIP``); cosine = the score,
  exact because every vector written and searched is scaled to unit length.
* ``"one_minus_inner_product"``: ``1 - dot`` (Chroma ``ip`` space); cosine = ``1 - d``
  on unit vectors.
* ``"squared_l2"``: squared Euclidean distance (FAISS ``IndexFlatL2``, Chroma ``l2``
  space); on unit vectors ``d = 2 - 2 cos``, so cosine = ``1 - d / 2``.
* ``"l2"``: Euclidean distance; cosine = ``1 - d² / 2`` on unit vectors.
"""

_CONVERSIONS: dict[str, Callable[[float], float]] = {
    "cosine_similarity": lambda score: score,
    "cosine_distance": lambda distance: 1.0 - distance,
    "inner_product": lambda score: score,
    "one_minus_inner_product": lambda distance: 1.0 - distance,
    "squared_l2": lambda distance: 1.0 - distance / 2.0,
    "l2": lambda distance: 1.0 - distance * distance / 2.0,
}
# Scores that rank like cosine, and convert exactly, only on unit vectors.
_NEEDS_UNIT_VECTORS = frozenset({"inner_product", "one_minus_inner_product", "squared_l2", "l2"})
_UNIT_TOLERANCE = 1e-4
# The backend's embeddings must be the memory's: checked once, on the first write.
_SAME_MODEL_COSINE = 0.999

_FAISS_METRIC_INNER_PRODUCT = 0  # faiss.METRIC_INNER_PRODUCT
_FAISS_METRIC_L2 = 1  # faiss.METRIC_L2
_CHROMA_SPACES: dict[str, ScoreKind] = {
    "cosine": "cosine_distance",
    "l2": "squared_l2",
    "ip": "one_minus_inner_product",
}


def namespace_metadata_filter(namespace: str) -> dict[str, str]:
    """The default ``namespace_filter``: ``{"namespace": namespace}``, as FAISS and Chroma take."""
    return {"namespace": namespace}


def namespace_filter_for(
    vectorstore: VectorStore, namespace_filter: Callable[[str], Any] | None
) -> Callable[[str], Any] | None:
    """The filter builder to use: the default one as the backend takes it."""
    if namespace_filter is namespace_metadata_filter and isinstance(
        vectorstore, InMemoryVectorStore
    ):
        # LangChain's InMemoryVectorStore filters with a predicate on the document.
        return lambda namespace: lambda document: document.metadata.get("namespace") == namespace
    return namespace_filter


def _instance_of(vectorstore: object, module: str, name: str) -> bool:
    """``isinstance`` against an optional dependency, without importing it."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None)
    return isinstance(cls, type) and isinstance(vectorstore, cls)


def is_faiss(vectorstore: VectorStore) -> bool:
    """Whether ``vectorstore`` is langchain-community's ``FAISS``."""
    return _instance_of(vectorstore, "langchain_community.vectorstores.faiss", "FAISS")


def _detect_score(vectorstore: VectorStore) -> tuple[ScoreKind | None, str]:
    """The score kind of a backend this module knows, and what it was read from."""
    name = type(vectorstore).__name__
    if is_faiss(vectorstore):
        metric = getattr(getattr(vectorstore, "index", None), "metric_type", None)
        kinds: dict[object, ScoreKind] = {
            _FAISS_METRIC_L2: "squared_l2",
            _FAISS_METRIC_INNER_PRODUCT: "inner_product",
        }
        return kinds.get(metric), f"{name} with index metric_type={metric!r}"
    if _instance_of(vectorstore, "langchain_chroma.vectorstores", "Chroma"):
        # langchain-chroma exposes no public accessor for its collection; ``_collection``
        # is the property its own _select_relevance_score_fn reads.
        collection = vectorstore._collection  # type: ignore[attr-defined]
        configuration = collection.configuration or {}
        spaces = ((configuration.get(index) or {}).get("space") for index in ("hnsw", "spann"))
        space = str(
            next(filter(None, spaces), None)
            or (collection.metadata or {}).get("hnsw:space")
            or "l2"  # Chroma's default space
        )
        return _CHROMA_SPACES.get(space), f"{name} with collection space={space!r}"
    if isinstance(vectorstore, InMemoryVectorStore):
        return "cosine_similarity", name
    return None, name


def score_to_cosine(
    vectorstore: VectorStore, score: ScoreKind | Callable[[float], float] | None
) -> tuple[ScoreKind | None, Callable[[float], float]]:
    """The backend's score kind (``None`` for a custom function) and its conversion to cosine.

    ``score`` wins over what is detected; ``None`` means detect.

    Raises:
        EpisodicValueError: ``score`` is neither a `ScoreKind` nor a function.
        StoreConfigurationError: ``score`` is ``None`` and the backend's score is unknown.
    """
    kinds = ", ".join(map(repr, get_args(ScoreKind)))
    if callable(score):
        return None, score
    if score is not None:
        if score not in _CONVERSIONS:
            msg = f"score={score!r} is invalid: must be a function or one of {kinds}"
            raise EpisodicValueError(msg)
        return score, _CONVERSIONS[score]
    kind, source = _detect_score(vectorstore)
    if kind is None:
        msg = (
            f"cannot tell how {source} scores similarity: pass score= one of {kinds}, "
            "or a function from its score to cosine similarity"
        )
        raise StoreConfigurationError(msg)
    return kind, _CONVERSIONS[kind]


def search_method(vectorstore: VectorStore) -> Callable[..., list[tuple[Document, float]]]:
    """The backend's search by vector that returns scores.

    Raises:
        StoreConfigurationError: The backend has none.
    """
    for name in (
        "similarity_search_with_score_by_vector",  # FAISS, InMemoryVectorStore, PGVector
        "similarity_search_by_vector_with_relevance_scores",  # Chroma, Elasticsearch
    ):
        method = getattr(vectorstore, name, None)
        if callable(method):
            return cast("Callable[..., list[tuple[Document, float]]]", method)
    msg = (
        f"vectorstore={type(vectorstore).__name__} cannot search by vector with scores: "
        "VectorStoreEpisodeStore needs similarity_search_with_score_by_vector or "
        "similarity_search_by_vector_with_relevance_scores"
    )
    raise StoreConfigurationError(msg)


def embeddings_writer(
    vectorstore: VectorStore,
) -> Callable[[list[str], list[list[float]], list[dict[str, Any]], list[str]], Any] | None:
    """A call that writes precomputed vectors, if the backend has ``add_embeddings``."""
    method = getattr(vectorstore, "add_embeddings", None)
    if not callable(method):
        return None
    try:
        parameters = list(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        return None
    if parameters[:1] == ["text_embeddings"]:  # FAISS: pairs of (text, vector)
        return lambda texts, vectors, metadatas, ids: method(
            list(zip(texts, vectors, strict=True)), metadatas=metadatas, ids=ids
        )
    if parameters[:2] == ["texts", "embeddings"]:  # PGVector and others
        return lambda texts, vectors, metadatas, ids: method(
            texts, vectors, metadatas=metadatas, ids=ids
        )
    return None


def embeds_like(model: Any, text: str, vector: NDArray[np.floating[Any]]) -> bool:
    """Whether ``model`` (a backend's own embeddings) embeds ``text`` as ``vector``.

    Same dimension and cosine at least 0.999: the backend's model is the memory's.
    """
    theirs = np.asarray(model.embed_documents([text])[0], dtype=np.float64)
    ours = np.asarray(vector, dtype=np.float64)
    return theirs.shape == ours.shape and (
        float(theirs @ ours / (np.linalg.norm(theirs) * np.linalg.norm(ours) or 1.0))
        >= _SAME_MODEL_COSINE
    )


def check_backend_embeddings(
    vectorstore: VectorStore,
    kind: ScoreKind | None,
    text: str,
    vectors: NDArray[np.float64],
    *,
    compare_model: bool,
) -> None:
    """Refuse a write to a backend that embeds texts itself, if cosine would be lost.

    Its vectors cannot be scaled to unit length, so with an L2 or inner-product score
    the memory's vectors (``vectors``, one row per text) must already be unit length.
    With ``compare_model``, ``text`` is embedded once more by the backend's model,
    which must give the memory's vector for it (the first row).

    Raises:
        StoreConfigurationError: The backend has no embeddings model, its score needs
            unit vectors the memory's model does not give, or its model is another.
    """
    name = type(vectorstore).__name__
    model = vectorstore.embeddings
    if model is None:
        msg = (
            f"vectorstore={name} has no add_embeddings and no embeddings to embed "
            "the episodes with: give it the memory's embeddings (e.g. Chroma("
            "embedding_function=...))"
        )
        raise StoreConfigurationError(msg)
    norms = np.linalg.norm(vectors, axis=1)
    if kind in _NEEDS_UNIT_VECTORS and not np.allclose(norms, 1.0, atol=_UNIT_TOLERANCE):
        msg = (
            f"vectorstore={name} scores by {kind!r} and embeds texts "
            "itself, so its vectors cannot be scaled to unit length, and this "
            f"embeddings model returns vectors of length {float(norms[0]):.6g}: "
            "similarity would not be cosine. Use a cosine space (Chroma: "
            "collection_configuration={'hnsw': {'space': 'cosine'}}) or an "
            "embeddings model that returns unit vectors"
        )
        raise StoreConfigurationError(msg)
    if not compare_model:
        return
    if not embeds_like(model, text, vectors[0]):
        msg = (
            f"vectorstore={name} embeds with {type(model).__name__}, which gives "
            "other vectors than the memory's embeddings model: pass the same model "
            "to both"
        )
        raise StoreConfigurationError(msg)
