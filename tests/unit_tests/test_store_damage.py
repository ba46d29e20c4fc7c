"""A library process never dies of a damaged folder it opens: a typed error names the file.

Chroma kills the process that loads a vector index whose links point past its elements
(SIGSEGV), and raises its own ``InternalError`` on other damage. Every kind of damage
here is opened in a child process, so that a crash fails the test rather than the test
runner; each gives :class:`StoreDamagedError` naming the damaged file, and never a raw
Chroma error. The checks run before Chroma reads the folder, and cost an open little
because files unchanged since last found sound are not read again: a file written since
is (``benchmarks/open_cost.py`` measures the cost).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicError,
    EpisodicMemory,
    StoreConfigurationError,
    StoreDamagedError,
)
from langchain_episodic.stores.chroma.precheck import CHECKED_FILE
from tests.helpers.cli import QUERY
from tests.helpers.damage import KINDS, damaged_copy, garble, segment_of
from tests.helpers.episodes import corpus

# Opens the memory, recalls, reads one episode and records one: prints what happened as
# JSON. A crash inside Chroma ends this child with a signal, which the test reports.
CHILD = textwrap.dedent(
    """
    import json, sys
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from langchain_episodic.errors import EpisodicError
    from tests.helpers.episodes import corpus
    try:
        memory = EpisodicMemory(store=ChromaEpisodeStore(path=sys.argv[1]))
        ids = [r.episode.episode_id for r in memory.recall(sys.argv[2], ranking="article")]
        got = sorted(memory.get_episodes(["ep-3", "ep-4"]))
        memory.record(corpus(1300)[1250])
        print(json.dumps({"ids": ids, "got": got, "count": len(memory)}))
    except Exception as error:
        print(json.dumps({
            "error": type(error).__name__,
            "episodic": isinstance(error, EpisodicError),
            "message": str(error),
        }))
    """
)


def in_a_child(path: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), QUERY],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, f"the child died ({done.returncode}): {done.stderr[-2000:]}"
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def sound_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,200 episodes: past Chroma's flush threshold, so the index has all its files."""
    path = tmp_path_factory.mktemp("sound") / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(1_200))
    return path


@pytest.fixture(scope="module")
def sound_answers(sound_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> object:
    copy = tmp_path_factory.mktemp("answers") / "memory"
    shutil.copytree(sound_folder, copy)
    return in_a_child(copy)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_damage_gives_the_typed_error_naming_the_file_never_a_crash(
    sound_folder: Path, tmp_path: Path, kind: str
) -> None:
    path = damaged_copy(sound_folder, tmp_path / "memory", kind)
    result = in_a_child(path)
    assert result.get("error") == "StoreDamagedError", result
    assert result["episodic"] is True
    message = str(result["message"])
    assert KINDS[kind] in message
    if kind.startswith("hnsw"):
        assert segment_of(sound_folder).name in message  # the segment's folder is named
    assert f"path={str(path)!r} is damaged" in message
    assert "restore the folder from a backup" in message
    assert "InternalError" not in message


def test_a_sound_folder_answers_and_takes_a_record(sound_answers: dict[str, object]) -> None:
    assert sound_answers.get("error") is None, sound_answers
    assert sound_answers["ids"]
    assert sound_answers["got"] == ["ep-3", "ep-4"]
    assert sound_answers["count"] == 1_201


def test_garbled_labels_chroma_finds_late_are_translated(
    sound_folder: Path, tmp_path: Path, sound_answers: dict[str, object]
) -> None:
    # Labels are read only when a search returns them: no structural check sees them,
    # and Chroma raises "Error finding id". The caller still gets the typed error.
    path = tmp_path / "memory"
    shutil.copytree(sound_folder, path)
    segment = segment_of(path)
    data = segment / "data_level0.bin"
    per_element = 1676  # 384 dimensions: 4 + 32 * 4 links, 384 * 4 vector, 8 label
    assert data.stat().st_size == 1_200 * per_element
    with open(data, "r+b") as handle:
        for slot in range(0, 1_200, 7):
            handle.seek(slot * per_element + per_element - 8)
            handle.write((10**15 + slot).to_bytes(8, "little"))
    result = in_a_child(path)
    if "error" not in result:  # Chroma may not reach a garbled label: then it answers right
        assert result == sound_answers
        return
    assert result["error"] == "StoreDamagedError", result
    message = str(result["message"])
    assert f"path={str(path)!r} is damaged" in message
    assert "Chroma said:" in message
    assert "restore the folder from a backup" in message


def test_a_file_garbled_after_a_clean_close_is_caught_despite_the_record(
    sound_folder: Path, tmp_path: Path
) -> None:
    path = tmp_path / "memory"
    shutil.copytree(sound_folder, path)
    with ChromaEpisodeStore(path=path) as store:  # checks and records the files as sound
        assert len(EpisodicMemory(store=store)) == 1_200
    assert (path / CHECKED_FILE).is_file()
    data = segment_of(path) / "data_level0.bin"
    size_before = data.stat().st_size
    garble(data, size_before // 3, size_before // 3)  # in place: same inode and size
    assert data.stat().st_size == size_before
    result = in_a_child(path)
    assert result.get("error") == "StoreDamagedError", result
    assert "data_level0.bin is damaged" in str(result["message"])


def test_damage_found_after_open_is_translated_on_every_read(
    sound_folder: Path, tmp_path: Path
) -> None:
    path = tmp_path / "memory"
    shutil.copytree(sound_folder, path)
    store = ChromaEpisodeStore(path=path)
    memory = EpisodicMemory(store=store)
    database = path / "chroma.sqlite3"
    garble(database, 4096, database.stat().st_size - 4096)  # every page but the first
    with open(database, "r+b") as handle:
        # A new change counter: sqlite drops the pages it cached at the next read.
        handle.seek(24)
        counter = int.from_bytes(handle.read(4), "big")
        handle.seek(24)
        handle.write((counter + 1).to_bytes(4, "big"))
    reads = {
        "recall": lambda: memory.recall(QUERY),
        "count": lambda: store.count("default"),
        "get": lambda: memory.get_episodes(["ep-3"]),
    }
    for read in reads.values():
        with pytest.raises(StoreDamagedError) as caught:
            read()
        assert "chroma.sqlite3 is damaged" in str(caught.value)
        assert isinstance(caught.value, (EpisodicError, StoreConfigurationError))
        assert caught.value.chroma_said
    store.close()


@pytest.mark.parametrize("command", ["stats", "recall", "export"])
@pytest.mark.parametrize("kind", ["hnsw data garbled", "sqlite truncated"])
def test_the_cli_says_a_damaged_folder_in_one_line(
    sound_folder: Path, tmp_path: Path, command: str, kind: str
) -> None:
    path = damaged_copy(sound_folder, tmp_path / "memory", kind)
    argv = {"stats": ["stats"], "recall": ["recall", QUERY], "export": ["export", "-"]}[command]
    done = subprocess.run(
        [sys.executable, "-m", "langchain_episodic", *argv, "--path", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: path=")
    assert KINDS[kind] in line
    assert "langchain-episodic verify" in line
