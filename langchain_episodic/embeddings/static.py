"""A static embedding model distilled from all-MiniLM-L6-v2: semantic, offline, no torch.

`StaticEmbeddings` embeds a text as the mean of one fixed vector per token,
L2-normalised. The token vectors were distilled from `all-MiniLM-L6-v2`_ with
`model2vec`_ (``scripts/distill_static_embedder.py`` writes them; their
``config.json`` says how) and ship inside the package, in
``langchain_episodic/embeddings/data/static_minilm/``: a float16 matrix
(``embeddings.npy``), the tokenizer (``tokenizer.json``), ``config.json`` and the
licence notice. Running it needs numpy and the ``tokenizers`` package only: no torch,
no model2vec, no network.

For a text with at least one known token, the vectors are exactly those of
``model2vec.StaticModel.encode`` over the same files (float16 values, as model2vec
computes them): the text is cut to ``max_length`` tokens (512) without special tokens,
unknown tokens are dropped, the token vectors are averaged and the mean is scaled to
unit length. A text without any known token (``""``, ``"🙂🙂"``) would be the zero
vector there; here it gets `StaticEmbeddings.fallback_vector` instead, the
unit-length vector of the tokenizer's unknown token (``[UNK]``), so that every text
has a direction the memory can search by cosine.

.. _all-MiniLM-L6-v2: https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2
.. _model2vec: https://github.com/MinishLab/model2vec
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray
from tokenizers import Tokenizer

__all__ = ["PACKAGED_MODEL_DIR", "StaticEmbeddings"]

PACKAGED_MODEL_DIR = "data/static_minilm"
"""Where the packaged model lies, relative to ``langchain_episodic/embeddings``."""

EMBEDDINGS_FILE = "embeddings.npy"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "config.json"
_REQUIRED_FILES = (EMBEDDINGS_FILE, TOKENIZER_FILE, CONFIG_FILE)
_DEFAULT_MAX_LENGTH = 512  # model2vec's default when a config names none
_CHUNK = 1024  # texts pooled at once; bounds the memory of one gather


@dataclass(frozen=True)
class _Model:
    """One loaded model, shared by every instance over the same folder."""

    name: str
    vectors: NDArray[np.float16]
    tokenizer: Tokenizer
    unk_id: int | None
    max_chars: int | None
    normalize: bool
    fallback: NDArray[np.float16]
    config: dict[str, Any]


_CACHE: dict[str, _Model] = {}
_LOCK = threading.Lock()


def _unk_id(tokenizer: Tokenizer) -> int | None:
    """The unknown token's id, found as model2vec finds it."""
    model = tokenizer.model
    if hasattr(model, "unk_token"):  # WordPiece, BPE, WordLevel
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    unk = json.loads(tokenizer.to_str())["model"].get("unk_id")  # Unigram
    return None if unk is None else int(unk)


def _fallback(vectors: NDArray[np.float16], unk_id: int | None) -> NDArray[np.float16]:
    """The vector of a text without known tokens: [UNK]'s, else a fixed unit vector."""
    dimension = vectors.shape[1]
    row = np.zeros(dimension, np.float32) if unk_id is None else vectors[unk_id].astype(np.float32)
    if not np.all(np.isfinite(row)) or not np.any(row):
        row = np.ones(dimension, dtype=np.float32)
    unit = (row / np.linalg.norm(row)).astype(np.float16)
    unit.setflags(write=False)
    return unit


