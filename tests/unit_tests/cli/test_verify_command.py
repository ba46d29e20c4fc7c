"""``langchain-episodic verify`` and ``ChromaEpisodeStore.verify`` on real on-disk Chroma."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicValueError
from langchain_episodic.embeddings.builtin import default_embeddings
from tests.helpers.cli import assert_one_line_error, filled, run
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

VECTOR = default_embeddings().embed_query("Implement login form")  # the memory's own model


def broken_json(record_id: str) -> str:
    data = make_episode(episode_id=record_id).to_dict()
    data["feedback"]["reward"] = 7
    return json.dumps(data)


FOREIGN = {
    "no-episode": {"seq": 12, "note": "another tool"},
    "bad-json": {"episode": "{oops", "seq": 13},
    "reward-7": {"episode": broken_json("reward-7"), "seq": 14},
    "no-seq": {"episode": json.dumps(make_episode(episode_id="no-seq").to_dict())},
    "dup-seq": {"episode": json.dumps(make_episode(episode_id="dup-seq").to_dict()), "seq": 3},
    "other-id": {"episode": json.dumps(make_episode(episode_id="someone").to_dict()), "seq": 17},
}
EXPECTED_REASONS = {
    "no-episode": "no episode JSON (found NoneType)",
    "bad-json": "episode JSON does not parse",
    "reward-7": "Feedback.reward=7 is invalid: must be between 0 and 1",
    "no-seq": "seq=None is not an integer",
    "dup-seq": "seq=3 repeats the seq of record id='ep-3'",
    "other-id": "holds episode_id='someone', not its record id",
}


def damaged(path: Path, namespace: str = "default") -> Path:
    """The 12-episode corpus plus six foreign records in ``namespace``."""
    filled(path, corpus(12), namespace)
    store = ChromaEpisodeStore(path=path)
    store.collection(namespace).add(
        ids=list(FOREIGN), embeddings=[VECTOR] * len(FOREIGN), metadatas=list(FOREIGN.values())
    )
    return path


def reported(out: str) -> dict[str, str]:
    rows = [re.match(r"id='([^']*)': (.*)", line) for line in out.splitlines()[1:]]
    assert all(rows), out
    return {row.group(1): row.group(2) for row in rows if row}


def test_a_sound_memory_verifies_clean(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = filled(tmp_path / "m", corpus(12))
    code, out, err = run(capsys, "--path", str(path), "verify")
    assert (code, err) == (0, "")
    assert out.strip() == (
        f"verified 12 records of namespace 'default' at path {str(path)!r}, "
        "collection 'episodes': all readable"
    )


@pytest.mark.parametrize("page_size", ["1", "4", "1000"])
def test_every_bad_record_is_listed_once_and_exit_code_is_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, page_size: str
) -> None:
    path = damaged(tmp_path / "m")
    code, out, err = run(capsys, "--path", str(path), "verify", "--page-size", page_size)
    assert (code, err) == (1, "")
    assert out.splitlines()[0].endswith(": 6 malformed")
    assert out.startswith("verified 18 records of namespace 'default'")
    lines = reported(out)
    assert list(lines) == list(FOREIGN)  # one line each, in the collection's order
    for record_id, reason in EXPECTED_REASONS.items():
        assert reason in lines[record_id]


def test_verify_reads_only_its_namespace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = damaged(tmp_path / "m", namespace="team-a")
    filled(path, corpus(3), namespace="team-b")
    assert run(capsys, "--path", str(path), "--namespace", "team-b", "verify")[0] == 0
    assert run(capsys, "--path", str(path), "verify", "--namespace", "team-a")[0] == 1


def test_verify_a_missing_memory_or_namespace_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "--path", str(tmp_path / "nothing"), "verify")
    assert code == 2
    assert_one_line_error(err, "no episodic memory at")
    assert not (tmp_path / "nothing").exists()
    path = filled(tmp_path / "m", corpus(2))
    code, _, err = run(capsys, "--path", str(path), "--namespace", "ghost", "verify")
    assert code == 2
    assert_one_line_error(err, "namespace 'ghost' not found")


def test_verify_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "verify" in out
    assert "verify found malformed records" in out


def test_store_verify_checks_page_size_and_changes_nothing(tmp_path: Path) -> None:
    path = damaged(tmp_path / "m")
    store = ChromaEpisodeStore(path=path)
    with pytest.raises(EpisodicValueError, match="page_size=0"):
        store.verify("default", page_size=0)
    first = [(f.record_id, f.reason) for f in store.verify("default", page_size=5)]
    again = [(f.record_id, f.reason) for f in store.verify("default", page_size=5)]
    assert first == again
    assert store.count("default") == 18
