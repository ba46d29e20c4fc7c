"""Damage of each kind done to a copy of a sound embedded Chroma folder, for the tests.

Each kind is what a disk, a crash or a careless copy leaves: garbled bytes, a short
file, a missing file or folder. Garbling uses fixed seeds, so a run repeats exactly.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

KINDS = {
    # kind: the file the typed error must name
    "hnsw data garbled": "data_level0.bin",
    "hnsw header garbled": "header.bin",
    "hnsw links garbled": "link_lists.bin",
    "hnsw pickle garbled": "index_metadata.pickle",
    "hnsw data truncated": "data_level0.bin",
    "hnsw segment deleted": "is missing",
    "hnsw file deleted": "data_level0.bin",
    "sqlite truncated": "chroma.sqlite3",
    "sqlite garbled": "chroma.sqlite3",
    "sqlite bad header": "chroma.sqlite3",
}


def segment_of(path: Path) -> Path:
    (segment,) = {header.parent for header in path.glob("*/header.bin")}
    return segment


def garble(file: Path, start: int, length: int, seed: int = 0) -> None:
    with open(file, "r+b") as handle:
        handle.seek(start)
        handle.write(random.Random(seed).randbytes(length))


def damage(path: Path, kind: str) -> None:
    """Do ``kind`` of damage to the folder ``path`` in place."""
    segment = segment_of(path)
    database = path / "chroma.sqlite3"
    data = segment / "data_level0.bin"
    if kind == "hnsw data garbled":
        garble(data, data.stat().st_size // 3, data.stat().st_size // 3)
    elif kind == "hnsw header garbled":
        with open(segment / "header.bin", "r+b") as handle:
            handle.seek(8)
            handle.write(b"\xff" * 60)
    elif kind == "hnsw links garbled":
        lists = segment / "link_lists.bin"
        garble(lists, lists.stat().st_size // 4, lists.stat().st_size // 2)
    elif kind == "hnsw pickle garbled":
        with open(segment / "index_metadata.pickle", "r+b") as handle:
            handle.seek(100)
            handle.write(b"\xb2" * 2000)
    elif kind == "hnsw data truncated":
        os.truncate(data, data.stat().st_size // 2)
    elif kind == "hnsw segment deleted":
        shutil.rmtree(segment)
    elif kind == "hnsw file deleted":
        data.unlink()
    elif kind == "sqlite truncated":
        os.truncate(database, database.stat().st_size // 3)
    elif kind == "sqlite garbled":
        with open(database, "r+b") as handle:  # the schema's pages: always in use
            handle.seek(4096)
            handle.write(bytes(range(256)) * 64)
    elif kind == "sqlite bad header":
        with open(database, "r+b") as handle:
            handle.write(b"NOT A DATABASE!!")
    else:
        msg = f"unknown damage {kind!r}"
        raise ValueError(msg)


def damaged_copy(sound: Path, target: Path, kind: str) -> Path:
    """A copy of the folder ``sound`` at ``target``, damaged by ``kind``."""
    shutil.copytree(sound, target)
    damage(target, kind)
    return target
