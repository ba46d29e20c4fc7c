"""Scrubbing an embedded Chroma folder of what deletion left in its files.

Chroma deletes a record from its tables and index, but its write-ahead log, sqlite's
free pages, the full-text index and the unused slots of the vector index files keep the
bytes. `scrub_sqlite` and `scrub_hnsw` remove them.

The log's delete rows hold the erased ids in clear. Chroma needs one only while a vector
index saved before it may still hold the record (the row makes the index drop it when
the log is replayed on load): a delete row that every saved index of its collection has
passed is removed (the last row of the log is kept, its id blanked, as Chroma numbers
new rows after it). An index saved before a delete is saved again by
`settle_indexes` (it opens the folder once the store has closed it), so the row
and the id in the index's own metadata go too.

A scrub rewrites the whole database (``VACUUM``), so it costs time in proportion to the
folder, not to what was erased: it is batched. `note_deleting` leaves a marker file
in the folder *before* a deletion, holding how many records were deleted since the last
scrub; `scrub_folder` removes it once the scrub is done. A process killed in
between leaves the marker, so the next store on the folder finishes the scrub.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator

import chromadb
from chromadb.api import ClientAPI

from langchain_episodic.stores.chroma.health import (
    index_segments,
    open_read_only,
    read_index_header,
)

__all__ = [
    "DELETE_OPERATION",
    "SCRUB_PENDING",
    "SETTLING",
    "close_client",
    "collection_of_topic",
    "deleted_since_scrub",
    "note_deleting",
    "pending_status",
    "restore_thresholds",
    "scrub_folder",
    "scrub_hnsw",
    "scrub_pending",
    "scrub_sqlite",
    "scrubbed_sentence",
    "settle_indexes",
    "sqlite_folder",
    "sync_folder",
    "unreachable_files",
    "unsettled_collections",
    "write_synced",
    "zero_from",
]

DELETE_OPERATION = 3  # chromadb's Operation.DELETE in its embeddings_queue table
ERASED_ID = "erased"
"""The id left in the log's last row once its delete is settled (the row stays for
Chroma's numbering; nothing reads it)."""
SCRUB_PENDING = ".langchain-episodic-scrub-pending"
"""The marker file of a folder whose deleted records' bytes are not scrubbed yet."""
SETTLING = ".langchain-episodic-settling"
"""The ``sync_threshold`` of each collection a settle changed, while it runs (JSON)."""


def scrub_pending(folder: str) -> bool:
    """Whether records were deleted in ``folder`` since its last scrub."""
    return os.path.isfile(os.path.join(folder, SCRUB_PENDING))


def deleted_since_scrub(folder: str) -> int | None:
    """Records deleted in ``folder`` since its last scrub; ``None``: no scrub is pending.

    A marker that cannot be read counts as pending with nothing counted (0).
    """
    marker = os.path.join(folder, SCRUB_PENDING)
    try:
        with open(marker, encoding="ascii") as handle:
            text = handle.read().strip()
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return 0
    return int(text) if text.isdigit() else 0


def note_deleting(folder: str, count: int) -> None:
    """Mark ``folder`` as holding ``count`` more deleted records to scrub; before deleting.

    The first mark since a scrub is synced to disk (with its folder entry), so a
    deletion is never on disk without it; later ones only update the count, which
    decides when a batch is worth a scrub.
    """
    before = deleted_since_scrub(folder)
    write_synced(os.path.join(folder, SCRUB_PENDING), f"{(before or 0) + count}\n", before is None)


def sqlite_folder(path: str | None, client: ClientAPI) -> str | None:
    """The folder whose ``chroma.sqlite3`` a store's deletions leave bytes in.

    ``path`` when the store was given one, else the client's persist directory;
    ``None`` for a client in memory, a server, or a client that cannot say.
    """
    folder = path
    if folder is None:
        try:
            settings = client.get_settings()
        except Exception:  # a client that cannot say: treat it as out of reach
            return None
        if not getattr(settings, "is_persistent", False):
            return None
        folder = getattr(settings, "persist_directory", None)
    if not folder or not os.path.isfile(os.path.join(folder, "chroma.sqlite3")):
        return None
    return str(folder)


