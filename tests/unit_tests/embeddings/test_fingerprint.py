"""The embedding model is part of the store: fingerprint, check on open, legacy, migration, CLI.

The store-agnostic half (every store refuses another model and accepts the same one)
is in tests/store_suite/test_behaviour.py; here: the fingerprint itself, and the
memory, migration and command line on real embedded Chroma.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, EpisodicValueError
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.embeddings.builtin import (
    builtin_embeddings_for,
    builtin_expression,
    default_embeddings,
)
from langchain_episodic.embeddings.fingerprint import (
    PROBE_TEXT,
    SAME_MODEL_SIMILARITY,
    SKETCH_SIZE,
    EmbedderFingerprint,
    fingerprint_embeddings,
    fingerprint_from_vector,
    model_name,
)
from langchain_episodic.errors import (
    EmbeddingMismatchError,
    ReadOnlyMemoryError,
    StoreConfigurationError,
)
from langchain_episodic.migration import migrate_namespace
from langchain_episodic.service.opening import EMBEDDER_STATE_KEY
from tests.helpers.cli import assert_one_line_error, run
from tests.helpers.episodes import QUERIES, corpus

REPO = Path(__file__).resolve().parents[3]
HASHING = HashingEmbeddings()
OTHER_HASHING = HashingEmbeddings(char_ngram_min=2, char_ngram_max=4, bigram_weight=1.0)


class MixedEmbeddings(Embeddings):
    """Another model of HashingEmbeddings' class and dimension: its vectors, mixed.

    Each vector is rotated by a fixed orthogonal matrix: the same geometry (recall in
    it works as well), another vector space.
    """

    model_name = "mixed-384"

    def __init__(self, seed: int = 7) -> None:
        matrix = np.random.default_rng(seed).standard_normal((384, 384))
        self.rotation = np.linalg.qr(matrix)[0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = np.asarray(HASHING.embed_documents(texts)) @ self.rotation
        return [list(map(float, row)) for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


CALLS: list[str] = []


class CountingEmbeddings(HashingEmbeddings):
    """HashingEmbeddings that log their calls in CALLS."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        CALLS.append(f"documents:{len(texts)}")
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        CALLS.append("query")
        return super().embed_query(text)


class ZeroEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[0.0] * 384 for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [0.0] * 384


def open_on(
    path: Path, embeddings: Embeddings | None = HASHING, **kwargs: object
) -> EpisodicMemory:
    """The memory at ``path``, opened with ``embeddings`` (``None``: the package default)."""
    return EpisodicMemory(store=ChromaEpisodeStore(path=path), embeddings=embeddings, **kwargs)  # type: ignore[arg-type]


def built(path: Path, embeddings: Embeddings | None = HASHING, n: int = 6) -> Path:
    """A Chroma folder holding ``n`` episodes embedded with ``embeddings``; closed."""
    memory = open_on(path, embeddings)
    memory.record_many(corpus(n))
    memory.store.close()  # type: ignore[attr-defined]
    return path


# --------------------------------------------------------------------------- the fingerprint


def test_a_fingerprint_names_class_model_dimension_and_sketches_the_probe() -> None:
    fingerprint = fingerprint_embeddings(HASHING)
    assert fingerprint is not None
    assert fingerprint.embedder == "langchain_episodic.embeddings.hashing.HashingEmbeddings"
    assert fingerprint.model == model_name(HASHING)
    assert "dimensions=384 char_ngram=3-5" in str(fingerprint.model)
    assert fingerprint.dimension == 384
    assert len(fingerprint.sketch) == SKETCH_SIZE
    data = json.loads(fingerprint.to_json())
    assert set(data) == {"version", "embedder", "model", "dimension", "sketch"}
    assert EmbedderFingerprint.from_json(fingerprint.to_json()) == fingerprint
    assert len(fingerprint.to_json()) < 600  # kept in collection metadata, read on every query


def test_the_same_model_gives_the_same_fingerprint_twice_and_a_new_object_too() -> None:
    first, second = fingerprint_embeddings(HASHING), fingerprint_embeddings(HashingEmbeddings())
    assert first is not None
    assert second is not None
    assert first.to_json() == second.to_json()
    assert first.mismatch(second) is None