def _load(folder: Path, explicit: bool) -> _Model:
    where = f"path={str(folder)!r}" if explicit else f"the packaged model folder {str(folder)!r}"
    missing = [name for name in _REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        hint = (
            "give a folder written by scripts/distill_static_embedder.py"
            if explicit
            else "reinstall langchain-episodic"
        )
        msg = f"{where} lacks {', '.join(missing)} of a static embedding model: {hint}"
        raise FileNotFoundError(msg)
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    if not isinstance(config, dict):
        msg = f"{where}: {CONFIG_FILE} must hold a JSON object"
        raise ValueError(msg)
    raw = (folder / EMBEDDINGS_FILE).read_bytes()
    expected = config.get("embeddings_sha256")
    if expected is not None and hashlib.sha256(raw).hexdigest() != expected:
        msg = f"{where}: {EMBEDDINGS_FILE} does not match the sha256 its {CONFIG_FILE} records"
        raise ValueError(msg)
    matrix = np.load(io.BytesIO(raw), allow_pickle=False)
    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    vocabulary = tokenizer.get_vocab()
    if (
        matrix.ndim != 2
        or matrix.shape[0] != len(vocabulary)
        or matrix.shape[1] == 0
        or matrix.dtype.kind != "f"
    ):
        msg = (
            f"{where}: {EMBEDDINGS_FILE} must be a float matrix with one row per token of "
            f"{TOKENIZER_FILE} ({len(vocabulary)}), not {matrix.dtype} of shape {matrix.shape}"
        )
        raise ValueError(msg)
    if matrix.dtype != np.float16:
        msg = f"{where}: {EMBEDDINGS_FILE} must hold float16 values, not {matrix.dtype}"
        raise ValueError(msg)
    vectors: NDArray[np.float16] = matrix
    vectors.setflags(write=False)
    max_length = config.get("max_length", _DEFAULT_MAX_LENGTH)
    # model2vec cuts each text to max_length times the median token length (in
    # characters) before tokenising, then the tokenizer truncates to max_length tokens.
    median = int(np.median([len(token) for token in vocabulary]))
    tokenizer.no_padding()
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(int(max_length))
    unk_id = _unk_id(tokenizer)
    name = str(config.get("model_name") or f"static-{folder.name}-{vectors.shape[1]}")
    max_chars = None if max_length is None else int(max_length) * median
    normalize, fallback = bool(config.get("normalize", True)), _fallback(vectors, unk_id)
    return _Model(name, vectors, tokenizer, unk_id, max_chars, normalize, fallback, config)


def _model(path: str | os.PathLike[str] | None) -> _Model:
    explicit = path is not None
    packaged = Path(str(resources.files("langchain_episodic.embeddings"))) / PACKAGED_MODEL_DIR
    folder = Path(path).expanduser() if path is not None else packaged
    key = str(folder.resolve())
    with _LOCK:
        model = _CACHE.get(key)
        if model is None:
            model = _CACHE[key] = _load(folder, explicit)
        return model


class StaticEmbeddings(Embeddings):
    """Static token embeddings distilled from all-MiniLM-L6-v2; numpy only, offline.

    The model is loaded once per process and folder: creating another instance is
    cheap. Instances are thread-safe.

    Setup:
        Nothing to install beyond ``langchain-episodic``: the model ships with it.

    Instantiate:
        ```python
        from langchain_episodic.embeddings.static import StaticEmbeddings

        embeddings = StaticEmbeddings()  # the packaged model
        other = StaticEmbeddings(path="models/my-static-model")  # another folder
        ```

    Examples:
        >>> import numpy as np
        >>> embeddings = StaticEmbeddings()
        >>> login, signin, dark = embeddings.embed_documents([
        ...     "Implement a login form with email validation",
        ...     "Build a sign-in page that checks the e-mail address",
        ...     "Add dark mode to the settings screen",
        ... ])
        >>> len(login) == embeddings.dimension
        True
        >>> bool(np.dot(login, signin) > np.dot(login, dark))
        True
        >>> embeddings.embed_query("") == embeddings.embed_query("🙂🙂")  # no known token
        True

    Args:
        path: A folder holding ``embeddings.npy``, ``tokenizer.json`` and
            ``config.json`` (as ``scripts/distill_static_embedder.py`` writes them);
            ``None`` (the default) for the model packaged with langchain-episodic.

    Raises:
        FileNotFoundError: The folder lacks one of those files; the message names
            ``path=`` and the missing files.
        ValueError: The files do not form a model (a matrix of another shape or
            dtype, a checksum that does not match).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is not None and not isinstance(path, str | os.PathLike):
            msg = f"path must be a str or os.PathLike, not {type(path).__name__}"
            raise TypeError(msg)
        self._model = _model(path)
        self._path = None if path is None else Path(path)

    @property
    def model_name(self) -> str:
        """The model's name, e.g. ``"static-minilm-l6-v2-256"`` (from its config)."""
        return self._model.name

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return int(self._model.vectors.shape[1])

    @property
    def path(self) -> Path | None:
        """The folder given as ``path=``, or ``None`` for the packaged model."""
        return self._path

    @property
    def config(self) -> dict[str, Any]:
        """A copy of the model's ``config.json`` (source model, distillation, checksum)."""
        return json.loads(json.dumps(self._model.config))  # type: ignore[no-any-return]

    @property
    def fallback_vector(self) -> list[float]:
        """The vector of every text without a known token (``""``, ``"🙂"``).

        The unit-length vector of the tokenizer's unknown token, in float16 as every
        other vector; a fixed unit vector (all components equal) if the model has no
        usable unknown-token row.
        """
        result: list[float] = self._model.fallback.tolist()
        return result

    def __repr__(self) -> str:
        where = "" if self._path is None else f"path={str(self._path)!r}"
        return f"{type(self).__name__}({where})"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text: the unit-length mean of its token vectors.

        Args:
            texts: The texts to embed.

        Returns:
            One vector of `dimension` floats per text, in order.

        Raises:
            TypeError: ``texts`` is not a list (or tuple) of strings; the message
                names the first offending item.
        """
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            msg = f"texts must be a list of str, not {type(texts).__name__}"
            raise TypeError(msg)
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                msg = f"texts[{index}] must be a str, not {type(text).__name__}"
                raise TypeError(msg)
        result: list[list[float]] = self.encode(texts).tolist()
        return result

    def embed_query(self, text: str) -> list[float]:
        """Embed one query text exactly as a document of the same text.

        Args:
            text: The text to embed.

        Returns:
            Its vector of `dimension` floats.

        Raises:
            TypeError: ``text`` is not a string.
        """
        if not isinstance(text, str):
            msg = f"text must be a str, not {type(text).__name__}"
            raise TypeError(msg)
        result: list[float] = self.encode([text])[0].tolist()
        return result

    def encode(self, texts: Sequence[str]) -> NDArray[np.float16]:
        """Embed ``texts`` into a float16 matrix, one unit-length row per text.

        The arithmetic is model2vec's (``StaticModel.encode``): float32 sums of the
        token vectors in token order, divided by the count, rounded to float16, then
        scaled to unit length in float32 and rounded to float16 again.

        Args:
            texts: The texts to embed (not checked: see `embed_documents`).

        Returns:
            An array of shape ``(len(texts), dimension)``.
        """
        out = np.empty((len(texts), self.dimension), dtype=np.float16)
        for start in range(0, len(texts), _CHUNK):
            out[start : start + _CHUNK] = _encode_chunk(self._model, texts[start : start + _CHUNK])
        return out


def _encode_chunk(model: _Model, texts: Sequence[str]) -> NDArray[np.float16]:
    """model2vec's ``StaticModel._encode_batch``, with the fallback for token-less texts."""
    if model.max_chars is not None:
        texts = [text[: model.max_chars] for text in texts]
    encode_batch = getattr(model.tokenizer, "encode_batch_fast", model.tokenizer.encode_batch)
    id_lists: list[list[int]] = [e.ids for e in encode_batch(list(texts), add_special_tokens=False)]
    if model.unk_id is not None:
        unk = model.unk_id
        id_lists = [[token for token in ids if token != unk] for ids in id_lists]
    means = np.zeros((len(id_lists), model.vectors.shape[1]), dtype=np.float16)
    # Texts of one token count are averaged together, as model2vec does: numpy's mean
    # of float16 rows sums them in float32 in token order (a reduceat or a float32
    # sum may add them in another order and round differently).
    by_length: dict[int, list[int]] = defaultdict(list)
    for row, ids in enumerate(id_lists):
        if ids:
            by_length[len(ids)].append(row)
    for rows in by_length.values():
        id_matrix = np.array([id_lists[row] for row in rows], dtype=np.int64)
        means[rows] = model.vectors[id_matrix].mean(axis=1)
    if model.normalize:
        wide = means.astype(np.float32)
        norm = np.linalg.norm(wide, axis=1, keepdims=True) + 1e-32
        means = (wide / norm).astype(np.float16)
    empty = [row for row, ids in enumerate(id_lists) if not ids]
    if empty:
        means[empty] = model.fallback
    return means