def unreachable_files(path: str | None, client: ClientAPI) -> str:
    """What deletion guarantees where no folder can be scrubbed (memory, or a server)."""
    if path is None and _is_ephemeral(client):
        return "Chroma in process memory: the records were deleted (nothing was written to disk)"
    return (
        "Chroma server: the records and journal entries were deleted through its "
        "API; its own files (sqlite free pages, its write-ahead log) keep the bytes "
        "until its operator vacuums the server's database"
    )


def scrubbed_sentence(folder: str) -> str:
    """What a scrub of ``folder`` that just ran guarantees (for an erasure's receipt)."""
    if scrub_pending(folder):
        return (
            f"embedded Chroma at {folder!r}: deleted rows purged from its write-ahead log "
            "and full-text index and chroma.sqlite3 vacuumed, except that a vector index "
            "saved before the deletion still holds the erased ids (in its metadata file, "
            "and its delete rows in the log, which make a reload drop them): both go when "
            "the store closes and Chroma saves the index again"
        )
    return (
        f"embedded Chroma at {folder!r}: deleted rows purged from its write-ahead log "
        "and full-text index, chroma.sqlite3 vacuumed (no free page keeps them), and "
        "the unused slots of its vector index files zeroed (again on close); the "
        "index keeps the erased vectors (numbers, not text) until Chroma reuses their "
        "slots"
    )


def pending_status(folder: str, scrub_after: int) -> tuple[bool, str]:
    """``(pending, sentence)``: whether deleted records' bytes wait in ``folder``, and when.

    ``scrub_after``: how many deleted records make an erasure scrub at once.
    """
    deleted = deleted_since_scrub(folder)
    if deleted is None:
        return False, scrubbed_sentence(folder)
    return True, (
        f"embedded Chroma at {folder!r}: the records are deleted (no read returns them) "
        "and their bytes are still in chroma.sqlite3 (its write-ahead log rows, free "
        "pages and full-text index) and the vector index files until the folder is "
        "scrubbed: on close, on memory.forgetting.compact(), or once "
        f"{scrub_after} deleted records are pending ({deleted} now); a process "
        "stopped before then leaves the scrub to the next store opened on the folder"
    )


def _is_ephemeral(client: ClientAPI) -> bool:
    try:
        settings = client.get_settings()
    except Exception:
        return False
    api = str(getattr(settings, "chroma_api_impl", ""))
    return not getattr(settings, "is_persistent", False) and "fastapi" not in api.lower()


def scrub_folder(folder: str) -> None:
    """Scrub ``folder``'s database and index files; then clear its marker.

    The marker is removed only when no deletion was noted while the scrub ran (its
    count is unchanged) and every delete row could go (a vector index saved before a
    delete keeps its row, and the scrub pending, until `settle_indexes`).
    """
    before = deleted_since_scrub(folder)
    database = os.path.join(folder, "chroma.sqlite3")
    unsettled = scrub_sqlite(database) if os.path.isfile(database) else 0
    scrub_hnsw(folder)
    if unsettled == 0 and before is not None and deleted_since_scrub(folder) == before:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(folder, SCRUB_PENDING))


