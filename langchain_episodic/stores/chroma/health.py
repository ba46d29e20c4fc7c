"""What is wrong with an embedded Chroma folder, found without letting Chroma crash us.

``langchain-episodic verify`` calls `diagnose_folder` before it opens a folder:
Chroma raises internal errors on a damaged ``chroma.sqlite3``, and garbled vector index
files can kill the process that reads them (a segmentation fault inside Chroma). So:

* ``chroma.sqlite3`` is checked by sqlite itself, read-only: its header, then
  ``PRAGMA integrity_check``;
* each vector index segment's files are checked against their header (the format
  chroma-hnswlib writes): sizes, and every graph link read from the files without
  loading them (a link past the last element is what crashes a reader), and
  ``index_metadata.pickle`` is walked opcode by opcode with `pickletools`, never
  unpickled; a segment the database says was saved must have its files;
* then a child process opens the store and reads every collection, so that a crash,
  whatever its cause, ends the child and is reported here.

Each problem is one line naming the file; an empty list means the folder is sound.
`structural_problems` is the cheap part (no integrity check, no child process),
which every store runs before Chroma opens a folder
(`chroma_precheck`).
"""

from __future__ import annotations

import contextlib
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

import numpy as np

from langchain_episodic.stores.chroma._path_lock import acquire_path_lock
from langchain_episodic.stores.chroma.snapshot import readable_copy