def test_the_same_model_gives_the_same_fingerprint_in_another_process() -> None:
    code = (
        "from langchain_episodic.embeddings import HashingEmbeddings, fingerprint_embeddings\n"
        "print(fingerprint_embeddings(HashingEmbeddings()).to_json())"
    )
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.strip()
    there = EmbedderFingerprint.from_json(printed)
    here = fingerprint_embeddings(HASHING)
    assert there is not None
    assert here is not None
    assert here.mismatch(there) is None
    assert here.similarity(there) > 0.99999


def test_float_noise_is_tolerated_and_another_space_is_not() -> None:
    vector = np.asarray(HASHING.embed_documents([PROBE_TEXT])[0])
    stored = fingerprint_from_vector(HASHING, vector.tolist())
    noise = np.random.default_rng(0).standard_normal(vector.shape)
    for scale in (1e-7, 1e-5, 1e-3):  # float32 rounding, BLAS, GPU / half precision
        noisy = fingerprint_from_vector(HASHING, (vector + scale * noise / np.sqrt(384)).tolist())
        assert stored.mismatch(noisy) is None, scale
    assert stored.mismatch(fingerprint_from_vector(HASHING, (vector * 3.0).tolist())) is None
    mixed = fingerprint_embeddings(MixedEmbeddings())
    assert mixed is not None
    assert "embed a probe text differently" in str(stored.mismatch(mixed))


@pytest.mark.parametrize(
    "other",
    [
        HashingEmbeddings(dimensions=256),
        HashingEmbeddings(char_ngram_min=2, char_ngram_max=4),
        HashingEmbeddings(bigram_weight=0.6),
        HashingEmbeddings(char_weight=0.3),
        MixedEmbeddings(),
    ],
)
def test_another_model_is_told_apart(other: Embeddings) -> None:
    stored, given = fingerprint_embeddings(HASHING), fingerprint_embeddings(other)
    assert stored is not None
    assert given is not None
    assert stored.mismatch(given) is not None
    assert stored.similarity(given) < SAME_MODEL_SIMILARITY or given.dimension != 384


def test_model_names_come_from_the_usual_attributes() -> None:
    class Named(Embeddings):
        def __init__(self, **attributes: object) -> None:
            self.__dict__.update(attributes)

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [1.0, 0.0]

    assert model_name(Named(model_name="all-MiniLM-L6-v2")) == "all-MiniLM-L6-v2"
    assert model_name(Named(model="text-embedding-3-small")) == "text-embedding-3-small"
    assert model_name(Named(model_id="amazon.titan-embed-text-v2:0")) == (
        "amazon.titan-embed-text-v2:0"
    )
    assert model_name(Named()) is None
    fingerprint = fingerprint_embeddings(Named(model="m"))
    assert fingerprint is not None
    assert fingerprint.describe().endswith("Named model='m' (2 dimensions)")


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[]", '{"version": 99}', '{"version": 1, "dimension": 3}', "null"],
)
def test_an_unreadable_fingerprint_reads_as_none(text: str) -> None:
    assert EmbedderFingerprint.from_json(text) is None


def test_a_model_without_a_usable_probe_vector_has_no_fingerprint() -> None:
    assert fingerprint_embeddings(ZeroEmbeddings()) is None


# --------------------------------------------------------------------------- on open