def sync_folder(folder: str) -> None:
    """Sync ``folder``'s entries (a file created or removed there) to disk; best effort."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform without directory handles: the file itself is synced
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def scrub_sqlite(database: str) -> int:
    """Remove deleted records' bytes from an embedded Chroma's sqlite file; rows kept.

    Every write of a record that a later delete of the same id (in the same
    collection) follows goes from the log. A delete row goes too once it is settled
    (`_settled`); one that is not stays, so a vector index that saved the record
    before still drops it when the log is replayed. Then the full-text index is
    merged, which drops its deleted entries, and the file is vacuumed.

    Returns:
        How many delete rows stay because an index saved before them holds their record.
    """
    with contextlib.closing(
        sqlite3.connect(database, timeout=60.0, isolation_level=None)
    ) as connection:
        connection.execute("PRAGMA secure_delete = ON")
        deletes = connection.execute(
            "SELECT topic, id, MAX(seq_id) FROM embeddings_queue WHERE operation = ? "
            "GROUP BY topic, id",
            (DELETE_OPERATION,),
        ).fetchall()
        saved = _saved_through(connection)
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "DELETE FROM embeddings_queue WHERE topic = ? AND id = ? AND seq_id < ? "
            "AND operation != ?",
            [(topic, record_id, seq, DELETE_OPERATION) for topic, record_id, seq in deletes],
        )
        (last,) = connection.execute("SELECT MAX(seq_id) FROM embeddings_queue").fetchone()
        settled = [row for row in deletes if _settled(saved, row[0], row[2])]
        connection.executemany(
            "DELETE FROM embeddings_queue WHERE topic = ? AND id = ? AND operation = ? "
            "AND seq_id <= ? AND seq_id != ?",
            [(topic, record_id, DELETE_OPERATION, seq, last) for topic, record_id, seq in settled],
        )
        if any(seq == last for _, _, seq in settled):
            connection.execute(
                "UPDATE embeddings_queue SET id = ?, vector = NULL, metadata = NULL "
                "WHERE seq_id = ?",
                (ERASED_ID, last),
            )
        connection.execute(
            "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')"
        )
        connection.execute("COMMIT")
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return len(deletes) - len(settled)


def _saved_through(connection: sqlite3.Connection) -> dict[str, list[int]]:
    """How far each segment of each collection was saved (``max_seq_id``), by collection.

    A segment with no row was never saved: Chroma builds it from the log on load, where
    no write of an erased record is left, so it needs no delete row.
    """
    saved: dict[str, list[int]] = {}
    for collection, seq in connection.execute(
        "SELECT s.collection, m.seq_id FROM segments s JOIN max_seq_id m ON m.segment_id = s.id"
    ):
        if isinstance(seq, int):
            saved.setdefault(str(collection), []).append(seq)
    return saved


def _settled(saved: dict[str, list[int]], topic: str, seq: int) -> bool:
    """Whether every saved segment of ``topic``'s collection has passed log row ``seq``."""
    return all(through >= seq for through in saved.get(collection_of_topic(topic), []))


def collection_of_topic(topic: str) -> str:
    """The collection id that Chroma's log topic names.

    A topic is ``persistent://<tenant>/<database>/<collection id>``.
    """
    return topic.rsplit("/", 1)[-1]


def unsettled_collections(database: str) -> list[tuple[str, str]]:
    """``(collection id, name)`` of each collection whose saved index predates a delete.

    Those delete rows (and the ids in the index's own metadata) stay until the index is
    saved again: `settle_indexes`. Empty when the database cannot say.
    """
    try:
        with open_read_only(database, timeout=60.0) as connection:
            saved = _saved_through(connection)
            topics = connection.execute(
                "SELECT topic, MAX(seq_id) FROM embeddings_queue WHERE operation = ? AND id != ? "
                "GROUP BY topic",
                (DELETE_OPERATION, ERASED_ID),
            ).fetchall()
            names = dict(connection.execute("SELECT id, name FROM collections").fetchall())
    except sqlite3.Error:
        return []
    return [
        (collection, str(names[collection]))
        for topic, seq in topics
        if (collection := collection_of_topic(topic)) in names and not _settled(saved, topic, seq)
    ]


