"""Scrubbing an embedded Chroma folder of what deletion left in its files.

Chroma deletes a record from its tables and index, but its write-ahead log, sqlite's
free pages, the full-text index and the unused slots of the vector index files keep the
bytes. :func:`scrub_sqlite` and :func:`scrub_hnsw` remove them (an erasure's last step).
"""

from __future__ import annotations

import os
import sqlite3

from langchain_episodic.stores.chroma_health import index_segments, read_index_header

__all__ = ["DELETE_OPERATION", "scrub_hnsw", "scrub_sqlite", "zero_from"]

DELETE_OPERATION = 3  # chromadb's Operation.DELETE in its embeddings_queue table


def scrub_sqlite(database: str) -> None:
    """Remove deleted records' bytes from an embedded Chroma's sqlite file.

    Every write of a record that a later delete of the same id (in the same
    collection) follows goes from the log: the delete stays, so a vector index that
    saved the record before still drops it when the log is replayed. Then the
    full-text index is merged, which drops its deleted entries, and the file is
    vacuumed.
    """
    connection = sqlite3.connect(database, timeout=60.0, isolation_level=None)
    try:
        connection.execute("PRAGMA secure_delete = ON")
        deletes = connection.execute(
            "SELECT topic, id, MAX(seq_id) FROM embeddings_queue WHERE operation = ? "
            "GROUP BY topic, id",
            (DELETE_OPERATION,),
        ).fetchall()
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "DELETE FROM embeddings_queue WHERE topic = ? AND id = ? AND seq_id < ? "
            "AND operation != ?",
            [(topic, record_id, seq, DELETE_OPERATION) for topic, record_id, seq in deletes],
        )
        connection.execute(
            "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')"
        )
        connection.execute("COMMIT")
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


def scrub_hnsw(folder: str) -> int:
    """Zero the unused slots of every vector index under ``folder``; how many files changed.

    Chroma saves an index with room for more elements than it holds, and writes that
    room from memory it never cleared: bytes of whatever the process held before
    (seen: an erased episode's JSON in ``length.bin``). Only the slots past the
    header's element count are zeroed, which an index never reads. An index whose
    header is not the known format is left alone.
    """
    changed = 0
    for segment in index_segments(folder):
        try:
            header = read_index_header(segment)
            if header is None or header.version != 1:
                continue
            used = (
                ("data_level0.bin", header.count * header.per_element),
                ("length.bin", header.count * 4),
            )
            for name, offset in used:
                changed += zero_from(os.path.join(segment, name), offset)
        except OSError:
            continue  # a segment Chroma is replacing: the next scrub sees the new one
    return changed


def zero_from(path: str, offset: int) -> int:
    """Zero ``path`` from ``offset`` to its end, synced; 1 if it changed, else 0."""
    if not os.path.isfile(path) or os.path.getsize(path) <= offset:
        return 0
    size = os.path.getsize(path)
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(bytes(size - offset))
        handle.flush()
        os.fsync(handle.fileno())
    return 1
