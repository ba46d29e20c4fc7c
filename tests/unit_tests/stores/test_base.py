"""What every store shares: unit vectors, journal entries, ids that must be stored."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import (
    DEFAULT_NAMESPACE,
    JournalEntry,
    require_stored,
    unit_rows,
)


def test_unit_rows_scales_one_vector_or_each_row() -> None:
    assert unit_rows(np.array([3.0, 4.0])).tolist() == [0.6, 0.8]
    assert unit_rows(np.array([[3.0, 4.0], [0.0, 2.0]])).tolist() == [[0.6, 0.8], [0.0, 1.0]]
    assert unit_rows(np.array([3.0, 4.0], dtype=np.float32)).dtype == np.float64


def test_a_journal_entry_is_immutable() -> None:
    entry = JournalEntry("outcome:r1", "r1", "{}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.payload = "changed"  # type: ignore[misc]


def test_ids_that_are_not_stored_are_refused_by_name() -> None:
    with pytest.raises(EpisodicValueError, match=r"\['x'\] are not stored.*quarantine"):
        require_stored(InMemoryEpisodeStore(), DEFAULT_NAMESPACE, ["x"], "quarantine")
