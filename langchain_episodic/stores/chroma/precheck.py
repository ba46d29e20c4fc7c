"""The checks every store runs on an embedded Chroma folder before Chroma reads it.

Chroma kills the process that loads a vector index whose links point past its
elements (a segmentation fault), and raises its own internal errors on other damage.
So before the first store in a process opens a folder, the structural checks that
``verify`` runs (`structural_problems`:
headers against file sizes, every graph link read from the files without loading
them, the metadata pickle walked without unpickling, saved segments present) run here,
and a damaged folder raises one `StoreDamagedError`
naming each file.

Checking every file on every open costs most of an open at 10,000 episodes
(the pickle walk most; measured by ``benchmarks/open_cost.py``), far above a 5% budget.
So the files found sound are remembered, in ``.langchain-episodic-checked``, by size,
modification and change time and inode, and an open checks again only the segments
whose files differ: the change time is set by the kernel on any write and cannot be set
back by a program, and a copy or a restore makes new inodes, so a file written since it
was checked (garbled, truncated, restored) is always checked again. Stores record the
files as Chroma left them when the last one on the folder closes. What this cannot see
is bytes altered beneath the file system without a write (bit rot): ``verify`` reads
every file, and Chroma's errors on such damage are translated by
`damage_from_chroma`.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from langchain_episodic.errors import StoreDamagedError
from langchain_episodic.stores.chroma.health import (
    file_problems,
    listed_segments,
    segment_problems,
)

__all__ = ["CHECKED_FILE", "check_before_open", "damage_from_chroma", "remember_sound_files"]

CHECKED_FILE = ".langchain-episodic-checked"
"""The record, in a store's folder, of the vector index files last found sound."""

_SEGMENT_FILES = (
    "header.bin",
    "data_level0.bin",
    "length.bin",
    "link_lists.bin",
    "index_metadata.pickle",
)
_FORMAT = 1

checks_on_open = True
"""Whether stores check a folder before Chroma opens it: off only to measure the cost."""

_Stamp = list[list[int] | None]


def _stamp(segment: str) -> _Stamp:
    stamps: _Stamp = []
    for base in _SEGMENT_FILES:
        try:
            found = os.stat(os.path.join(segment, base))
        except OSError:
            stamps.append(None)
        else:
            stamps.append([found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino])
    return stamps


def _read_record(folder: str) -> dict[str, Any]:
    try:
        with open(os.path.join(folder, CHECKED_FILE), encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):  # none yet, or unreadable: check everything
        return {}
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        return {}
    segments = record.get("segments")
    return segments if isinstance(segments, dict) else {}


def _write_record(folder: str, segments: dict[str, _Stamp]) -> None:
    # Written aside and renamed: a reader never sees half a record. Best effort: without
    # it, the next open checks every file again, which costs time, not safety.
    target = os.path.join(folder, CHECKED_FILE)
    partial = f"{target}.{os.getpid()}.tmp"
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump({"format": _FORMAT, "segments": segments}, handle)
        os.replace(partial, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(partial)


def _check(folder: str, *, damage_raises: bool) -> None:
    """Check each segment not found sound as it is now before; record those sound now."""
    if not checks_on_open or not os.path.isfile(os.path.join(folder, "chroma.sqlite3")):
        return  # a new folder: Chroma creates its database
    problems, segments = listed_segments(folder)
    if problems and not damage_raises:
        return  # the database's header or segment list: no segment to record
    record = _read_record(folder)
    sound: dict[str, _Stamp] = {}
    for segment, saved in segments.items():
        name = os.path.basename(segment)
        stamp = _stamp(segment)
        found = [] if record.get(name) == stamp else segment_problems(segment, saved=saved)
        problems += found
        if not found:
            sound[name] = stamp
    if problems and damage_raises:
        raise StoreDamagedError(folder, problems)
    if sound != record:
        _write_record(folder, sound)


def check_before_open(folder: str) -> None:
    """Check ``folder`` before Chroma reads it: its database's header, every segment.

    Raises:
        StoreDamagedError: Naming each damaged file and what to do.
    """
    _check(folder, damage_raises=True)


def remember_sound_files(folder: str) -> None:
    """Record the segments of ``folder`` that are sound now (as Chroma left them)."""
    _check(folder, damage_raises=False)


def damage_from_chroma(folder: str, error: BaseException) -> StoreDamagedError:
    """The typed error for an internal error of Chroma on ``folder``, naming the files.

    Every check ``verify`` makes without running Chroma (the database's integrity
    included) says which files are at fault; none found, Chroma's words are all.
    """
    try:
        problems = file_problems(folder)
    except OSError:  # a file vanished or became unreadable as it was checked
        problems = []
    return StoreDamagedError(folder, problems, chroma_said=str(error))
