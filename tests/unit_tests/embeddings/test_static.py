"""Unit tests for StaticEmbeddings, the packaged static model distilled from MiniLM."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_tests.unit_tests import EmbeddingsUnitTests
from tokenizers import Tokenizer

from langchain_episodic.embeddings.static import StaticEmbeddings

PACKAGED = Path(__file__).resolve().parents[3] / "langchain_episodic/embeddings/data/static_minilm"
FILES = ("embeddings.npy", "tokenizer.json", "config.json")

TEXTS = [
    "Fix the crash when a user logs in with an empty password",
    "Implement cursor-based pagination for the orders REST endpoint",
    "Ünïcode täsk: sortiere die Liste 🚀",
    "???",
    "def f(x): return x + 1",
    "a",
]
# Texts without a single token the model knows.
TOKENLESS = ["", " ", "\n\t  ", "🙂🙂", "[UNK]", "𓀀𓀁"]

# (query, paraphrase sharing almost no words, unrelated task)
PARAPHRASES = [
    (
        "Implement a login form with email validation",
        "Build a sign-in page that checks the e-mail address",
        "Add dark mode to the settings screen",
    ),
    (
        "Fix the crash when a user logs in with an empty password",
        "Login handler throws on blank credentials",
        "Plot a histogram of monthly sales",
    ),
    (
        "Add an in-memory cache with expiry for user profile lookups",
        "Memoize account detail fetches for a few minutes",
        "Rename the variables in the billing module",
    ),
]


@pytest.fixture(scope="module")
def embeddings() -> StaticEmbeddings:
    return StaticEmbeddings()


@pytest.fixture(scope="module")
def config() -> dict[str, object]:
    loaded: dict[str, object] = json.loads((PACKAGED / "config.json").read_text("utf-8"))
    return loaded


def _long_text(words: int, seed: int) -> str:
    rng = random.Random(seed)
    vocabulary = "login cache parser thread deadlock timeout schema migration index query".split()
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def _reference(texts: list[str]) -> np.ndarray:
    """The model's definition, written out again: unit mean of the known tokens' rows."""
    matrix = np.load(PACKAGED / "embeddings.npy").astype(np.float64)
    tokenizer = Tokenizer.from_file(str(PACKAGED / "tokenizer.json"))
    tokenizer.no_truncation()
    unk = tokenizer.token_to_id("[UNK]")
    rows = []
    for text in texts:
        ids = [i for i in tokenizer.encode(text, add_special_tokens=False).ids if i != unk]
        mean = matrix[ids].mean(axis=0)
        rows.append(mean / np.linalg.norm(mean))
    return np.array(rows)


# ----------------------------------------------------------------- the packaged files


def test_is_a_langchain_embeddings(embeddings: StaticEmbeddings) -> None:
    assert isinstance(embeddings, Embeddings)


def test_packaged_files_are_there_and_small() -> None:
    for name in (*FILES, "NOTICE"):
        assert (PACKAGED / name).is_file(), name
    matrix = np.load(PACKAGED / "embeddings.npy")
    assert matrix.dtype == np.float16
    assert (PACKAGED / "embeddings.npy").stat().st_size < 30_000_000
    assert np.isfinite(matrix).all()


def test_config_describes_the_weights(config: dict[str, object]) -> None:
    data = (PACKAGED / "embeddings.npy").read_bytes()
    assert config["embeddings_sha256"] == hashlib.sha256(data).hexdigest()
    matrix = np.load(PACKAGED / "embeddings.npy")
    assert config["dimension"] == matrix.shape[1]
    assert config["source_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert config["normalize"] is True
    assert config["pooling"] == "mean"
    assert str(config["command"]).startswith("python scripts/distill_static_embedder.py")


def test_notice_states_the_licences() -> None:
    notice = (PACKAGED / "NOTICE").read_text("utf-8")
    assert "Apache License, Version 2.0" in notice
    assert "all-MiniLM-L6-v2" in notice
    assert "MIT" in notice  # model2vec


def test_name_and_dimension_come_from_the_config(
    embeddings: StaticEmbeddings, config: dict[str, object]
) -> None:
    assert embeddings.model_name == config["model_name"]
    assert embeddings.model_name == f"static-minilm-l6-v2-{embeddings.dimension}"
    assert embeddings.dimension == config["dimension"]
    assert embeddings.path is None
    assert embeddings.config == config


# --------------------------------------------------------------------------- vectors


def test_vectors_are_unit_length_floats_of_the_dimension(embeddings: StaticEmbeddings) -> None:
    vectors = embeddings.embed_documents(TEXTS + TOKENLESS)
    assert len(vectors) == len(TEXTS + TOKENLESS)
    for vector in vectors:
        assert len(vector) == embeddings.dimension
        assert all(type(x) is float for x in vector)
        assert np.isfinite(vector).all()
        # float16 components: unit length to float16's precision
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=2e-3)


def test_vectors_follow_the_definition(embeddings: StaticEmbeddings) -> None:
    """Unit mean of the token rows, checked without model2vec (to float16's precision)."""
    texts = [*TEXTS, _long_text(200, 1)]
    got = np.array(embeddings.embed_documents(texts))
    np.testing.assert_allclose(got, _reference(texts), atol=2e-3)


def test_different_texts_get_different_vectors(embeddings: StaticEmbeddings) -> None:
    vectors = embeddings.embed_documents(TEXTS)
    assert len({tuple(v) for v in vectors}) == len(TEXTS)


def test_query_and_document_of_one_text_are_equal(embeddings: StaticEmbeddings) -> None:
    documents = embeddings.embed_documents(TEXTS)
    assert [embeddings.embed_query(text) for text in TEXTS] == documents


def test_a_vector_does_not_depend_on_its_batch(embeddings: StaticEmbeddings) -> None:
    # more texts than one pooling chunk (1024), of many lengths
    texts = [_long_text(1 + i % 40, i) for i in range(2100)] + TEXTS
    batch = embeddings.embed_documents(texts)
    for index in (0, 1023, 1024, 1025, 2099, 2100, len(texts) - 1):
        assert embeddings.embed_query(texts[index]) == batch[index]
    assert embeddings.embed_documents(texts[1000:1100]) == batch[1000:1100]


def test_empty_batch(embeddings: StaticEmbeddings) -> None:
    assert embeddings.embed_documents([]) == []


def test_truncates_to_the_first_512_tokens(embeddings: StaticEmbeddings) -> None:
    head = _long_text(600, 2)  # far more than 512 tokens
    assert embeddings.embed_query(head) == embeddings.embed_query(head + " " + _long_text(50, 3))
    assert embeddings.embed_query(head) != embeddings.embed_query(_long_text(100, 2))


async def test_async_twins(embeddings: StaticEmbeddings) -> None:
    assert await embeddings.aembed_documents(TEXTS) == embeddings.embed_documents(TEXTS)
    assert await embeddings.aembed_query(TEXTS[0]) == embeddings.embed_query(TEXTS[0])


# ----------------------------------------------------------- texts without any token


@pytest.mark.parametrize("text", TOKENLESS)
def test_tokenless_text_gets_the_fallback(embeddings: StaticEmbeddings, text: str) -> None:
    vector = embeddings.embed_query(text)
    assert vector == embeddings.fallback_vector
    assert np.isfinite(vector).all()
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=2e-3)


