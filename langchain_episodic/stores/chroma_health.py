"""What is wrong with an embedded Chroma folder, found without letting Chroma crash us.

``langchain-episodic verify`` calls :func:`diagnose_folder` before it opens a folder:
Chroma raises internal errors on a damaged ``chroma.sqlite3``, and garbled vector index
files can kill the process that reads them (a segmentation fault inside Chroma). So:

* ``chroma.sqlite3`` is checked by sqlite itself, read-only: its header, then
  ``PRAGMA integrity_check``;
* each vector index segment's files are checked against their header (the format
  chroma-hnswlib writes), and ``index_metadata.pickle`` is walked opcode by opcode with
  :mod:`pickletools`, never unpickled;
* then a child process opens the store and reads every collection, so that a crash,
  whatever its cause, ends the child and is reported here.

Each problem is one line; an empty list means the folder is sound.
"""

from __future__ import annotations

import glob
import os
import pickletools
import signal
import sqlite3
import struct
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from langchain_episodic.stores._path_lock import acquire_path_lock

__all__ = [
    "LOW_SPACE",
    "RECOVERY",
    "IndexHeader",
    "diagnose_folder",
    "free_bytes",
    "index_segments",
    "read_index_header",
]

LOW_SPACE = 1 << 20
"""Bytes: with less free, a failed Chroma call on a folder is put down to a full disk
(Chroma reports it as an internal error about compaction or its log)."""

_SQLITE_MAGIC = b"SQLite format 3\x00"
_HNSW_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # 100 bytes: see read_index_header
RECOVERY = (
    "what to do: restore the folder from a backup (a copy made while no process held "
    "it); the damaged files are named above"
)

# Opens the store and reads every collection (a count, one record, one query by its
# vector); prints "ok" when everything could be read.
_PROBE = textwrap.dedent(
    """
    import sys
    import chromadb
    client = chromadb.PersistentClient(path=sys.argv[1])
    for collection in client.list_collections():
        collection.count()
        got = collection.get(limit=1, include=["embeddings"])
        vectors = got.get("embeddings")
        if vectors is not None and len(vectors):
            collection.query(query_embeddings=[vectors[0]], n_results=1)
    print("ok")
    """
)


def _sqlite_problems(database: str) -> list[str]:
    if not os.path.isfile(database):
        return ["chroma.sqlite3 is missing"]
    if os.path.getsize(database) == 0:
        return ["chroma.sqlite3 is empty (0 bytes)"]
    with open(database, "rb") as handle:
        if handle.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
            return ["chroma.sqlite3 is not a SQLite database: its header is damaged"]
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            rows = connection.execute("PRAGMA integrity_check").fetchall()
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        return [f"chroma.sqlite3 is damaged: {error}"]
    found = [str(row[0]) for row in rows if row and row[0] != "ok"]
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return [f"chroma.sqlite3 is damaged: {found[0]}{more}"]
    return []


@dataclass(frozen=True)
class IndexHeader:
    """What a vector index segment's ``header.bin`` says (the fields used here).

    Attributes:
        version: The format (chroma-hnswlib writes 1).
        max_elements: Slots the files have room for.
        count: Slots in use (``cur_element_count``).
        per_element: Bytes per slot in ``data_level0.bin``.
    """

    version: int
    max_elements: int
    count: int
    per_element: int

    @property
    def sound(self) -> bool:
        """Whether the numbers fit together (format 1, no more used slots than room)."""
        return (
            self.version == 1
            and self.count <= self.max_elements
            and (0 < self.per_element < 1 << 24)
        )


def index_segments(folder: str) -> list[str]:
    """The vector index segment folders under an embedded Chroma ``folder``, sorted."""
    headers = glob.glob(os.path.join(glob.escape(folder), "*", "header.bin"))
    return sorted(os.path.dirname(header) for header in headers)


def read_index_header(segment: str) -> IndexHeader | None:
    """The header of the segment, or ``None`` when ``header.bin`` is not 100 bytes.

    The layout chroma-hnswlib writes (format 1): version, offsetLevel0, max_elements,
    cur_element_count, size_data_per_element, label_offset, offsetData, maxlevel,
    enterpoint_node, maxM, maxM0, M, mult, ef_construction.
    """
    with open(os.path.join(segment, "header.bin"), "rb") as handle:
        raw = handle.read()
    if len(raw) != _HNSW_HEADER.size:
        return None
    fields = _HNSW_HEADER.unpack(raw)
    return IndexHeader(fields[0], fields[2], fields[3], fields[4])


def _segment_problems(segment: str) -> list[str]:
    name = os.path.basename(segment)
    header = read_index_header(segment)
    if header is None:
        return [f"vector index {name}: header.bin is damaged (not 100 bytes)"]
    if not header.sound:
        return [f"vector index {name}: header.bin is damaged (its numbers do not fit together)"]
    count, per_element = header.count, header.per_element
    problems = []
    data = os.path.join(segment, "data_level0.bin")
    if not os.path.isfile(data) or os.path.getsize(data) < count * per_element:
        problems.append(f"vector index {name}: data_level0.bin is shorter than its header says")
    pickled = os.path.join(segment, "index_metadata.pickle")
    if os.path.isfile(pickled):
        with open(pickled, "rb") as handle:
            raw = handle.read()
        try:
            for _ in pickletools.genops(raw):
                pass
        except Exception:  # any malformed opcode stream: damaged, whatever the reason
            problems.append(f"vector index {name}: index_metadata.pickle is damaged")
    return problems


def free_bytes(folder: str) -> int:
    """Bytes free for this user on the file system of ``folder`` (``LOW_SPACE`` if unknown)."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return LOW_SPACE  # cannot tell: not reported as full
    return stat.f_bavail * stat.f_frsize


def _probe_problems(folder: str, timeout: float) -> list[str]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, folder],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [f"Chroma did not finish reading the folder within {timeout:g} s"]
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        return [f"Chroma crashed ({name}) reading the folder: its vector index files are damaged"]
    if done.returncode != 0 or "ok" not in done.stdout:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit code {done.returncode}"
        if free_bytes(folder) < LOW_SPACE:
            return [
                f"no space left on device at {folder!r} ({free_bytes(folder)} bytes free): "
                f"Chroma cannot apply its log to read the folder ({last}); nothing "
                "acknowledged was lost: free space, then verify again"
            ]
        return [f"Chroma cannot read the folder: {last}"]
    return []


def diagnose_folder(
    folder: str, *, lock_timeout: float = 0.0, probe_timeout: float = 300.0
) -> list[str]:
    """One line per problem of the embedded Chroma folder ``folder``; empty if sound.

    Holds the folder's lock meanwhile, as a store would.

    Raises:
        StoreLockedError: Another process holds the folder after ``lock_timeout``.
    """
    lock = acquire_path_lock(folder, lock_timeout)
    try:
        problems = _sqlite_problems(os.path.join(folder, "chroma.sqlite3"))
        if problems:
            return problems  # Chroma cannot be asked anything about a database it cannot read
        for segment in index_segments(folder):
            problems += _segment_problems(segment)
        if problems:
            return problems
        return _probe_problems(folder, probe_timeout)
    finally:
        lock.release()
