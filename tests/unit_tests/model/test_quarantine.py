"""The quarantine log: events round-trip and a damaged log is refused."""

from __future__ import annotations

import json

import pytest

from langchain_episodic import (
    EpisodicValueError,
)
from langchain_episodic.model.quarantine import QuarantineEvent, decode_log, encode_log


def test_log_round_trips_and_validates() -> None:
    log = (
        QuarantineEvent("a", "quarantine", "why ü", 1.5, "me"),
        QuarantineEvent("a", "release", "because", 2.0),
    )
    assert decode_log(encode_log(log)) == log
    assert json.loads(encode_log(log))[1]["by"] is None
    with pytest.raises(EpisodicValueError, match="action='delete'"):
        QuarantineEvent("a", "delete", "x", 1.0)  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="at=nan"):
        QuarantineEvent("a", "release", "x", float("nan"))
