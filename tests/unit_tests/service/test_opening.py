"""Opening a namespace: settings checked before anything is opened, a namespace that must
exist required."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory
from langchain_episodic.errors import EpisodicValueError, NamespaceNotFoundError
from langchain_episodic.service.opening import (
    check_background,
    check_holdout,
    require_namespace,
)
from tests.unit_tests.factories import make_episode


def test_a_holdout_is_a_fraction_below_one() -> None:
    assert check_holdout(0.2) == 0.2
    assert check_holdout(0) == 0
    with pytest.raises(EpisodicValueError, match="1: memory shown to no run"):
        check_holdout(1)
    with pytest.raises(EpisodicValueError, match=r"holdout=-0\.1"):
        check_holdout(-0.1)


def test_background_texts_are_a_sequence_of_non_empty_strings() -> None:
    assert check_background(["a", "b"]) == ("a", "b")
    with pytest.raises(TypeError, match="sequence of texts"):
        check_background("one string")  # not read as letters
    with pytest.raises(EpisodicValueError, match=r"background\[0\]"):
        check_background(["", "x"])


def test_a_namespace_that_must_exist_lists_what_exists(memory: EpisodicMemory) -> None:
    memory.for_namespace("team-a").record(make_episode(episode_id="a"))
    require_namespace(memory.store, "team-a")
    with pytest.raises(NamespaceNotFoundError, match=r"'team-b'.*namespaces there: .*'team-a'"):
        require_namespace(memory.store, "team-b")
