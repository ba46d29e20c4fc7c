"""Reading needs no write: a read-only folder opens read-only; odd folders are one line.

A folder on a read-only file system (where even root cannot write) opens for reading
through the API and every CLI read command, and each write is refused naming it. The
folder is made read-only for real: a read-only bind mount in a private mount namespace
of the child (``unshare -m``, when this runs as root with the privilege), else file
modes (a user who is not root). A lock path that is a folder, and a folder reopened
while its disk is still full, give one typed error naming the path and the cause; the
CLI prints one line and never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StoreConfigurationError
from langchain_episodic.stores.chroma._path_lock import LOCK_FILE_NAME
from tests.helpers.cli import QUERY
from tests.helpers.episodes import corpus

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONPATH": str(ROOT)}
# Remounts the folder ($1) read-only in the child's own mount namespace, then runs the rest.
READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && "$@"'


def _can_mount() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", READ_ONLY_MOUNT + ' && ! touch "$0/x"', ROOT, ROOT, "true"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


CAN_MOUNT = _can_mount()
if not CAN_MOUNT and os.geteuid() == 0:
    pytest.skip(
        "root without mount namespaces: no way here to make a folder read-only for root",
        allow_module_level=True,
    )


def read_only_run(folder: Path, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in a child that finds ``folder`` read-only."""
    if CAN_MOUNT:
        command = ["unshare", "-m", "sh", "-c", READ_ONLY_MOUNT, "sh", str(folder), *argv]
        return subprocess.run(
            command, capture_output=True, text=True, env=ENV, timeout=300, check=False
        )
    modes = {path: path.stat().st_mode for path in [folder, *folder.rglob("*")]}
    for path, mode in modes.items():
        path.chmod(mode & ~0o222)
    try:
        return subprocess.run(
            list(argv), capture_output=True, text=True, env=ENV, timeout=300, check=False
        )
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def memory_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("read-only") / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(1_100))
    return path


CHILD = textwrap.dedent(
    """
    import json, sys
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from langchain_episodic.errors import StoreReadOnlyError
    from tests.helpers.episodes import corpus
    store = ChromaEpisodeStore(path=sys.argv[1])
    memory = EpisodicMemory(store=store)
    found = {
        "count": len(memory),
        "ids": [r.episode.episode_id for r in memory.recall(sys.argv[2], ranking="article")],
        "episodes": sum(1 for _ in memory.episodes()),
        "got": sorted(memory.get_episodes(["ep-3"])),
    }
    for name, write in [
        ("record", lambda: memory.record(corpus(1_200)[1_150])),
        ("forget", lambda: memory.forget(["ep-3"], reason="test")),
        ("namespace", lambda: EpisodicMemory(store=store, namespace="new-one")),
    ]:
        try:
            write()
            found[name] = "written"
        except StoreReadOnlyError as error:
            found[name] = str(error)
    store.close()
    print(json.dumps(found))
    """
)


def test_a_read_only_folder_opens_for_reading_and_refuses_each_write_by_name(
    memory_folder: Path,
) -> None:
    with ChromaEpisodeStore(path=memory_folder) as store:
        results = EpisodicMemory(store=store).recall(QUERY, ranking="article")
        expected = [result.episode.episode_id for result in results]
    before = snapshot(memory_folder)
    done = read_only_run(memory_folder, [sys.executable, "-c", CHILD, str(memory_folder), QUERY])
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["count"] == 1_100
    assert found["ids"] == expected
    assert found["episodes"] == 1_100
    assert found["got"] == ["ep-3"]
    assert found["record"].startswith("cannot record episodes: path=")
    assert "is read-only (" in found["record"]
    assert found["forget"].startswith("cannot ")
    assert found["namespace"].startswith("cannot create namespace='new-one'")
    assert snapshot(memory_folder) == before  # nothing written, not even a lock file


READ_COMMANDS = [
    ["stats"],
    ["recall", QUERY],
    ["export", "-"],
    ["verify"],
    ["skills"],
    ["curve"],
    ["harmful"],
    ["lift"],
    ["lessons", "list"],
]


@pytest.mark.parametrize("argv", READ_COMMANDS, ids=lambda argv: argv[0])
def test_every_cli_read_command_works_on_a_read_only_folder(
    memory_folder: Path, argv: list[str]
) -> None:
    command = [sys.executable, "-m", "langchain_episodic", *argv, "--path", str(memory_folder)]
    done = read_only_run(memory_folder, command)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert done.stdout.strip()
    if argv[0] == "export":
        assert len(done.stdout.strip().splitlines()) == 1_100
    if argv[0] == "verify":
        assert "all readable" in done.stdout


def test_a_cli_write_on_a_read_only_folder_is_one_line_naming_the_write(
    memory_folder: Path,
) -> None:
    command = [
        sys.executable,
        "-m",
        "langchain_episodic",
        "forget",
        "ep-3",
        "--reason",
        "test",
        "--path",
        str(memory_folder),
    ]
    done = read_only_run(memory_folder, command)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: cannot ")
    assert "is read-only" in line


# ------------------------------------------------------------------ a lock path that is a folder


def test_a_lock_path_that_is_a_folder_is_one_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(4))
    (path / LOCK_FILE_NAME).unlink()
    (path / LOCK_FILE_NAME).mkdir()
    with pytest.raises(StoreConfigurationError) as caught:
        ChromaEpisodeStore(path=path)
    assert str(caught.value) == (
        f"path={str(path)!r} cannot hold a store: Is a directory ({path / LOCK_FILE_NAME})"
    )
    for argv in (["verify"], ["stats"], ["export", "-"]):
        done = subprocess.run(
            [sys.executable, "-m", "langchain_episodic", *argv, "--path", str(path)],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=300,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith(f"error: path={str(path)!r} cannot hold a store: Is a directory")


# ------------------------------------------------------------------ a disk still full

FULL_DISK = textwrap.dedent(
    """
    set -e
    mount -t tmpfs -o size=12m tmpfs "$1"
    "$2" -c "
    import sys
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from tests.helpers.episodes import corpus
    with ChromaEpisodeStore(path=sys.argv[1]) as store:
        EpisodicMemory(store=store).record_many(corpus(50))
    " "$1/memory"
    # No lock file yet (a folder copied in, say): taking the lock must create one.
    rm -f "$1/memory/.langchain-episodic-checked" "$1/memory/.langchain-episodic.lock"
    dd if=/dev/zero of="$1/filler" bs=4k 2>/dev/null || true
    set +e
    "$2" -c "
    import sys
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from langchain_episodic.errors import EpisodicError
    try:
        EpisodicMemory(store=ChromaEpisodeStore(path=sys.argv[1])).recall('login')
        print('opened')
    except EpisodicError as error:
        print('typed:', error)
    " "$1/memory"
    "$2" -m langchain_episodic stats --path "$1/memory"
    echo "stats exit $?"
    "$2" -m langchain_episodic verify --path "$1/memory"
    echo "verify exit $?"
    """
)


@pytest.mark.skipif(not CAN_MOUNT, reason="needs a tmpfs in a mount namespace (root)")
def test_reopening_while_the_disk_is_still_full_is_one_typed_error(tmp_path: Path) -> None:
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", FULL_DISK, "sh", str(mount_point), sys.executable],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-2:] == ["stats exit 2", "verify exit 2"], done.stdout
    opened = next(line for line in lines if line.startswith(("typed:", "opened")))
    assert opened.startswith("typed: "), opened
    assert "no space left on device" in opened.lower()
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 2, done.stderr  # one line each for stats and verify
    for error in errors:
        assert error.startswith("error: ")
        assert "no space left on device" in error.lower()
