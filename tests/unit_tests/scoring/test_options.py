"""``RecallOptions``: how to recall, checked when built."""

from __future__ import annotations

import dataclasses

import pytest

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.scoring.options import RECALL_OPTION_NAMES, RecallOptions


def test_the_defaults_recall_three() -> None:
    options = RecallOptions()
    assert options.top_k == 3
    assert options.fetch_k is None


@pytest.mark.parametrize("top_k", [0, -1])
def test_a_top_k_below_one_is_refused_by_name(top_k: int) -> None:
    with pytest.raises(EpisodicValueError, match="top_k"):
        RecallOptions(top_k=top_k)


def test_every_field_is_a_recall_option_name() -> None:
    fields = {field.name for field in dataclasses.fields(RecallOptions)}
    assert fields <= RECALL_OPTION_NAMES
    assert {"top_k", "fetch_k"} <= RECALL_OPTION_NAMES
