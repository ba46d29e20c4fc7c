"""What an embedded Chroma folder still holds, read from its database without Chroma.

Chroma answers every read through its vector index, so a damaged index (or a damaged
database) makes even an export fail. The records themselves are in ``chroma.sqlite3``:
each episode's full JSON, each journal entry (credit, lessons, erasure receipts), each
collection's state (the embedding model's fingerprint, quarantine, pins); the index is
derived from them. `read_folder` reads them from a copy of the database:

1. The header is repaired in the copy where it is damaged (its magic string; the page
   count of a truncated file), never in the folder.
2. Each table Chroma keeps records in is read by SQL in rowid ranges; a range SQLite
   cannot read (a garbled page, pages cut off) is halved until the rows it can read
   are read and those it cannot are known.
3. Where SQL could not read a table whole, its rows are also read straight from the
   file's leaf pages (`_sqlite_pages`), which reaches
   rows whose b-tree parents are lost; pages on the freelist (rows Chroma deleted) are
   never read.
4. Records are grouped by collection (the compacted tables, then the writes in
   Chroma's log not yet compacted, in order) and decoded with the record codec. An
   episode whose JSON does not decode is named with the reason; one the database
   lists but whose record is lost is named too.

Pure of the folder: nothing in it is written; the copy is removed afterwards.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import Episode
from langchain_episodic.stores.base import JournalEntry
from langchain_episodic.stores.chroma._sqlite_pages import (
    PageRow,
    Value,
    repaired_header,
    scan_pages,
)
from langchain_episodic.stores.chroma.scrub import collection_of_topic
from langchain_episodic.stores.chroma.store import _namespace_suffix as namespace_suffix
from langchain_episodic.stores.codec import read_record

__all__ = ["DATABASE_FILE", "SalvagedFolder", "SalvagedNamespace", "read_folder"]

DATABASE_FILE = "chroma.sqlite3"
_PREFIX = "langchain_episodic:"
_NAMESPACE_KEY = _PREFIX + "namespace"
_JOURNAL_OF_KEY = _PREFIX + "journal_of"
_JOURNAL_SUFFIX = "-journal"
_EPISODE_KEY = "episode"
# Chroma's log operations (chromadb.db.mixins.embeddings_queue._operation_codes).
_ADD, _UPDATE, _UPSERT, _DELETE = 0, 1, 2, 3
_CHUNK = 512  # rowids per SQL read


@dataclass(frozen=True)
class SalvagedNamespace:
    """What one namespace of the folder still holds.

    Attributes:
        namespace: Its name.
        collection: Its Chroma collection's name.
        collection_name: The store's ``collection_name`` the collection belongs to (its
            name without the namespace's suffix): a store opened with it finds the
            namespace.
        episodes: Every episode whose record could be read, in recording order.
        journal: Every journal entry that could be read (credit, lessons, receipts).
        state: The memory's state strings kept with the collection, by key (the
            embedding model's fingerprint under ``"embedder"``, ``"quarantine"``, ...).
        damaged: Record id -> why its episode could not be recovered.
    """

    namespace: str
    collection: str
    collection_name: str
    episodes: tuple[Episode, ...]
    journal: tuple[JournalEntry, ...]
    state: Mapping[str, str]
    damaged: Mapping[str, str]


@dataclass(frozen=True)
class SalvagedFolder:
    """What `read_folder` found.

    Attributes:
        path: The folder.
        namespaces: Each namespace found, in the order of its collection's name.
        unreadable: What of the database could not be read, one line each (empty when
            all of it was).
        orphans: Records read whose collection could not be told (their link to it
            was in a lost part of the database).
        repaired: What was repaired in the copy of the database to read it, losing
            nothing (a damaged header's magic string, say).
    """

    path: str
    namespaces: tuple[SalvagedNamespace, ...]
    unreadable: tuple[str, ...]
    orphans: int = 0
    repaired: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Table:
    """A table Chroma keeps records in, and how to tell its rows in raw pages."""

    name: str
    columns: str
    shape: Callable[[tuple[Value, ...]], bool]


def _is_text(value: Value, start: str = "") -> bool:
    return isinstance(value, str) and value.startswith(start)


_TABLES = (
    _Table(
        "collections",
        "id, name, dimension, database_id",
        lambda v: (
            len(v) >= 5
            and _is_text(v[0])
            and _is_text(v[1])
            and _is_text(v[3])
            and (v[2] is None or isinstance(v[2], int))
        ),
    ),
    _Table(
        "collection_metadata",
        "collection_id, key, str_value, int_value",
        lambda v: len(v) == 6 and _is_text(v[0]) and _is_text(v[1], _PREFIX),
    ),
    _Table(
        "segments",
        "id, type, scope, collection",
        lambda v: len(v) == 4 and _is_text(v[1], "urn:chroma:segment/") and _is_text(v[3]),
    ),
    _Table(
        "max_seq_id",
        "segment_id, seq_id",
        lambda v: len(v) == 2 and _is_text(v[0]) and isinstance(v[1], int),
    ),
    _Table(
        "embeddings",
        "id, segment_id, embedding_id",
        lambda v: len(v) == 5 and v[0] is None and _is_text(v[1]) and _is_text(v[2]),
    ),
    _Table(
        "embedding_metadata",
        "id, key, string_value, int_value",
        lambda v: len(v) == 6 and isinstance(v[0], int) and _is_text(v[1]),
    ),
    _Table(
        "embeddings_queue",
        "seq_id, operation, topic, id, metadata",
        lambda v: len(v) == 8 and isinstance(v[2], int) and _is_text(v[3]) and _is_text(v[4]),
    ),
)

# A raw row's columns as the SQL above selects them (rowid first).
_RAW_COLUMNS: dict[str, Callable[[PageRow], tuple[Any, ...]]] = {
    "collections": lambda r: (r.rowid, *r.values[:4]),
    "collection_metadata": lambda r: (r.rowid, *r.values[:4]),
    "segments": lambda r: (r.rowid, *r.values[:4]),
    "max_seq_id": lambda r: (r.rowid, *r.values[:2]),
    "embeddings": lambda r: (r.rowid, r.rowid, r.values[1], r.values[2]),
    "embedding_metadata": lambda r: (r.rowid, *r.values[:4]),
    "embeddings_queue": lambda r: (r.rowid, r.rowid, *r.values[2:5], r.values[7]),
}


@dataclass
class _Reader:
    """Reads tables from the database copy by SQL, and from its pages where SQL fails."""

    database: sqlite3.Connection | None
    data: bytes
    problems: list[str] = field(default_factory=list)

    @functools.cached_property
    def _raw(self) -> tuple[PageRow, ...]:
        scanned = scan_pages(self.data)
        if scanned.bad_cells:
            self.problems.append(f"{scanned.bad_cells} cells of the database's pages do not decode")
        return scanned.rows

    def _sql(self, table: _Table) -> tuple[dict[int, tuple[Any, ...]], int | None]:
        """The rows SQL reads, and how many rowids it could not (``None``: none known)."""
        rows: dict[int, tuple[Any, ...]] = {}
        database = self.database
        if database is None:
            return rows, None
        query = f"SELECT rowid, {table.columns} FROM {table.name} WHERE rowid BETWEEN ? AND ?"
        try:
            top = database.execute(f"SELECT max(rowid) FROM {table.name}").fetchone()[0]
        except sqlite3.DatabaseError:
            return rows, None

        def read(low: int, high: int) -> int:
            """Read rowids ``low`` to ``high``, halving a range SQLite fails on; how many lost."""
            try:
                found = database.execute(query, (low, high)).fetchall()
            except sqlite3.DatabaseError:
                if low == high:
                    return 1
                middle = (low + high) // 2
                return read(low, middle) + read(middle + 1, high)
            rows.update((row[0], row) for row in found)
            return 0

        chunks = range(1, (top or 0) + 1, _CHUNK)
        return rows, sum(read(low, min(low + _CHUNK - 1, top)) for low in chunks)

    def table(self, table: _Table) -> list[tuple[Any, ...]]:
        """Every row of ``table`` that can be read, by rowid."""
        rows, lost = self._sql(table)
        if lost == 0:
            return [rows[key] for key in sorted(rows)]
        before = len(rows)
        for row in self._raw:
            if row.rowid not in rows and table.shape(row.values):
                rows[row.rowid] = _RAW_COLUMNS[table.name](row)
        from_pages = len(rows) - before
        reason = "unreadable by SQL" if lost is None else f"{lost} of its rows unreadable by SQL"
        self.problems.append(
            f"table {table.name}: {reason}; {from_pages} rows read from the file's pages"
        )
        return [rows[key] for key in sorted(rows)]


def _open_copy(
    source: Path, scratch: Path
) -> tuple[sqlite3.Connection | None, bytes, list[str], list[str]]:
    """A repaired copy of the database: connection, bytes, repairs, what is missing.

    The connection is ``None`` when SQLite refuses even the repaired copy.
    """
    data, repairs, missing = repaired_header(source.read_bytes())
    copy = scratch / DATABASE_FILE
    copy.write_bytes(data)
    for suffix in ("-wal", "-journal"):  # what a crash left is applied to the copy only
        if source.with_name(source.name + suffix).is_file():
            shutil.copyfile(source.with_name(source.name + suffix), scratch / (copy.name + suffix))
    repaired = [f"{DATABASE_FILE}: {repair}" for repair in repairs]
    problems = [f"{DATABASE_FILE}: {lost}" for lost in missing]
    try:
        database = sqlite3.connect(copy)
        database.execute("PRAGMA query_only = ON")
        database.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as error:
        problems.append(f"{DATABASE_FILE}: SQLite cannot read its schema ({error})")
        return None, data, repaired, problems
    return database, data, repaired, problems


def _value(string: Any, integer: Any) -> Any:
    return string if string is not None else integer


@dataclass
class _Collection:
    name: str
    metadata: dict[str, Any] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    lost: set[str] = field(default_factory=set)


def _group(reader: _Reader) -> tuple[dict[str, _Collection], int]:
    """Records per collection id, the compacted ones and then Chroma's log; orphans."""
    tables = {table.name: table for table in _TABLES}
    collections = {row[1]: _Collection(str(row[2])) for row in reader.table(tables["collections"])}
    for _, collection_id, key, string, integer in reader.table(tables["collection_metadata"]):
        collections.setdefault(collection_id, _Collection("")).metadata[key] = _value(
            string, integer
        )
    owner = {row[1]: row[4] for row in reader.table(tables["segments"]) if row[3] == "METADATA"}
    applied = {
        row[1]: row[2] for row in reader.table(tables["max_seq_id"]) if isinstance(row[2], int)
    }
    embedded = {row[1]: (row[2], row[3]) for row in reader.table(tables["embeddings"])}
    fields: dict[int, dict[str, Any]] = {}
    for _, number, key, string, integer in reader.table(tables["embedding_metadata"]):
        fields.setdefault(number, {})[key] = _value(string, integer)
    for number, (segment, record_id) in embedded.items():
        collection = collections.get(owner.get(segment, ""))
        if collection is None:
            continue  # its segment's row is lost: the record may still be adopted below
        if number in fields:
            collection.records[record_id] = fields.pop(number)
        else:
            collection.lost.add(record_id)
    orphans = _adopt_orphans(collections, fields)
    for row in reader.table(tables["embeddings_queue"]):
        _, seq, operation, topic, record_id, metadata = row
        collection_id = collection_of_topic(topic)
        collection = collections.get(collection_id)
        segment = next((s for s, c in owner.items() if c == collection_id), None)
        if collection is None or (segment in applied and seq <= applied[segment]):
            continue
        _apply(collection, operation, record_id, metadata)
    return collections, orphans


def _adopt_orphans(collections: dict[str, _Collection], fields: dict[int, dict[str, Any]]) -> int:
    """Give records whose collection's link is lost to the only collection of their kind.

    An episode's JSON names its id, so it can be adopted; returns how many stay orphans.
    """
    episodes = [c for c in collections.values() if _NAMESPACE_KEY in c.metadata]
    journals = [c for c in collections.values() if _JOURNAL_OF_KEY in c.metadata]
    orphans = 0
    for record in fields.values():
        kinds = episodes if _EPISODE_KEY in record else journals if "entry" in record else []
        record_id = _record_id(record)
        if len(kinds) == 1 and record_id is not None:
            kinds[0].records.setdefault(record_id, record)
            kinds[0].lost.discard(record_id)
        else:
            orphans += 1
    return orphans


def _record_id(record: Mapping[str, Any]) -> str | None:
    raw = record.get(_EPISODE_KEY)
    if isinstance(raw, str):
        try:
            episode_id = json.loads(raw).get("episode_id")
        except (ValueError, AttributeError):
            return None
        return episode_id if isinstance(episode_id, str) else None
    return None  # a journal entry names no id of its own: it cannot be adopted


def _apply(collection: _Collection, operation: int, record_id: str, metadata: str | None) -> None:
    """One write of Chroma's log that its tables do not hold yet."""
    if operation == _DELETE:
        collection.records.pop(record_id, None)
        collection.lost.discard(record_id)
        return
    try:
        changes = json.loads(metadata) if metadata else {}
    except ValueError:
        collection.lost.add(record_id)
        return
    if not isinstance(changes, dict):
        return
    current = collection.records.get(record_id)
    if current is None and operation == _UPDATE:
        return  # Chroma ignores an update of a record it does not hold
    if current is None or operation == _ADD:
        if current is not None:
            return  # Chroma keeps the first record under an id
        current = collection.records[record_id] = {}
    for key, value in changes.items():
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value
    collection.lost.discard(record_id)


def _namespace(collection: _Collection, journal: _Collection | None) -> SalvagedNamespace:
    episodes: list[tuple[int, Episode]] = []
    damaged = {
        record_id: "its record is in a lost part of the database" for record_id in collection.lost
    }
    for record_id, record in collection.records.items():
        episode, reason = read_record(record_id, record.get(_EPISODE_KEY))
        if episode is None:
            damaged[record_id] = reason
        elif episode.episode_id != record_id:
            damaged[record_id] = f"its record holds episode_id={episode.episode_id!r}"
        else:
            seq = record.get("seq")
            episodes.append((seq if isinstance(seq, int) else 1 << 62, episode))
    episodes.sort(key=lambda pair: (pair[0], pair[1].timestamp))
    entries = []
    for entry_id, record in (journal.records if journal is not None else {}).items():
        run, payload = record.get("run"), record.get("entry")
        if isinstance(run, str) and isinstance(payload, str):
            entries.append(JournalEntry(entry_id, run, payload))
    state = {
        key.removeprefix(_PREFIX): value
        for key, value in collection.metadata.items()
        if key.startswith(_PREFIX)
        and isinstance(value, str)
        and key not in (_NAMESPACE_KEY, _JOURNAL_OF_KEY)
    }
    namespace = str(collection.metadata[_NAMESPACE_KEY])
    suffix = namespace_suffix(namespace)
    return SalvagedNamespace(
        namespace=namespace,
        collection=collection.name,
        collection_name=collection.name.removesuffix(suffix) if suffix else collection.name,
        episodes=tuple(episode for _, episode in episodes),
        journal=tuple(entries),
        state=state,
        damaged=dict(sorted(damaged.items())),
    )


def read_folder(path: str | os.PathLike[str]) -> SalvagedFolder:
    """Every record of an embedded Chroma folder that can still be read (module docstring).

    Args:
        path: The folder (what ``ChromaEpisodeStore(path=...)`` was given).

    Returns:
        A `SalvagedFolder`: per namespace, its episodes, journal and state, and
        what could not be read.

    Raises:
        EpisodicValueError: ``path`` is not a folder holding ``chroma.sqlite3``.
    """
    folder = Path(path)
    source = folder / DATABASE_FILE
    if not source.is_file() or source.stat().st_size == 0:
        msg = (
            f"path={str(path)!r} holds no Chroma database ({DATABASE_FILE} is missing or "
            "empty): there is nothing to salvage"
        )
        raise EpisodicValueError(msg)
    with tempfile.TemporaryDirectory(prefix="langchain-episodic-salvage-") as scratch:
        database, data, repaired, problems = _open_copy(source, Path(scratch))
        reader = _Reader(database, data, problems)
        try:
            collections, orphans = _group(reader)
        finally:
            if database is not None:
                database.close()
    # A journal is named for its namespace's collection: "<collection>-journal".
    journals = {c.name: c for c in collections.values() if _JOURNAL_OF_KEY in c.metadata}
    namespaces = [
        _namespace(c, journals.pop(c.name + _JOURNAL_SUFFIX, None))
        for c in collections.values()
        if isinstance(c.metadata.get(_NAMESPACE_KEY), str)
    ]
    namespaces.sort(key=lambda n: n.collection)
    for name, journal in journals.items():
        if journal.records:
            reader.problems.append(
                f"the journal {name!r} ({len(journal.records)} entries) was read, but not the "
                "collection of its namespace's episodes"
            )
    if orphans:
        reader.problems.append(
            f"{orphans} records were read whose collection is in a lost part of the database"
        )
    return SalvagedFolder(
        str(path), tuple(namespaces), tuple(reader.problems), orphans, tuple(repaired)
    )
