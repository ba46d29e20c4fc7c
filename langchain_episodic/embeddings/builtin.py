"""The package's own embedders: the default, and which one built a namespace.

`default_embeddings` is what `EpisodicMemory` embeds
with when given no model: `StaticEmbeddings`,
semantic, offline and without torch. `builtin_embeddings_for` rebuilds the
package embedder a namespace's fingerprint names (the default, or a
`HashingEmbeddings` with its parameters, the default before 0.2), so the CLI and
error messages can name or use the model that built a memory.

Examples:
    >>> from langchain_episodic.embeddings.fingerprint import fingerprint_embeddings
    >>> old = fingerprint_embeddings(HashingEmbeddings(dimensions=256))
    >>> builtin_embeddings_for(old).dimensions
    256
    >>> builtin_expression(old)
    'HashingEmbeddings(dimensions=256)'
"""

from __future__ import annotations

import re

from langchain_core.embeddings import Embeddings

from langchain_episodic.embeddings.fingerprint import EmbedderFingerprint
from langchain_episodic.embeddings.hashing import HashingEmbeddings
from langchain_episodic.embeddings.static import StaticEmbeddings

__all__ = ["builtin_embeddings_for", "builtin_expression", "default_embeddings"]

_HASHING = f"{HashingEmbeddings.__module__}.{HashingEmbeddings.__qualname__}"
_STATIC = f"{StaticEmbeddings.__module__}.{StaticEmbeddings.__qualname__}"
_HASHING_MODEL = re.compile(
    r"dimensions=(?P<dimensions>\d+) char_ngram=(?P<char_ngram_min>\d+)-(?P<char_ngram_max>\d+) "
    r"word_weight=(?P<word_weight>[\d.e+-]+) bigram_weight=(?P<bigram_weight>[\d.e+-]+) "
    r"char_weight=(?P<char_weight>[\d.e+-]+)"
)


def default_embeddings() -> Embeddings:
    """The embedder a memory uses when given none: the packaged `StaticEmbeddings`."""
    return StaticEmbeddings()


def builtin_embeddings_for(fingerprint: EmbedderFingerprint) -> Embeddings | None:
    """The package embedder that ``fingerprint`` names, or ``None`` for any other model.

    Only the packaged default model and `HashingEmbeddings` can be rebuilt from
    a fingerprint; a memory opened with the result still checks that it matches.
    """
    if fingerprint.embedder == _HASHING:
        match = _HASHING_MODEL.fullmatch(fingerprint.model or "")
        if match is None:
            return None
        fields = match.groupdict()
        return HashingEmbeddings.model_validate(
            {k: (float if k.endswith("weight") else int)(v) for k, v in fields.items()}
        )
    if fingerprint.embedder == _STATIC:
        default = StaticEmbeddings()
        return default if fingerprint.model == default.model_name else None
    return None


def builtin_expression(fingerprint: EmbedderFingerprint) -> str | None:
    """The Python expression that rebuilds ``fingerprint``'s package embedder, or ``None``."""
    embeddings = builtin_embeddings_for(fingerprint)
    if isinstance(embeddings, HashingEmbeddings):
        defaults = HashingEmbeddings()
        changed = [
            f"{name}={getattr(embeddings, name)!r}"
            for name in type(embeddings).model_fields
            if getattr(embeddings, name) != getattr(defaults, name)
        ]
        return f"HashingEmbeddings({', '.join(changed)})"
    return "StaticEmbeddings()" if isinstance(embeddings, StaticEmbeddings) else None
