"""Hypothesis settings and strategies shared by the fuzz tests.

Every fuzz test runs with :func:`fuzz_settings`: derandomized (the same examples on
every run and machine, so CI is reproducible), no example database, no deadline
(Chroma calls vary in speed), and few examples where each one touches Chroma.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from langchain_episodic import OutcomeStatus, TaskCategory
from langchain_episodic.model.episode import MAX_TIMESTAMP


def fuzz_settings(max_examples: int) -> settings:
    """``max_examples`` on top of the suite's profile (derandomized, no database, no
    deadline; see tests/conftest.py), allowing slow and large examples."""
    return settings(
        max_examples=max_examples,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# Any value of any JSON-ish or Python type, to throw at a field.
ANY_VALUE: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(),  # NaN, +-inf, -0.0, subnormals
    st.text(max_size=20),
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.sampled_from([object(), math.pi, 1j, "success", "debugging", " ", "", "\n\t"]),
)

# Timestamps a new episode may carry: seconds from 1970 to 2200, bounds included.
TIMESTAMPS = st.floats(min_value=0.0, max_value=MAX_TIMESTAMP) | st.sampled_from(
    [0.0, 1_780_000_000.0, MAX_TIMESTAMP]
)

WORDS = (
    "implement fix login form bug parser csv payment refactor tests cache retry "
    "session email password service api module crash handler signup"
).split()

# Descriptions made of real words: every one embeds to a non-zero hashing vector.
DESCRIPTIONS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def valid_episode_fields(
    draw: st.DrawFn, *, text: st.SearchStrategy[str] | None = None
) -> dict[str, Any]:
    """Keyword arguments of a valid ``make_episode`` call, drawn widely."""
    text = text if text is not None else st.text(max_size=40)
    nonblank = text.filter(lambda s: bool(s.strip()))
    total = draw(st.integers(min_value=0, max_value=10**6))
    return {
        "episode_id": draw(nonblank),
        "description": draw(nonblank),
        "category": draw(st.sampled_from(TaskCategory)),
        "complexity": draw(st.floats(min_value=0.0, max_value=1.0)),
        "reward": draw(st.floats(min_value=0.0, max_value=1.0)),
        "outcome": draw(st.sampled_from(OutcomeStatus)),
        "timestamp": draw(TIMESTAMPS),
        "iterations": draw(st.integers(min_value=1, max_value=2**62)),
        "strategy": draw(nonblank),
        "message": draw(text),
        "tests_passed": draw(st.integers(min_value=0, max_value=total)),
        "tests_total": total,
        "solution": draw(text),
    }
