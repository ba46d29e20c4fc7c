"""The exceptions: one root, the standard bases callers already catch, messages that name."""

from __future__ import annotations

import pytest

from langchain_episodic import errors
from langchain_episodic.errors import (
    CreditError,
    EpisodeForgottenError,
    EpisodeValidationError,
    EpisodicError,
    EpisodicValueError,
    MalformedRecordWarning,
    NamespaceNotFoundError,
)


@pytest.mark.parametrize("name", errors.__all__)
def test_everything_raised_is_an_episodic_error(name: str) -> None:
    assert issubclass(getattr(errors, name), EpisodicError)


def test_value_errors_and_warnings_keep_their_standard_bases() -> None:
    assert issubclass(EpisodicValueError, ValueError)
    assert issubclass(EpisodeValidationError, ValueError)
    assert issubclass(MalformedRecordWarning, UserWarning)


def test_messages_name_what_went_wrong() -> None:
    assert "'r1'" in str(CreditError("r1", "default", "no injection record names it"))
    missing = NamespaceNotFoundError("team-b", "InMemoryEpisodeStore()", ["team-a"])
    assert "team-b" in str(missing)
    assert "'team-a'" in str(missing)
    forgotten = EpisodeForgottenError("default", {"ep-2": ("erasure-1", 0.0)})
    assert "'ep-2'" in str(forgotten)
    assert "erasure-1" in str(forgotten)
