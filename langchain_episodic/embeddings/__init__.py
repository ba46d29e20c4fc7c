"""Embedding models the memory can use; any LangChain ``Embeddings`` works as well.

* `StaticEmbeddings` (`static`): the
  default; a static model distilled from all-MiniLM-L6-v2, shipped in the package,
  semantic, offline, numpy only (no torch).
* `HashingEmbeddings` (`hashing`): lexical,
  deterministic, model-free (the default before 0.2).
* `minilm_embeddings`: all-MiniLM-L6-v2
  from a package that ships its weights (the ``huggingface`` extra), semantic and
  offline.
* `EmbedderFingerprint` (`fingerprint`):
  which model built a namespace, recorded when it is created and checked on open.
"""

from langchain_episodic.embeddings.fingerprint import EmbedderFingerprint, fingerprint_embeddings
from langchain_episodic.embeddings.hashing import HashingEmbeddings
from langchain_episodic.embeddings.static import StaticEmbeddings

__all__ = ["EmbedderFingerprint", "HashingEmbeddings", "StaticEmbeddings", "fingerprint_embeddings"]