__all__ = [
    "LOW_SPACE",
    "RECOVERY",
    "ROLLBACK_JOURNAL",
    "IndexHeader",
    "diagnose_folder",
    "file_problems",
    "free_bytes",
    "index_segments",
    "interrupted_write",
    "listed_segments",
    "open_read_only",
    "read_index_header",
    "saved_segments",
    "segment_problems",
    "sqlite_header_problems",
    "structural_problems",
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


def sqlite_header_problems(database: str) -> list[str]:
    """What reading ``chroma.sqlite3``'s first 100 bytes and its size shows to be wrong.

    Its magic string, and its page count against the file's length (a truncated file
    falls short; the count is trusted only when sqlite marks it valid).
    """
    if not os.path.isfile(database):
        return ["chroma.sqlite3 is missing"]
    with open(database, "rb") as handle:
        head = handle.read(100)
    if not head:
        return ["chroma.sqlite3 is empty (0 bytes)"]
    if head[: len(_SQLITE_MAGIC)] != _SQLITE_MAGIC or len(head) < 100:
        return ["chroma.sqlite3 is not a SQLite database: its header is damaged"]
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65_536 if page_size == 1 else page_size
    pages, valid_for, changed = (struct.unpack(">I", head[i : i + 4])[0] for i in (28, 92, 24))
    if valid_for == changed and pages and os.path.getsize(database) < pages * page_size:
        return ["chroma.sqlite3 is damaged: shorter than its header says (truncated)"]
    return []


def open_read_only(database: str, timeout: float = 5.0) -> contextlib.closing[sqlite3.Connection]:
    """A read-only connection to ``database``, for a ``with`` block that closes it."""
    uri = f"file:{database}?mode=ro"
    return contextlib.closing(sqlite3.connect(uri, uri=True, timeout=timeout))


@dataclass(frozen=True)
class IndexHeader:
    """What a vector index segment's ``header.bin`` says.

    Attributes:
        version: The format (chroma-hnswlib writes 1).
        max_elements: Slots the files have room for.
        count: Slots in use (``cur_element_count``).
        per_element: Bytes per slot in ``data_level0.bin``.
        offset_level0: Where the slots start in ``data_level0.bin`` (0).
        label_offset: Where a slot's label (8 bytes) starts within it.
        offset_data: Where a slot's vector starts within it.
        max_level: The highest level of the graph (-1 when empty).
        entry_point: The element a search starts from.
        max_m: Links per element above level 0 (``maxM``).
        max_m0: Links per element at level 0 (``maxM0``).
        m: The ``M`` the index was built with.
    """

    version: int
    max_elements: int
    count: int
    per_element: int
    offset_level0: int = 0
    label_offset: int = 0
    offset_data: int = 0
    max_level: int = 0
    entry_point: int = 0
    max_m: int = 0
    max_m0: int = 0
    m: int = 0

    @property
    def sound(self) -> bool:
        """Whether the numbers fit together (format 1, no more used slots than room)."""
        return (
            self.version == 1
            and self.count <= self.max_elements
            and (0 < self.per_element < 1 << 24)
        )

    @property
    def consistent(self) -> bool:
        """Whether the slot layout and graph numbers agree with each other.

        A slot is ``[link count (4 bytes), max_m0 links (4 bytes each)] [vector]
        [label (8 bytes)]``; the entry point is an element in use.
        """
        return (
            self.sound
            and self.offset_level0 == 0
            and 0 < self.max_m <= self.max_m0 <= 1 << 12
            and self.offset_data == 4 + 4 * self.max_m0
            and self.label_offset >= self.offset_data
            and (self.label_offset - self.offset_data) % 4 == 0
            and self.per_element == self.label_offset + 8
            and -1 <= self.max_level < 64
            and (self.count == 0 or 0 <= self.entry_point < self.count)
        )


def index_segments(folder: str) -> list[str]:
    """The vector index segment folders under an embedded Chroma ``folder``, sorted."""
    headers = glob.glob(os.path.join(glob.escape(folder), "*", "header.bin"))
    return sorted(os.path.dirname(header) for header in headers)


def saved_segments(folder: str) -> list[str]:
    """The vector index segments that ``chroma.sqlite3`` says were saved to files.

    Chroma records how far a segment was saved (``max_seq_id``); one without a record
    has not been saved yet and may lack its files. Empty when the database cannot say
    (it cannot be read, or it predates these tables): then nothing is expected.

    Raises:
        sqlite3.DatabaseError: The database is damaged ("malformed", "not a database").
    """
    try:
        with open_read_only(f"{folder}/chroma.sqlite3") as connection:
            rows = connection.execute(
                "SELECT s.id FROM segments s JOIN max_seq_id m ON m.segment_id = s.id "
                "WHERE s.scope = 'VECTOR' AND m.seq_id IS NOT NULL"
            ).fetchall()
    except sqlite3.DatabaseError as error:
        if "malformed" in str(error).lower() or "not a database" in str(error).lower():
            raise
        # Cannot be opened, another schema, or a journal to roll back that read-only cannot.
        return []
    return [os.path.join(folder, str(row[0])) for row in rows]


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
    fields = list(_HNSW_HEADER.unpack(raw))
    if fields[8] == 0xFFFF_FFFF:
        fields[8] = -1  # no entry point
    # Into IndexHeader's order: version, the three sizes, then the rest as in the file.
    return IndexHeader(*(fields[i] for i in (0, 2, 3, 4, 1, 5, 6, 7, 8, 9, 10, 11)))


def _level0_links_sound(path: str, header: IndexHeader) -> bool:
    """Whether every level-0 link list in ``data_level0.bin`` fits the header.

    Read as a strided view of the file, not loaded: per slot, the count (low 16 bits;
    byte 2 is the deleted mark, byte 3 unused) is at most ``max_m0``, and each link
    names an element in use.
    """
    if header.count == 0:
        return True
    slots = np.memmap(path, dtype=np.uint8, mode="r", shape=(header.count, header.per_element))
    heads = np.ascontiguousarray(slots[:, : header.offset_data]).view("<u4")
    del slots  # the map is closed with its last view
    counts = heads[:, 0] & 0xFFFF
    if (counts > header.max_m0).any() or ((heads[:, 0] >> 16) > 1).any():
        return False
    used = np.arange(header.max_m0)[None, :] < counts[:, None]
    return bool((heads[:, 1:][used] < header.count).all())


def _upper_links_sound(path: str, header: IndexHeader) -> bool:
    """Whether ``link_lists.bin`` (per element: its size, then its upper levels) fits.

    Each size is a whole number of levels (``4 + 4 * max_m`` bytes each) no higher than
    the graph's top, each level's count at most ``max_m`` and each link an element in
    use; the sizes account for the file exactly.
    """
    with open(path, "rb") as handle:
        raw = handle.read()
    if len(raw) % 4:
        return False
    words = np.frombuffer(raw, dtype="<u4")
    level_words = 1 + header.max_m
    position, total = 0, len(words)
    for _ in range(header.count):
        if position >= total:
            return False
        size = int(words[position])
        position += 1
        if not size:
            continue
        if size % (4 * level_words) or size // (4 * level_words) > max(header.max_level, 0):
            return False
        levels = words[position : position + size // 4]
        if len(levels) * 4 != size:
            return False
        levels = levels.reshape(-1, level_words)
        counts = levels[:, 0]
        if (counts > header.max_m).any():
            return False
        used = np.arange(header.max_m)[None, :] < counts[:, None]
        if not (levels[:, 1:][used] < header.count).all():
            return False
        position += size // 4
    return position == total


def _pickle_sound(path: str) -> bool:
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        for _ in pickletools.genops(raw):
            pass
    except Exception:  # any malformed opcode stream: damaged, whatever the reason
        return False
    return True


def segment_problems(segment: str, *, saved: bool = False) -> list[str]:
    """One line per damaged file of the vector index ``segment`` (named from the folder).

    Args:
        segment: The segment's folder.
        saved: Whether the database says the segment was saved, so that each of its
            files must be there (an unsaved one may lack some).
    """
    name = os.path.basename(segment)

    def file(base: str) -> str:
        return os.path.join(segment, base)

    if not saved and not os.path.isfile(file("index_metadata.pickle")):
        # Never saved: Chroma loads an index only through its metadata pickle, so it
        # starts this one afresh from its log whatever files a write left half made
        # (a process that ran out of file descriptors mid-write leaves a header alone).
        return []
    if not os.path.isfile(file("header.bin")):
        if not saved:
            return []  # not saved yet: Chroma rebuilds it from its log
        if not os.path.isdir(segment):
            return [f"vector index folder {name} is missing (chroma.sqlite3 says it was saved)"]
        return [f"vector index file {name}/header.bin is missing"]
    header = read_index_header(segment)
    if header is None:
        return [f"vector index file {name}/header.bin is damaged (not 100 bytes)"]
    if not header.consistent:
        return [f"vector index file {name}/header.bin is damaged (its numbers do not fit together)"]
    problems = []
    expected = {
        "data_level0.bin": header.count * header.per_element,
        "length.bin": header.count * 4,
        "link_lists.bin": header.count * 4,
    }
    for base, least in expected.items():
        if not os.path.isfile(file(base)):
            if saved or base == "data_level0.bin":
                problems.append(f"vector index file {name}/{base} is missing")
        elif os.path.getsize(file(base)) < least:
            problems.append(f"vector index file {name}/{base} is shorter than its header says")
    return problems or _graph_problems(segment, header, saved=saved)


def _graph_problems(segment: str, header: IndexHeader, *, saved: bool) -> list[str]:
    """The links of the graph and the metadata pickle, once the sizes fit the header."""
    name = os.path.basename(segment)
    problems = []
    if not _level0_links_sound(os.path.join(segment, "data_level0.bin"), header):
        problems.append(
            f"vector index file {name}/data_level0.bin is damaged (a link names no element)"
        )
    lists = os.path.join(segment, "link_lists.bin")
    if os.path.isfile(lists) and not _upper_links_sound(lists, header):
        problems.append(
            f"vector index file {name}/link_lists.bin is damaged (its lists do not fit the header)"
        )
    pickled = os.path.join(segment, "index_metadata.pickle")
    if os.path.isfile(pickled):
        if not _pickle_sound(pickled):
            problems.append(f"vector index file {name}/index_metadata.pickle is damaged")
    elif saved:
        problems.append(f"vector index file {name}/index_metadata.pickle is missing")
    return problems


def structural_problems(folder: str) -> list[str]:
    """What the cheap checks find wrong with an embedded Chroma ``folder``; empty if none.

    ``chroma.sqlite3``'s header and length, the list of saved segments in it, and every
    vector index segment (`segment_problems`): no integrity check of the database,
    nothing loaded, no child process. What Chroma would choke or crash on.
    """
    problems, segments = listed_segments(folder)
    for segment, saved in segments.items():
        problems += segment_problems(segment, saved=saved)
    return problems


def listed_segments(folder: str) -> tuple[list[str], dict[str, bool]]:
    """``chroma.sqlite3``'s header or segment-list problems, or none and every segment.

    Each vector index segment, sorted, with whether the database says it was saved.
    """
    problems = sqlite_header_problems(os.path.join(folder, "chroma.sqlite3"))
    if problems:
        return problems, {}
    try:
        saved = set(saved_segments(folder))
    except sqlite3.DatabaseError as error:
        return [f"chroma.sqlite3 is damaged: {error}"], {}
    return [], {
        segment: segment in saved for segment in sorted(saved | set(index_segments(folder)))
    }


def free_bytes(folder: str) -> int:
    """Bytes free for this user on the file system of ``folder`` (``LOW_SPACE`` if unknown)."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return LOW_SPACE  # cannot tell: not reported as full
    return stat.f_bavail * stat.f_frsize


def _probe_problems(folder: str, timeout: float, *, shown: str | None = None) -> list[str]:
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
        shown = folder if shown is None else shown
        if free_bytes(folder) < LOW_SPACE:
            return [
                f"no space left on device at {shown!r} ({free_bytes(folder)} bytes free): "
                f"Chroma cannot apply its log to read the folder ({last}); nothing "
                "acknowledged was lost: free space, then verify again"
            ]
        return [f"Chroma cannot read the folder: {last}"]
    return []


def file_problems(folder: str) -> list[str]:
    """What the checks of ``folder``'s files find, Chroma not run: one line per problem.

    ``chroma.sqlite3`` checked by sqlite (``PRAGMA integrity_check``), then the
    structural checks (`structural_problems`).
    """
    database = os.path.join(folder, "chroma.sqlite3")
    problems = sqlite_header_problems(database)
    if problems:
        return problems  # Chroma cannot be asked anything about a database it cannot read
    try:
        with open_read_only(database) as connection:
            rows = connection.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError as error:
        return [f"chroma.sqlite3 is damaged: {error}"]
    found = [str(row[0]) for row in rows if row and row[0] != "ok"]
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return [f"chroma.sqlite3 is damaged: {found[0]}{more}"]
    return structural_problems(folder)


ROLLBACK_JOURNAL = "chroma.sqlite3-journal"
"""What SQLite leaves beside the database when a write is cut short (a process killed)."""


def interrupted_write(folder: str) -> bool:
    """Whether a write to ``folder``'s database was cut short: its rollback journal is left.

    Not damage: the next open of the memory rolls the journal back (what was being
    written is undone, what was written before stays).
    """
    journal = os.path.join(folder, ROLLBACK_JOURNAL)
    return os.path.isfile(journal) and os.path.getsize(journal) > 0


def _roll_back(folder: str) -> None:
    """Let SQLite roll back the rollback journal of ``folder``'s database (a copy's)."""
    database = os.path.join(folder, "chroma.sqlite3")
    # Damage is left to the checks that follow, which name it.
    with (
        contextlib.closing(sqlite3.connect(database)) as connection,
        contextlib.suppress(sqlite3.DatabaseError),
    ):
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()


def diagnose_folder(
    folder: str, *, lock_timeout: float = 0.0, probe_timeout: float = 300.0
) -> list[str]:
    """One line per problem of the embedded Chroma folder ``folder``; empty if sound.

    Holds the folder's lock meanwhile, as a store would. A folder this process cannot
    write is read by Chroma from a copy (Chroma writes as it opens a folder).

    Raises:
        StoreLockedError: Another process holds the folder after ``lock_timeout``.
        StoreConfigurationError: The folder cannot be locked or copied (names the cause).
    """
    lock = acquire_path_lock(folder, lock_timeout)
    try:
        if interrupted_write(folder):
            # A read-only look cannot roll the journal back ("attempt to write a readonly
            # database"), and that is no damage: the next open rolls it back. A copy,
            # rolled back as that open would, is what gets checked.
            with readable_copy(folder) as copy:
                _roll_back(copy)
                return file_problems(copy) or _probe_problems(copy, probe_timeout, shown=folder)
        problems = file_problems(folder)
        if problems:
            return problems
        if lock.share.read_only is None:
            return _probe_problems(folder, probe_timeout)
        with readable_copy(folder) as copy:
            return _probe_problems(copy, probe_timeout, shown=folder)
    finally:
        lock.release()
