"""Many namespaces in one embedded folder: bounded open indexes, every recall right.

Chroma caches ``RLIMIT_NOFILE // 5`` loaded indexes and evicts beyond; an index
evicted before it was saved reloads without its latest writes or fails with "Nothing
found on disk". At the usual limit of 1,024 the store used to lose 121 of 300 users'
recalls (raised as damage). The store now closes its client before Chroma would evict.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore
from langchain_episodic.errors import EpisodicValueError
from tests.helpers.many_users import fill, recalls_right

REPO = Path(__file__).resolve().parents[2]


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


LOW_LIMIT = textwrap.dedent(
    """
    import resource, sys
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    from langchain_episodic import ChromaEpisodeStore
    from tests.helpers.many_users import fill, recalls_right

    store = ChromaEpisodeStore(path=sys.argv[1])
    for user in range(260):
        fill(store, user)
    wrong = [user for user in range(260) if not recalls_right(store, user)]
    print(len(wrong), store.open_namespaces.cap, store.open_namespaces.reopens)
    store.close()
    """
)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_at_the_usual_descriptor_limit_every_user_of_many_recalls_right(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOW_LIMIT, str(tmp_path / "memory")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    wrong, cap, reopens = (int(word) for word in done.stdout.split())
    assert wrong == 0
    assert cap == 89  # (1024 - 128) // 10
    assert reopens >= 2


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_open_indexes_stay_under_the_cap_and_closed_ones_load_again(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "memory", max_open_namespaces=4)
    fill(store, 0)
    baseline = open_descriptors()
    for user in range(1, 30):
        fill(store, user)
        assert len(store.open_namespaces.names) <= 4
    assert store.open_namespaces.reopens >= 6
    # four namespaces hold at most two indexes of five files each
    assert open_descriptors() - baseline <= 4 * 10
    assert all(recalls_right(store, user) for user in range(30))
    store.close()
    again = ChromaEpisodeStore(path=tmp_path / "memory")  # the lock was released
    assert all(recalls_right(again, user) for user in (0, 17, 29))
    again.close()


def test_a_store_sharing_the_folder_in_the_process_is_never_reopened_under_another(
    tmp_path: Path,
) -> None:
    first = ChromaEpisodeStore(path=tmp_path / "memory", max_open_namespaces=2)
    second = ChromaEpisodeStore(path=tmp_path / "memory", max_open_namespaces=2)
    for user in range(6):
        fill(first if user % 2 else second, user)
    assert first.open_namespaces.reopens == second.open_namespaces.reopens == 0
    assert all(recalls_right(first, user) for user in range(6))
    second.close()
    fill(first, 6)
    fill(first, 7)  # alone now: it closes idle namespaces again
    assert first.open_namespaces.reopens >= 1
    assert all(recalls_right(first, user) for user in range(8))
    first.close()


def test_threads_using_many_namespaces_under_a_small_cap_all_recall_right(
    tmp_path: Path,
) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "memory", max_open_namespaces=3)
    for user in range(12):
        fill(store, user)
    wrong: list[int] = []
    failures: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for round_ in range(3):
                for user in range(offset, 12, 4):
                    if not recalls_right(store, (user + round_) % 12):
                        wrong.append(user)
        except BaseException as error:  # reported below, with the thread's traceback
            failures.append(error)

    threads = [threading.Thread(target=work, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    assert wrong == []
    store.close()


def test_a_bad_cap_is_refused_before_the_folder_is_opened(tmp_path: Path) -> None:
    with pytest.raises(EpisodicValueError, match="max_open_namespaces=0"):
        ChromaEpisodeStore(path=tmp_path / "memory", max_open_namespaces=0)
    assert not (tmp_path / "memory").exists()
