"""Embedding models the memory can use; any LangChain ``Embeddings`` works as well.

* :class:`HashingEmbeddings` (:mod:`~langchain_episodic.embeddings.hashing`): the
  default; lexical, deterministic, model-free.
* :func:`~langchain_episodic.embeddings.minilm.minilm_embeddings`: all-MiniLM-L6-v2
  from a package that ships its weights (the ``huggingface`` extra), semantic and
  offline.
* :class:`EmbedderFingerprint` (:mod:`~langchain_episodic.embeddings.fingerprint`):
  which model built a namespace, recorded when it is created and checked on open.
"""

from langchain_episodic.embeddings.fingerprint import (
    EmbedderFingerprint,
    fingerprint_embeddings,
)
from langchain_episodic.embeddings.hashing import HashingEmbeddings

__all__ = ["EmbedderFingerprint", "HashingEmbeddings", "fingerprint_embeddings"]
