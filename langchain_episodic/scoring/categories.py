"""Which category a task's text is about: a linear probe over its embedding (pure).

A task that arrives as text (an agent's message, ``build_replay(memory, "...")``) has no
category, yet skill profiles, weak categories and credit's baselines are per category.
The memory infers one with a small linear classifier, a `CategoryProbe`, fitted
per embedding model on labelled example tasks (packaged:
`default_category_examples`, 60 per
category) and on the memory's background (everyday texts, none about software), which
stand for "not the memory's work". A text's `features` are its unit vector and,
weighted by `OPENING_WEIGHT`, the unit vector of its first `HEAD_WORDS` words
(the opening verb phrase says what kind of work it is: "Fix the ...", "Write tests
...", "Design a ..."). The fit is ridge regression of one-hot labels on the features, in
closed form. The task gets the category that scores highest, or "unknown" when the
background scores highest: it reads more like an everyday request than like any kind of
software work.

Why a probe and not a vote of the nearest examples (the previous rule): the probe learns
which directions of the embedding tell the categories apart (test, fix, design, ...)
rather than how close a task is to one example about the same topic, and it learns the
"unknown" side from the background instead of a bar on the single nearest example, which
more examples raise by chance. Over the packaged examples and background
(``StaticEmbeddings``; ``benchmarks/category_cv.py``, 10-fold cross-validation): 94% of
the examples right and 0.5% of everyday texts given a category, where the best vote of
nearest examples (leave-one-out) got 90% and 5%.

Examples:
    >>> import numpy as np
    >>> rows = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> probe = CategoryProbe.fit(rows, ["a", "a", "b", "b"], ridge=0.1)
    >>> probe.classify(np.array([0.8, 0.2])), probe.classify(np.array([0.2, 0.8]))
    ('a', 'b')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["HEAD_WORDS", "OPENING_WEIGHT", "PROBE_RIDGE", "CategoryProbe", "features", "head"]

HEAD_WORDS = 2
"""Words of a task's opening that are compared on their own (its verb phrase)."""

OPENING_WEIGHT = 0.5
"""How much a text's opening weighs in its features against the whole text (1.0).

Cross-validated on the packaged examples and background (``benchmarks/category_cv.py``),
0.5 did as well as or better than 1.0 for both the packaged model and all-MiniLM-L6-v2;
without the opening (0.0) the topic outvotes the kind of work ("Write tests for the
parser" reads as writing a parser): 86% of the examples right against 94%."""

PROBE_RIDGE = 1.0
"""The ridge penalty of the probe's fit (``benchmarks/category_cv.py``: 0.3, 1 and 3 got
95%, 94% and 92% of the examples right; larger keeps more everyday texts ``unknown``)."""


def head(text: str, words: int = HEAD_WORDS) -> str:
    """The first ``words`` words of ``text`` (colons dropped).

    Examples:
        >>> head("Fix: the crash on empty carts")
        'Fix the'
    """
    return " ".join(text.replace(":", " ").split()[:words])


def _unit_rows(matrix: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
    rows = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    result: NDArray[np.float64] = rows / np.where(norms > 0, norms, 1.0)
    return result


def features(
    whole: NDArray[np.floating[Any]],
    opening: NDArray[np.floating[Any]],
    opening_weight: float = OPENING_WEIGHT,
) -> NDArray[np.float64]:
    """Each text's features: its unit vector, then ``opening_weight`` times its opening's.

    ``whole`` and ``opening`` hold one vector per text (a row each, or one vector).

    Examples:
        >>> features(np.array([3.0, 4.0]), np.array([0.0, 2.0])).tolist()
        [[0.6, 0.8, 0.0, 0.5]]
    """
    unit_opening = _unit_rows(opening) * opening_weight
    result: NDArray[np.float64] = np.hstack([_unit_rows(whole), unit_opening])
    return result


@dataclass(frozen=True)
class CategoryProbe:
    """A linear classifier of task features into categories, or none (the background).

    Attributes:
        labels: The categories, in the order of the weights' columns; a last column,
            when the probe was fitted with a background, stands for "none".
        weights: ``(features + 1) x columns``: the last row is the bias.
        has_background: Whether the last column is the background's.
    """

    labels: tuple[str, ...]
    weights: NDArray[np.float64]
    has_background: bool

    @classmethod
    def fit(
        cls,
        examples: NDArray[np.floating[Any]],
        labels: Sequence[str],
        background: NDArray[np.floating[Any]] | None = None,
        ridge: float = PROBE_RIDGE,
    ) -> CategoryProbe:
        """Ridge regression of one-hot labels on ``examples`` (and ``background``: none).

        Each example weighs 1 and each background row ``len(examples) /
        len(background)``: the background as a whole weighs as much as all the examples.

        Raises:
            ValueError: No examples, a label count that does not match, rows of
                unequal length, or a ridge that is not positive.
        """
        rows = np.atleast_2d(np.asarray(examples, dtype=np.float64))
        if not len(labels) or len(labels) != len(rows):
            msg = f"{len(rows)} example rows and {len(labels)} labels: expected as many, not 0"
            raise ValueError(msg)
        if not ridge > 0:
            msg = f"ridge={ridge!r} is invalid: must be positive"
            raise ValueError(msg)
        names = tuple(dict.fromkeys(labels))
        targets = np.eye(len(names) + 1)[[names.index(label) for label in labels]]
        weight = np.ones(len(rows))
        has_background = background is not None and len(background) > 0
        if has_background:
            extra = np.atleast_2d(np.asarray(background, dtype=np.float64))
            if extra.shape[1] != rows.shape[1]:
                msg = f"background rows of {extra.shape[1]} values, examples of {rows.shape[1]}"
                raise ValueError(msg)
            rows = np.vstack([rows, extra])
            targets = np.vstack([targets, np.eye(len(names) + 1)[[len(names)] * len(extra)]])
            weight = np.concatenate([weight, np.full(len(extra), len(labels) / len(extra))])
        else:
            targets = targets[:, :-1]
        design = np.hstack([rows, np.ones((len(rows), 1))])
        weighted = targets * weight[:, None]
        if design.shape[1] <= len(design):  # primal: (X'DX + rI) W = X'DY
            gram = design.T @ (design * weight[:, None]) + ridge * np.eye(design.shape[1])
            solved = np.linalg.solve(gram, design.T @ weighted)
        else:  # dual, when there are fewer rows than features: W = X'(DXX' + rI)^-1 DY
            kernel = (design @ design.T) * weight[:, None] + ridge * np.eye(len(design))
            solved = design.T @ np.linalg.solve(kernel, weighted)
        return cls(names, np.asarray(solved, dtype=np.float64), has_background)

    def classify(self, row: NDArray[np.floating[Any]]) -> str | None:
        """The category whose column scores highest for ``row``; ``None`` for the background.

        Raises:
            ValueError: ``row`` is not as long as the features the probe was fitted on.
        """
        return self.classify_many(np.asarray(row, dtype=np.float64).reshape(1, -1))[0]

    def classify_many(self, rows: NDArray[np.floating[Any]]) -> list[str | None]:
        """`classify` for each row of a matrix, at once.

        Raises:
            ValueError: A row is not as long as the features the probe was fitted on.
        """
        values = np.atleast_2d(np.asarray(rows, dtype=np.float64))
        if values.shape[1] != len(self.weights) - 1:
            msg = f"a row of {values.shape[1]} values; the probe takes {len(self.weights) - 1}"
            raise ValueError(msg)
        best = np.argmax(values @ self.weights[:-1] + self.weights[-1], axis=1)
        return [None if int(b) >= len(self.labels) else self.labels[int(b)] for b in best]