def settle_indexes(folder: str, chroma_path: str | None = None) -> int:
    """Have Chroma save again every vector index saved before a delete; how many.

    Chroma saves an index once ``sync_threshold`` writes (1,000 by default) are applied
    since it last saved, so after a few deletes the saved index still holds the
    records (and their ids, in its metadata file), and the log keeps the delete rows
    for it. Each such collection is given a threshold of 1, opened so that Chroma
    replays its log into the index and saves it, then given its threshold back. Call
    only with no Chroma client open on the folder in this process (the store's last
    close): an open one would keep the index loaded and nothing would be saved.

    Args:
        folder: The embedded Chroma folder.
        chroma_path: The path string Chroma was opened with (its system is keyed on
            it); defaults to ``folder``.
    """
    path = chroma_path or folder
    restore_thresholds(folder, path)  # a settle cut short gives back what it changed
    pending = unsettled_collections(os.path.join(folder, "chroma.sqlite3"))
    if not pending:
        return 0
    thresholds: dict[str, int] = {}
    with _client(path) as client:
        for _, name in pending:
            collection = client.get_collection(name, embedding_function=None)
            hnsw = (collection.configuration or {}).get("hnsw") or {}
            thresholds[name] = int(hnsw.get("sync_threshold") or 1000)
        # Written (synced) before any change: a process killed below leaves it, and the
        # next settle gives each collection its threshold back.
        write_synced(os.path.join(folder, SETTLING), json.dumps(thresholds))
        for _, name in pending:
            client.get_collection(name, embedding_function=None).modify(
                configuration={"hnsw": {"sync_threshold": 1}}
            )
    with _client(path) as client:
        for _, name in pending:
            collection = client.get_collection(name, embedding_function=None)
            dimension = _dimension(folder, name)
            if dimension:  # a query loads the index: the log is replayed into it, saved
                collection.query(query_embeddings=[[1.0] * dimension], n_results=1)
            collection.modify(configuration={"hnsw": {"sync_threshold": thresholds[name]}})
    os.remove(os.path.join(folder, SETTLING))
    return len(pending)


def restore_thresholds(folder: str, chroma_path: str | None = None) -> int:
    """Give back the ``sync_threshold`` of collections a settle cut short left at 1; how many.

    `settle_indexes` writes the thresholds it changes to `SETTLING` first; a
    process killed before it gave them back leaves the file (and indexes saved on every
    write, which is slow, not wrong). Call with no Chroma client open on the folder.
    """
    marker = os.path.join(folder, SETTLING)
    try:
        with open(marker, encoding="utf-8") as handle:
            thresholds = json.load(handle)
    except FileNotFoundError:
        return 0
    except (OSError, ValueError):
        thresholds = {}
    restored = 0
    if isinstance(thresholds, dict) and thresholds:
        with _client(chroma_path or folder) as client:
            for name, threshold in thresholds.items():
                try:
                    collection = client.get_collection(str(name), embedding_function=None)
                except Exception:  # gone since (forget_all): nothing to give back
                    continue
                collection.modify(configuration={"hnsw": {"sync_threshold": int(threshold)}})
                restored += 1
    os.remove(marker)
    return restored


def write_synced(path: str, text: str, sync: bool = True) -> None:
    """Write ``text`` over ``path``; with ``sync``, sync it (and its folder entry when new)."""
    new = not os.path.exists(path)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
        if sync:
            handle.flush()
            os.fsync(handle.fileno())
    if sync and new:
        sync_folder(os.path.dirname(path))


def close_client(client: object) -> None:
    """Close a Chroma client (``close`` is not declared by ``ClientAPI``)."""
    close = getattr(client, "close", None)
    if callable(close):
        close()


@contextlib.contextmanager
def _client(path: str) -> Iterator[ClientAPI]:
    """A Chroma client on ``path``, closed on exit: the next one loads the files anew."""
    client = chromadb.PersistentClient(path=path)
    try:
        yield client
    finally:
        close_client(client)


def _dimension(folder: str, name: str) -> int | None:
    """The dimension of collection ``name`` as ``chroma.sqlite3`` records it."""
    with open_read_only(os.path.join(folder, "chroma.sqlite3"), timeout=60.0) as connection:
        sql = "SELECT dimension FROM collections WHERE name = ?"
        row = connection.execute(sql, (name,)).fetchone()
    return int(row[0]) if row and isinstance(row[0], int) and row[0] > 0 else None