def test_a_new_namespace_records_the_fingerprint_and_the_same_model_reopens(
    tmp_path: Path,
) -> None:
    path = built(tmp_path / "m", None)  # the package's default model
    store = ChromaEpisodeStore(path=path)
    recorded = EmbedderFingerprint.from_json(str(store.read_state("default", EMBEDDER_STATE_KEY)))
    assert recorded == fingerprint_embeddings(default_embeddings())
    store.close()
    code = (
        "import sys\n"
        "from langchain_episodic import ChromaEpisodeStore, EpisodicMemory\n"
        "memory = EpisodicMemory(store=ChromaEpisodeStore(path=sys.argv[1]))\n"
        "print(len(memory), memory.recall('Fix the login bug', top_k=1)[0].episode.episode_id)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "6"


@pytest.mark.parametrize(
    ("other", "reason"),
    [
        (HashingEmbeddings(dimensions=256), "its vectors have a dimension of 384, the given"),
        (OTHER_HASHING, "the two models embed a probe text differently"),
        (MixedEmbeddings(), "the two models embed a probe text differently"),
    ],
)
def test_another_model_is_refused_naming_both_on_a_short_first_line(
    tmp_path: Path, other: Embeddings, reason: str
) -> None:
    path = built(tmp_path / "m")
    with pytest.raises(EmbeddingMismatchError) as refused:
        open_on(path, other)
    error = refused.value
    message = str(error)
    first, *details = message.splitlines()
    assert first.startswith("namespace='default' was embedded with HashingEmbeddings, not ")
    assert len(first) <= 150
    assert all(len(line) <= 200 for line in details)
    assert f"store:        ChromaEpisodeStore(path={str(path)!r}" in message  # the folder
    assert reason in message
    assert "HashingEmbeddings model='dimensions=384 " in message  # the stored model
    given = fingerprint_embeddings(other)
    assert given is not None
    assert given.describe() in message  # the given model
    assert "open it with the stored model (embeddings=HashingEmbeddings())" in message
    assert "migrate_namespace(" in message
    assert "on_embedding_mismatch='read-only'" in message
    assert isinstance(error, StoreConfigurationError)
    assert (error.namespace, error.given) == ("default", given.describe())


def test_the_check_costs_one_probe_on_open_and_nothing_on_record_or_recall() -> None:
    CALLS.clear()
    # No background: its one batch per model and process is counted in test_background.
    memory = EpisodicMemory(embeddings=CountingEmbeddings(), background=())
    assert CALLS == ["documents:1"]
    memory.record_many(corpus(4))
    memory.recall(QUERIES[0])
    assert CALLS == ["documents:1", "documents:4", "query"]


def test_a_model_without_a_usable_probe_is_left_to_the_vector_checks() -> None:
    memory = EpisodicMemory(embeddings=ZeroEmbeddings())
    with pytest.raises(EpisodicValueError, match="zero vector"):
        memory.record_many(corpus(1))


def test_an_invalid_mismatch_policy_is_named() -> None:
    with pytest.raises(EpisodicValueError, match="on_embedding_mismatch='ignore'"):
        EpisodicMemory(on_embedding_mismatch="ignore")  # type: ignore[arg-type]


def test_read_only_opens_without_the_stored_model_and_refuses_to_embed(tmp_path: Path) -> None:
    path = built(tmp_path / "m", MixedEmbeddings())
    reader = open_on(path, None, on_embedding_mismatch="read-only")
    assert len(reader) == 6
    assert [e.episode_id for e in reader.episodes()] == [e.episode_id for e in corpus(6)]
    assert reader.skill_profiles()
    with pytest.raises(ReadOnlyMemoryError) as refused:
        reader.recall(QUERIES[0])
    assert str(refused.value).startswith(
        "cannot recall: this memory is open read-only because namespace='default' was "
        "embedded with MixedEmbeddings, not with the given StaticEmbeddings.\n"
    )
    assert "open it writable with the stored model" in str(refused.value)
    assert refused.value.operation == "recall"
    assert "mixed-384" in refused.value.stored
    with pytest.raises(ReadOnlyMemoryError, match=r"^cannot record: this memory is open read-only"):
        reader.record_many(corpus(8))
    with pytest.raises(EmbeddingMismatchError):  # what it raised before: still caught so
        reader.record_many(corpus(8))
    assert len(reader) == 6


# --------------------------------------------------------------------------- legacy


def legacy(path: Path, embeddings: Embeddings, n: int = 6) -> Path:
    """What an earlier version left: records and vectors, no fingerprint."""
    episodes = corpus(n)
    vectors = np.asarray(
        embeddings.embed_documents([e.task.description for e in episodes]), dtype=np.float32
    )
    with ChromaEpisodeStore(path=path) as store:
        store.add("default", episodes, vectors, first_seq=0)
        assert store.read_state("default", EMBEDDER_STATE_KEY) is None
    return path


def test_a_legacy_collection_adopts_the_model_that_built_it(tmp_path: Path) -> None:
    path = legacy(tmp_path / "old", HASHING)
    memory = open_on(path)
    assert len(memory) == 6
    assert memory.recall(QUERIES[0], top_k=1)
    packed = memory.store.read_state("default", EMBEDDER_STATE_KEY)
    assert EmbedderFingerprint.from_json(str(packed)) == fingerprint_embeddings(HASHING)
    memory.store.close()  # type: ignore[attr-defined]
    with pytest.raises(EmbeddingMismatchError, match="HashingEmbeddings model='dimensions=384"):
        open_on(path, OTHER_HASHING)  # from now on checked by the recorded fingerprint


@pytest.mark.parametrize(
    ("other", "reason"),
    [
        (HashingEmbeddings(dimensions=256), "cannot be searched with the given model's 256-"),
        (OTHER_HASHING, "re-embedding its latest episode's task finds the nearest stored"),
        (MixedEmbeddings(), "re-embedding its latest episode's task finds the nearest stored"),
    ],
)
def test_a_legacy_collection_refuses_another_model_clearly(
    tmp_path: Path, other: Embeddings, reason: str
) -> None:
    path = legacy(tmp_path / "old", HASHING)
    with pytest.raises(EmbeddingMismatchError, match="never recorded") as refused:
        open_on(path, other)
    assert reason in str(refused.value)
    assert str(refused.value).startswith(
        "namespace='default' was embedded with a model whose fingerprint was never recorded"
    )
    with ChromaEpisodeStore(path=path) as store:  # nothing recorded for the refused model
        assert store.read_state("default", EMBEDDER_STATE_KEY) is None


def test_an_unreadable_fingerprint_is_checked_against_the_data_again(tmp_path: Path) -> None:
    path = built(tmp_path / "m")
    with ChromaEpisodeStore(path=path) as store:
        store.write_state("default", EMBEDDER_STATE_KEY, "{damaged")
    with pytest.raises(EmbeddingMismatchError, match="never recorded"):
        open_on(path, HashingEmbeddings(dimensions=256))
    memory = open_on(path)
    assert len(memory) == 6
    packed = memory.store.read_state("default", EMBEDDER_STATE_KEY)
    assert EmbedderFingerprint.from_json(str(packed)) == fingerprint_embeddings(HASHING)


# --------------------------------------------------------------------------- migration


def test_migration_re_embeds_from_model_a_into_model_b(tmp_path: Path) -> None:
    path = built(tmp_path / "m", HASHING)
    new_model = HashingEmbeddings(dimensions=256)
    store = ChromaEpisodeStore(path=path)
    source = EpisodicMemory(store=store, embeddings=HASHING)
    target = EpisodicMemory(store=store, namespace="minilm", embeddings=new_model)
    report = migrate_namespace(source, target)
    assert (report.copied, report.target_count) == (6, 6)
    packed = store.read_state("minilm", EMBEDDER_STATE_KEY)
    assert EmbedderFingerprint.from_json(str(packed)) == fingerprint_embeddings(new_model)
    store.close()
    reopened = open_on(path, new_model, namespace="minilm")
    hits = reopened.recall("Fix the login bug where sessions expire too early", top_k=1)
    assert hits[0].episode.episode_id == "ep-1"
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    reopened.store.close()  # type: ignore[attr-defined]
    with pytest.raises(EmbeddingMismatchError):
        open_on(path, HASHING, namespace="minilm")


def test_migration_works_without_the_stored_model(tmp_path: Path) -> None:
    path = built(tmp_path / "m", MixedEmbeddings())  # say its model is gone
    store = ChromaEpisodeStore(path=path)
    source = EpisodicMemory(store=store, on_embedding_mismatch="read-only")
    target = EpisodicMemory(store=store, namespace="rebuilt")
    assert migrate_namespace(source, target).target_count == 6
    assert target.recall(QUERIES[0], top_k=1)


# --------------------------------------------------------------------------- command line


def test_the_cli_refuses_to_recall_or_import_with_another_model_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = str(built(tmp_path / "m", MixedEmbeddings()))
    code, out, err = run(capsys, "--path", path, "recall", QUERIES[0])
    assert (code, out) == (2, "")
    assert_one_line_error(
        err, "MixedEmbeddings model='mixed-384'", "StaticEmbeddings", "--collection"
    )
    lines = tmp_path / "more.jsonl"
    lines.write_text(json.dumps(corpus(8)[7].to_dict()) + "\n")
    code, _, err = run(capsys, "--path", path, "import", str(lines))
    assert code == 2
    assert_one_line_error(err, "mixed-384", "the command line embeds with")


def test_the_cli_reads_a_memory_of_another_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = str(built(tmp_path / "m", MixedEmbeddings()))
    code, out, _ = run(capsys, "--path", path, "stats")
    assert code == 0
    assert "episodes    6\n" in out
    code, out, _ = run(capsys, "--path", path, "export", "-")
    assert code == 0
    assert len(out.splitlines()) == 6
    # The command line re-embeds it with its own model into a new memory.
    target = str(tmp_path / "hashed")
    code, _, err = run(capsys, "--path", path, "migrate", "--to-path", target, "-q")
    assert code == 0, err
    code, out, _ = run(capsys, "--path", target, "recall", QUERIES[0], "--json")
    assert code == 0
    assert json.loads(out)["results"]


# --------------------------------------------------------------------------- the default change


def test_a_memory_of_the_old_default_is_refused_by_the_new_one_saying_how_to_open_it(
    tmp_path: Path,
) -> None:
    path = built(tmp_path / "m", HashingEmbeddings())  # the default before 0.2
    with pytest.raises(EmbeddingMismatchError) as refused:
        open_on(path, None)
    assert "open it with the stored model (embeddings=HashingEmbeddings())" in str(refused.value)
    assert refused.value.stored_expression == "HashingEmbeddings()"
    assert len(open_on(path, HashingEmbeddings())) == 6
    custom = built(tmp_path / "c", OTHER_HASHING)
    with pytest.raises(EmbeddingMismatchError) as refused:
        open_on(custom, None)
    assert refused.value.stored_expression == (
        "HashingEmbeddings(char_ngram_min=2, char_ngram_max=4, bigram_weight=1.0)"
    )


def test_a_legacy_memory_of_the_old_default_gets_the_same_advice(tmp_path: Path) -> None:
    path = legacy(tmp_path / "old", HashingEmbeddings())
    with pytest.raises(EmbeddingMismatchError, match="never recorded") as refused:
        open_on(path, None)
    assert "(embeddings=HashingEmbeddings())" in str(refused.value)
    other = legacy(tmp_path / "other", MixedEmbeddings())
    with pytest.raises(EmbeddingMismatchError) as refused:
        open_on(other, None)
    assert refused.value.stored_expression is None


def test_only_the_packages_own_models_are_rebuilt_from_a_fingerprint() -> None:
    for model in (HashingEmbeddings(), OTHER_HASHING, default_embeddings()):
        fingerprint = fingerprint_embeddings(model)
        assert fingerprint is not None
        rebuilt = builtin_embeddings_for(fingerprint)
        assert rebuilt is not None
        assert fingerprint_embeddings(rebuilt) == fingerprint
    mixed = fingerprint_embeddings(MixedEmbeddings())
    assert mixed is not None
    assert builtin_embeddings_for(mixed) is None
    assert builtin_expression(mixed) is None


def test_the_cli_recalls_in_a_memory_of_the_old_default_with_that_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = str(built(tmp_path / "m", OTHER_HASHING))
    code, out, err = run(capsys, "--path", path, "recall", QUERIES[0], "--json")
    assert code == 0, err
    assert json.loads(out)["results"]
    lines = tmp_path / "more.jsonl"
    lines.write_text(json.dumps(corpus(8)[7].to_dict()) + "\n")
    code, _, err = run(capsys, "--path", path, "import", str(lines))
    assert code == 0, err
    assert len(open_on(Path(path), OTHER_HASHING)) == 7
