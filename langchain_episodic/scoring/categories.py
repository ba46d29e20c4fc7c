"""Which category a task's text is about, from its nearest labelled examples (pure).

A task that arrives as text (an agent's message, ``build_replay(memory, "...")``) has no
category, yet skill profiles, weak categories and credit's baselines are per category.
The memory infers one: the task against labelled example tasks (packaged:
:func:`~langchain_episodic.embeddings.categories.default_category_examples`), by a
similarity-weighted vote of its :data:`CATEGORY_NEIGHBOURS` nearest examples, where a
similarity is the mean of the whole texts' and of their first :data:`HEAD_WORDS` words'
(the opening verb phrase says what kind of work it is: "Fix the ...", "Write tests
...", "Design a ..."; with whole texts alone the topic outvoted it: 78% against 93% on
``benchmarks/categories.py``). It says "unknown" when the task is not about the memory's
work: its nearest example is no more similar to it than its everyday background (the
relevance test's bar).

Example:
    >>> import numpy as np
    >>> labels = ["debugging", "debugging", "testing", "testing"]
    >>> vote(np.array([0.8, 0.7, 0.75, 0.1]), labels, bar=0.3, k=3)
    'debugging'
    >>> vote(np.array([0.2, 0.1, 0.25, 0.1]), labels, bar=0.3, k=3) is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["CATEGORY_NEIGHBOURS", "HEAD_WORDS", "head", "vote"]

CATEGORY_NEIGHBOURS = 9
"""Nearest labelled examples that vote on a task's category (``benchmarks/categories.py``:
9, 11 and 13 did as well on either half of its labelled set; 3 to 7 worse)."""

HEAD_WORDS = 2
"""Words of a task's opening that are compared on their own (its verb phrase)."""


def head(text: str, words: int = HEAD_WORDS) -> str:
    """The first ``words`` words of ``text`` (colons dropped).

    Example:
        >>> head("Fix: the crash on empty carts")
        'Fix the'
    """
    return " ".join(text.replace(":", " ").split()[:words])


def vote(
    similarities: NDArray[np.floating[Any]],
    labels: Sequence[str],
    bar: float | None,
    k: int = CATEGORY_NEIGHBOURS,
) -> str | None:
    """The label the ``k`` most similar examples vote for, weighted by similarity.

    ``None`` when there are no examples, or the most similar one does not exceed ``bar``
    (the task is no more like the examples than like its everyday background).
    """
    values = np.asarray(similarities, dtype=np.float64)
    if not len(values):
        return None
    order = np.argsort(-values, kind="stable")[:k]
    if bar is not None and not values[order[0]] > bar:
        return None
    scores: dict[str, float] = {}
    for row in order:
        scores[labels[row]] = scores.get(labels[row], 0.0) + max(0.0, float(values[row]))
    return max(scores, key=lambda label: (scores[label], -list(scores).index(label)))