def scrub_hnsw(folder: str) -> int:
    """Zero what no reader needs in every vector index under ``folder``; files changed.

    Chroma saves an index with room for more elements than it holds, and writes that
    room from memory it never cleared: bytes of whatever the process held before
    (seen: an erased episode's JSON). The slots past the header's element count are
    zeroed, which an index never reads. So is the whole of ``length.bin`` of an index
    whose collection is not in cosine space: that file holds one float per element,
    the norm of its vector, which chroma-hnswlib sets and reads only for cosine
    (``normalize``); for ``l2`` and ``ip`` (the journal's collections) every slot is
    written from uncleared memory, in use or not (seen: a forgotten user's journal
    text in a used slot). An index whose header is not the known format, or whose
    space ``chroma.sqlite3`` does not say, keeps its used slots.
    """
    changed = 0
    unnormalized = _unnormalized_segments(folder)
    for segment in index_segments(folder):
        try:
            header = read_index_header(segment)
            if header is None or header.version != 1:
                continue
            lengths = 0 if os.path.basename(segment) in unnormalized else header.count * 4
            slots = header.count * header.per_element
            changed += zero_from(os.path.join(segment, "data_level0.bin"), slots)
            changed += zero_from(os.path.join(segment, "length.bin"), lengths)
        except OSError:
            continue  # a segment Chroma is replacing: the next scrub sees the new one
    return changed


def _unnormalized_segments(folder: str) -> set[str]:
    """The vector segments (ids) whose collection ``chroma.sqlite3`` says is not cosine.

    A collection's space may be written in its schema (Chroma 1.x), its configuration
    or its metadata (``hnsw:space``, older folders): a segment counts only when some
    of them name a space and none names ``cosine``. Empty when the database cannot say.
    """
    database = os.path.join(folder, "chroma.sqlite3")
    if not os.path.isfile(database):
        return set()
    try:
        with open_read_only(database, timeout=60.0) as connection:
            columns = {row[1] for row in connection.execute("PRAGMA table_info(collections)")}
            texts = [name for name in ("schema_str", "config_json_str") if name in columns]
            picked = "".join(f", c.{name}" for name in texts)
            rows = connection.execute(
                f"SELECT s.id, c.id{picked} FROM segments s JOIN collections c "
                "ON s.collection = c.id WHERE s.scope = 'VECTOR'"
            ).fetchall()
            stated: dict[str, set[str]] = {}
            for collection, space in connection.execute(
                "SELECT collection_id, str_value FROM collection_metadata WHERE key = 'hnsw:space'"
            ):
                stated.setdefault(str(collection), set()).add(str(space))
    except sqlite3.Error:
        return set()
    found = set()
    for segment, collection, *documents in rows:
        spaces = stated.get(str(collection), set()).union(*map(_spaces_in, documents))
        if spaces and "cosine" not in spaces:
            found.add(str(segment))
    return found


def _spaces_in(document: object) -> set[str]:
    """Every value of a ``space`` key anywhere in a JSON document (none if unreadable)."""
    try:
        return _spaces(json.loads(document) if isinstance(document, str) else None)
    except ValueError:
        return set()


def _spaces(item: object) -> set[str]:
    if isinstance(item, list):
        return set().union(*map(_spaces, item))
    if not isinstance(item, dict):
        return set()
    found = {value for key, value in item.items() if key == "space" and isinstance(value, str)}
    return found.union(*map(_spaces, item.values()))


def zero_from(path: str, offset: int) -> int:
    """Zero ``path`` from ``offset`` to its end, synced; 1 if it changed, else 0."""
    if not os.path.isfile(path) or (size := os.path.getsize(path)) <= offset:
        return 0
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(bytes(size - offset))
        handle.flush()
        os.fsync(handle.fileno())
    return 1
