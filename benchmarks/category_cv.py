"""How the category probe's settings were chosen: cross-validation on packaged data only.

10-fold cross-validation over the packaged labelled examples and the packaged background
(never the held-out sets of ``category_sets.py``): for each ridge penalty and opening
weight, how many examples get their own category, how many are called ``unknown``, and
how many everyday texts get a category. The defaults of
``langchain_episodic.scoring.categories`` (``PROBE_RIDGE``, ``OPENING_WEIGHT``) come
from this table.

    python benchmarks/category_cv.py [--minilm]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from langchain_episodic import StaticEmbeddings
from langchain_episodic.embeddings.background import default_background_texts
from langchain_episodic.embeddings.categories import default_category_examples
from langchain_episodic.scoring.categories import CategoryProbe, features, head

FOLDS = 10


def _unit(embeddings: Any, texts: list[str]) -> np.ndarray:
    matrix = np.asarray(embeddings.embed_documents(texts), dtype=np.float64)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2 instead")
    args = parser.parse_args(argv)
    if args.minilm:
        from langchain_episodic.embeddings.minilm import minilm_embeddings

        embeddings: Any = minilm_embeddings()
    else:
        embeddings = StaticEmbeddings()
    examples = default_category_examples()
    labels = [category for category, _ in examples]
    texts = [text for _, text in examples]
    background = list(default_background_texts())
    whole = _unit(embeddings, texts + background)
    opening = _unit(embeddings, [head(t) or t for t in texts + background])
    fold = np.random.default_rng(0).integers(0, FOLDS, len(whole))
    n = len(texts)
    print("| ridge | opening weight | examples right | examples unknown | everyday given one |")
    print("|---|---|---|---|---|")
    for weight in (0.0, 0.5, 1.0):
        rows = features(whole, opening, weight)
        for ridge in (0.3, 1.0, 3.0):
            got: list[str | None] = [None] * len(rows)
            for f in range(FOLDS):
                train = fold != f
                ex = train[:n]
                probe = CategoryProbe.fit(
                    rows[:n][ex],
                    [c for c, keep in zip(labels, ex, strict=True) if keep],
                    rows[n:][train[n:]],
                    ridge,
                )
                for i in np.flatnonzero(~train):
                    got[i] = probe.classify(rows[i])
            right = np.mean([g == c for g, c in zip(got[:n], labels, strict=True)])
            unknown = np.mean([g is None for g in got[:n]])
            leaked = np.mean([g is not None for g in got[n:]])
            print(f"| {ridge} | {weight} | {right:.1%} | {unknown:.1%} | {leaked:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
