"""What one principal may put in another's replay, in a memory several principals share.

A memory declared shared (``EpisodicMemory(shared=True)``: one namespace that many
users, or agents acting for them, record into) is open to whoever can submit a task.
A red team reached the top-3 replay of 22-28% of unrelated victims' queries by keyword
stuffing, one 12,000-character text, or 100 near-duplicates, and displaced victims'
on-topic episodes. In a shared memory, recall therefore applies three rules, pure
functions here (the recall service applies them; a memory that is not shared keeps the
plain recall):

* **length-normalised similarity** (`length_factor`): a task longer than
  `NORMAL_TASK_CHARS` has its similarity scaled down by the square root of how
  much longer it is: a text that says everything matches every query a little, and
  that is no evidence about any one of them;
* **near-duplicates collapsed** (`shared_order`): of the episodes whose tasks
  are near-duplicates (word-set overlap, as credit groups them), one is shown, at the
  group's best rank: the one recorded first, so that a hundred copies take one slot and
  a copy of a victim's task recorded later (newer, so ranked higher) cannot push the
  original out;
* **a cap per principal** (`principal_slots`): one principal's episodes fill at
  most a third of a replay (at least one), whoever else recorded none. Episodes
  without a principal (``EpisodeSource.principal``) are not capped: the application
  sets it, from the run's context, for what untrusted users record.

Credit is bounded by principal too: an outcome credited ``by`` a principal is no
evidence for the episodes that principal recorded, and one principal's runs count for
an episode `PRINCIPAL_RUNS` times at most
(`UtilityBook`): many runs of one principal
neither raise nor lower an episode more than a few would.

Near-duplicates are collapsed among the `SHARED_CANDIDATES` most similar
episodes: a flood larger than that can still fill the candidates.

Examples:
    >>> round(length_factor(400), 2), round(length_factor(2_000), 2)
    (1.0, 0.5)
    >>> principal_slots(3), principal_slots(10)
    (1, 3)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

from langchain_episodic.scoring.evidence import near_duplicate_groups

__all__ = [
    "NORMAL_TASK_CHARS",
    "PRINCIPAL_RUNS",
    "SHARED_CANDIDATES",
    "length_factor",
    "principal_slots",
    "shared_order",
]

NORMAL_TASK_CHARS = 500
"""A task of up to this many characters keeps its similarity in a shared memory (the
replay shows a task cut to as many: ``TASK_CHARS``)."""

PRINCIPAL_RUNS = 3
"""In a shared memory, one principal's credited runs that count for one episode at most."""

SHARED_CANDIDATES = 64
"""Candidates a shared memory's recall fetches at least, so that collapsing a flood of
near-duplicates leaves other episodes to show."""

_Row = TypeVar("_Row")


def length_factor(chars: int) -> float:
    """What a task of ``chars`` characters keeps of its similarity in a shared memory.

    1 up to `NORMAL_TASK_CHARS`; beyond, ``sqrt(NORMAL_TASK_CHARS / chars)``: a
    12,000-character text keeps 0.2 of its similarity.
    """
    return 1.0 if chars <= NORMAL_TASK_CHARS else math.sqrt(NORMAL_TASK_CHARS / chars)


def principal_slots(top_k: int) -> int:
    """How many of a replay's ``top_k`` episodes one principal may fill: a third, at least 1."""
    return max(1, top_k // 3)


def shared_order(
    rows: Sequence[_Row],
    text: Callable[[_Row], str],
    principal: Callable[[_Row], str | None],
    top_k: int,
    recorded_at: Callable[[_Row], float] = lambda row: 0.0,
    requester: str | None = None,
) -> list[_Row]:
    """``rows`` (ranked, best first) as a shared memory shows them.

    Each group of near-duplicate tasks is shown once, at its best rank, by its member
    recorded first (``recorded_at``; ties: the better ranked); then each principal keeps
    its first `principal_slots` rows (rows without a principal are kept, and so
    are the ``requester``'s own: the recall is for it).

    Examples:
        >>> rows = [("copy", "fix the login bug", "eve", 9.0), ("c", "parse yaml", "eve", 5.0),
        ...         ("original", "fix the login bug", "bob", 1.0), ("d", "export csv", None, 2.0)]
        >>> kept = shared_order(rows, lambda r: r[1], lambda r: r[2], 3, lambda r: r[3])
        >>> [r[0] for r in kept]
        ['original', 'c', 'd']
    """
    groups = near_duplicate_groups([text(row) for row in rows])
    first: dict[int, _Row] = {}
    for row, group in zip(rows, groups, strict=True):
        if group not in first or recorded_at(row) < recorded_at(first[group]):
            first[group] = row
    slots = principal_slots(top_k)
    filled: Counter[str] = Counter()
    kept = []
    for group in dict.fromkeys(groups):  # each group once, at its best rank
        row = first[group]
        who = principal(row)
        if who is not None and who != requester:
            if filled[who] >= slots:
                continue
            filled[who] += 1
        kept.append(row)
    return kept