def test_fallback_is_the_unknown_tokens_direction(embeddings: StaticEmbeddings) -> None:
    matrix = np.load(PACKAGED / "embeddings.npy").astype(np.float64)
    unk = Tokenizer.from_file(str(PACKAGED / "tokenizer.json")).token_to_id("[UNK]")
    expected = matrix[unk] / np.linalg.norm(matrix[unk])
    np.testing.assert_allclose(embeddings.fallback_vector, expected, atol=1e-3)
    # ... which no text with a known token gets
    assert embeddings.fallback_vector not in embeddings.embed_documents(TEXTS)


def test_unknown_tokens_are_dropped(embeddings: StaticEmbeddings) -> None:
    assert embeddings.embed_query("cache 🙂 expiry") == embeddings.embed_query("cache expiry")


# ------------------------------------------------------------------------- semantics


@pytest.mark.parametrize(("query", "paraphrase", "unrelated"), PARAPHRASES)
def test_paraphrase_is_closer_than_an_unrelated_task(
    embeddings: StaticEmbeddings, query: str, paraphrase: str, unrelated: str
) -> None:
    q, p, u = np.array(embeddings.embed_documents([query, paraphrase, unrelated]))
    assert float(q @ p) > float(q @ u) + 0.05


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("bad", [None, 3, b"bytes", ["a"]])
def test_embed_query_refuses_a_non_str(embeddings: StaticEmbeddings, bad: object) -> None:
    with pytest.raises(TypeError, match=r"^text must be a str, not "):
        embeddings.embed_query(bad)  # type: ignore[arg-type]


