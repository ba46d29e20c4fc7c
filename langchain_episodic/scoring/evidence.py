"""What credit says of each candidate at recall: shared among near-duplicates, maybe sampled.

Credit (`langchain_episodic.scoring.credit`) keeps evidence per episode. At recall
two rules turn it into the utility each candidate is ranked by:

* **Near-duplicates share evidence.** An agent that solves the same task five times
  records five episodes; a fix should not have to earn its credit five times. Among
  the candidates of one recall, episodes whose task descriptions have at least
  `DUPLICATE_OVERLAP` of their words in common (Jaccard overlap of their word
  sets, case and punctuation ignored) form a group, and each is ranked by the
  group's pooled evidence. Text, not vectors: a store need not return vectors, and
  "the same task, worded the same" is what a person means by a duplicate.
* **Exploration, when asked.** By default a candidate's utility is the posterior
  mean, which is already optimistic about the unknown: a never-credited episode
  starts at the prior's 0.5, ahead of those that proved harmful. With an ``rng`` it
  is a draw from the posterior instead (Thompson sampling, as the strategy selector
  does for strategies), so an episode with little evidence is sometimes shown and
  its evidence grows. Seeded and reproducible with the memory's injected RNG.

Examples:
    >>> groups = near_duplicate_groups([
    ...     "Fix the login crash on empty passwords",
    ...     "Fix the login crash on empty passwords.",
    ...     "Write unit tests for the CSV parser",
    ... ])
    >>> groups
    [0, 0, 2]
    >>> from langchain_episodic.scoring.credit import EpisodeUtility
    >>> rows = {"a": EpisodeUtility("a", helped=3.0, hurt=0.0, credited_runs=3, updated_at=0.0)}
    >>> utilities = candidate_utilities(["a", "b", "c"], groups, rows, now=0.0)
    >>> [round(u, 2) for u in utilities]
    [0.58, 0.58, 0.5]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from langchain_episodic.scoring.credit import EpisodeUtility
from langchain_episodic.scoring.decay import RANKING_PRIOR, ranking_mean

__all__ = ["DUPLICATE_OVERLAP", "candidate_utilities", "near_duplicate_groups", "word_set"]

DUPLICATE_OVERLAP = 0.8
"""Jaccard overlap of two task descriptions' word sets that makes them near-duplicates."""

_WORD = re.compile(r"\w+")


def word_set(text: str) -> frozenset[str]:
    """The lower-cased words of ``text`` (letters, digits and underscores)."""
    return frozenset(_WORD.findall(text.lower()))


def near_duplicate_groups(texts: Sequence[str], overlap: float = DUPLICATE_OVERLAP) -> list[int]:
    """A group index per text: the index of the first text it is a near-duplicate of.

    Texts whose word sets overlap by at least ``overlap`` (Jaccard) are linked, and
    linked texts form one group (transitively), named by its first member.
    """
    words = [word_set(text) for text in texts]
    parent = list(range(len(texts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    sizes = [len(w) for w in words]
    for i in range(len(words)):
        for j in range(i):
            # Jaccard >= overlap needs the smaller set to be >= overlap of the larger.
            if min(sizes[i], sizes[j]) < overlap * max(sizes[i], sizes[j]):
                continue
            shared = len(words[i] & words[j])
            union = sizes[i] + sizes[j] - shared
            if union and shared / union >= overlap:
                a, b = root(i), root(j)
                parent[max(a, b)] = min(a, b)
    return [root(i) for i in range(len(texts))]


def candidate_utilities(
    ids: Sequence[str],
    groups: Sequence[int],
    rows: Mapping[str, EpisodeUtility],
    now: float,
    rng: np.random.Generator | None = None,
) -> list[float]:
    """Each candidate's utility from its group's pooled evidence at ``now``.

    Shrunk towards 0.5 by `RANKING_PRIOR`
    pseudo-runs a side (`ranking_mean`), so one
    run moves the ranking a little.

    Args:
        ids: The candidates' episode ids.
        groups: Their near-duplicate groups (`near_duplicate_groups`).
        rows: Credit's rows by episode id; a candidate without one has no evidence.
        now: The time evidence decays to.
        rng: Draw each group's utility from its Beta posterior (exploration);
            the posterior mean when ``None``.
    """
    pooled: dict[int, list[float]] = {}
    for episode_id, group in zip(ids, groups, strict=True):
        evidence = pooled.setdefault(group, [0.0, 0.0])
        row = rows.get(episode_id)
        if row is not None:
            decay = row.decay(now)
            evidence[0] += row.helped * decay
            evidence[1] += row.hurt * decay
    if rng is None:
        value = {group: ranking_mean(helped, hurt) for group, (helped, hurt) in pooled.items()}
    else:
        value = {
            group: float(rng.beta(RANKING_PRIOR + helped, RANKING_PRIOR + hurt))
            for group, (helped, hurt) in sorted(pooled.items())
        }
    return [value[group] for group in groups]