def test_embed_documents_names_the_bad_item(embeddings: StaticEmbeddings) -> None:
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str, not int"):
        embeddings.embed_documents(["fine", 1, "also fine"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"texts\[0\] must be a str, not NoneType"):
        embeddings.embed_documents([None])  # type: ignore[list-item]


@pytest.mark.parametrize("bad", ["a single string", None, 7])
def test_embed_documents_refuses_a_non_list(embeddings: StaticEmbeddings, bad: object) -> None:
    with pytest.raises(TypeError, match=r"^texts must be a list of str, not "):
        embeddings.embed_documents(bad)  # type: ignore[arg-type]


def test_path_must_be_a_path() -> None:
    with pytest.raises(TypeError, match=r"path must be a str or os\.PathLike, not int"):
        StaticEmbeddings(path=3)  # type: ignore[arg-type]


# -------------------------------------------------------------------- loading, path=


def test_instances_share_one_loaded_model() -> None:
    first, second = StaticEmbeddings(), StaticEmbeddings()
    assert first._model is second._model


def test_loads_a_folder_given_as_path(tmp_path: Path, embeddings: StaticEmbeddings) -> None:
    for name in FILES:
        shutil.copy(PACKAGED / name, tmp_path / name)
    other = StaticEmbeddings(path=tmp_path)
    assert other.path == tmp_path
    assert repr(other) == f"StaticEmbeddings(path={str(tmp_path)!r})"
    assert other.model_name == embeddings.model_name
    assert other._model is not embeddings._model  # loaded from that folder
    assert other.embed_documents(TEXTS) == embeddings.embed_documents(TEXTS)
    assert StaticEmbeddings(path=str(tmp_path))._model is other._model


def test_a_folder_without_the_files_is_refused_naming_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"path='.*' lacks embeddings.npy, tokenizer.json"):
        StaticEmbeddings(path=tmp_path)
    shutil.copy(PACKAGED / "tokenizer.json", tmp_path / "tokenizer.json")
    with pytest.raises(FileNotFoundError, match=r"path=.* lacks embeddings\.npy, config\.json of"):
        StaticEmbeddings(path=tmp_path / ".")


def test_weights_that_do_not_match_their_checksum_are_refused(tmp_path: Path) -> None:
    for name in FILES:
        shutil.copy(PACKAGED / name, tmp_path / name)
    matrix = np.load(tmp_path / "embeddings.npy")
    matrix[5, 0] += np.float16(0.5)
    np.save(tmp_path / "embeddings.npy", matrix)
    with pytest.raises(ValueError, match=r"path=.*embeddings\.npy does not match the sha256"):
        StaticEmbeddings(path=tmp_path)


def test_a_matrix_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    for name in FILES[1:]:
        shutil.copy(PACKAGED / name, tmp_path / name)
    config = json.loads((tmp_path / "config.json").read_text("utf-8"))
    del config["embeddings_sha256"]
    (tmp_path / "config.json").write_text(json.dumps(config), "utf-8")
    np.save(tmp_path / "embeddings.npy", np.zeros((10, 8), dtype=np.float16))
    with pytest.raises(ValueError, match=r"one row per token of tokenizer\.json"):
        StaticEmbeddings(path=tmp_path)


# ------------------------------------------------------------------- determinism


_CHILD = textwrap.dedent(
    """
    import json, sys
    from langchain_episodic.embeddings.static import StaticEmbeddings
    texts = json.loads(sys.stdin.read())
    json.dump(StaticEmbeddings().embed_documents(texts), sys.stdout)
    """
)


def test_deterministic_across_processes(embeddings: StaticEmbeddings) -> None:
    root = Path(__file__).resolve().parents[3]
    texts = [*TEXTS, *TOKENLESS, _long_text(700, 4)]
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "TOKENIZERS_PARALLELISM": "true"}
        child = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=json.dumps(texts),
            capture_output=True,
            env=env,
            cwd=root,
            text=True,
            timeout=120,
            check=False,
        )
        assert child.returncode == 0, child.stderr
        outputs.append(json.loads(child.stdout))
    expected = embeddings.embed_documents(texts)
    assert outputs[0] == expected
    assert outputs[1] == expected


# ----------------------------------------------------------- equality with model2vec


def test_equal_to_model2vec(tmp_path: Path, embeddings: StaticEmbeddings) -> None:
    """model2vec's own StaticModel over the same files gives the same float16 vectors."""
    model2vec = pytest.importorskip("model2vec")
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    # The model2vec layout: the same matrix as model.safetensors, same tokenizer and config.
    matrix = np.load(PACKAGED / "embeddings.npy")
    safetensors_numpy.save_file({"embeddings": matrix}, str(tmp_path / "model.safetensors"))
    for name in ("tokenizer.json", "config.json"):
        shutil.copy(PACKAGED / name, tmp_path / name)
    model = model2vec.StaticModel.from_pretrained(tmp_path)
    texts = [*TEXTS, *(_long_text(n, n) for n in (1, 7, 8, 9, 63, 511, 512, 513, 900, 3000))]
    texts += [text for triple in PARAPHRASES for text in triple]
    theirs = model.encode(texts)
    ours = embeddings.encode(texts)
    assert theirs.dtype == ours.dtype == np.float16
    assert ours.tobytes() == theirs.tobytes()
    assert embeddings.embed_documents(texts) == theirs.tolist()
    # model2vec leaves a token-less text at zero; here it gets the fallback
    assert not model.encode(TOKENLESS).any()
    assert embeddings.embed_documents(TOKENLESS) == [embeddings.fallback_vector] * len(TOKENLESS)


# --------------------------------------------------------- LangChain standard tests


class TestStaticEmbeddingsStandard(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[StaticEmbeddings]:
        return StaticEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, object]:
        return {}
