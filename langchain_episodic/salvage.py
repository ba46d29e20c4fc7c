"""Salvage a damaged on-disk memory into a fresh folder, and say what was recovered.

When a folder's vector index (or its database) is damaged, Chroma cannot answer even
the reads an export makes. The records are still in ``chroma.sqlite3``:
`salvage_folder` reads every namespace's episodes, journal (credit, lessons,
erasure receipts) and quarantine there, without Chroma
(`chroma_salvage`), and writes them into a new folder
through the normal store, re-embedding each episode with the model the namespace was
built with (its stored fingerprint names it). The report says, per namespace, what was
recovered and what was not, and what of the database could not be read.

Examples:
    ```python
    from langchain_episodic.salvage import salvage_folder

    report = salvage_folder("./episodic-memory", to="./episodic-memory-salvaged")
    for line in report.lines():
        print(line)
    # then point the agent at ./episodic-memory-salvaged
    ```
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_episodic._validation import check_int
from langchain_episodic.embeddings.builtin import builtin_embeddings_for
from langchain_episodic.embeddings.fingerprint import EmbedderFingerprint, fingerprint_embeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.lesson import is_lesson_entry
from langchain_episodic.model.quarantine import PIN_STATE_KEY, QUARANTINE_STATE_KEY, decode_log
from langchain_episodic.stores.chroma.folder import lock_folder
from langchain_episodic.stores.chroma.salvage import SalvagedNamespace, read_folder
from langchain_episodic.stores.chroma.store import ChromaEpisodeStore

__all__ = ["NamespaceSalvage", "SalvageReport", "salvage_folder"]

_CARRIED_STATE = (QUARANTINE_STATE_KEY, PIN_STATE_KEY)  # what the memory derives is rebuilt


@dataclass(frozen=True)
class NamespaceSalvage:
    """What the salvage recovered of one namespace.

    Attributes:
        namespace: The namespace.
        collection_name: The store's ``collection_name`` it lives under (in both folders).
        episodes: Episodes recovered and written to the new folder.
        journal_entries: Journal entries recovered and written (lessons included).
        lessons: Of those, the lessons.
        listed: Episodes the damaged folder's database lists (recovered or damaged).
        last_count: Episodes the namespace held by its last saved count, if readable
            (saved every 1,000 records or 5 seconds: a hint, not a proof).
        damaged: Episode id -> why its record could not be recovered.
        not_written: Why nothing of the namespace was written, or ``None``.
    """

    namespace: str
    collection_name: str
    episodes: int
    journal_entries: int
    lessons: int
    listed: int
    last_count: int | None
    damaged: Mapping[str, str]
    not_written: str | None = None

    @property
    def complete(self) -> bool:
        """Every episode the namespace is known to have held was recovered and written."""
        held = max(self.listed, self.last_count or 0)
        return self.not_written is None and not self.damaged and self.episodes >= held


@dataclass(frozen=True)
class SalvageReport:
    """What `salvage_folder` did.

    Attributes:
        source: The damaged folder.
        target: The new folder.
        namespaces: One entry per namespace found.
        unreadable: What of the damaged folder's database could not be read, one line
            each.
        orphans: Records read whose namespace could not be told (not written).
        repaired: What was repaired in a copy of the database to read it, losing
            nothing (the folder itself is never changed).
    """

    source: str
    target: str
    namespaces: tuple[NamespaceSalvage, ...]
    unreadable: tuple[str, ...]
    orphans: int
    repaired: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Everything was read and written: nothing is known to be lost."""
        return (
            bool(self.namespaces)
            and not self.unreadable
            and not self.orphans
            and all(n.complete for n in self.namespaces)
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what ``salvage --json`` prints)."""
        return {
            "source": self.source,
            "target": self.target,
            "complete": self.complete,
            "namespaces": [{**asdict(n), "damaged": dict(n.damaged)} for n in self.namespaces],
            "unreadable": list(self.unreadable),
            "orphans": self.orphans,
            "repaired": list(self.repaired),
        }

    def lines(self) -> list[str]:
        """The report in words, one fact per line (what ``salvage`` prints)."""
        lines = [f"salvaged {self.source!r} into {self.target!r}:"]
        for n in self.namespaces:
            held = f" of {n.last_count} (its last saved count)" if n.last_count else ""
            where = (
                "" if n.collection_name == "episodes" else f" (collection {n.collection_name!r})"
            )
            lines.append(
                f"  namespace {n.namespace!r}{where}: {n.episodes} episodes{held}, "
                f"{n.journal_entries} journal entries ({n.lessons} lessons)"
                + (
                    " recovered"
                    if n.not_written is None
                    else f" read, NOT written: {n.not_written}"
                )
            )
            lines += [f"    not recovered: {i!r}: {why}" for i, why in n.damaged.items()]
        if not self.namespaces:
            lines.append("  no namespace could be read")
        lines += [f"  repaired in a copy: {line}" for line in self.repaired]
        lines += [f"  unreadable: {line}" for line in self.unreadable]
        if self.orphans:
            lines.append(f"  {self.orphans} records read but not written: their namespace is lost")
        lines.append(
            "everything was recovered"
            if self.complete
            else "what is listed above was not recovered; the damaged folder was left as it was"
        )
        return lines


def _check_target(source: Path, target: Path) -> None:
    if target.resolve() == source.resolve():
        msg = f"to={str(target)!r} is the damaged folder itself: salvage into a new folder"
        raise EpisodicValueError(msg)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        msg = (
            f"to={str(target)!r} exists and is not an empty folder: salvage writes a new "
            "memory, never into one that holds something; give a new path"
        )
        raise EpisodicValueError(msg)


def _embedder(
    found: SalvagedNamespace, given: Embeddings | Mapping[str, Embeddings] | None
) -> tuple[Embeddings | None, str | None]:
    """The model to re-embed the namespace with, or why there is none."""
    packed = found.state.get("embedder")
    stored = EmbedderFingerprint.from_json(packed) if packed is not None else None
    chosen = given.get(found.namespace) if isinstance(given, Mapping) else given
    if chosen is None:
        if stored is None:
            return None, None  # built before fingerprints: the default model, as it opens
        chosen = builtin_embeddings_for(stored)
        if chosen is None:
            return None, (
                f"it was embedded with {stored.describe()}, not one of the package's "
                "models: salvage it in Python, salvage_folder(..., embeddings=<that model>)"
            )
        return chosen, None
    if stored is not None:
        fingerprint = fingerprint_embeddings(chosen)
        reason = None if fingerprint is None else stored.mismatch(fingerprint)
        if fingerprint is None or reason is not None:
            return None, (
                f"it was embedded with {stored.describe()}, and the embeddings given are "
                f"another model ({reason or 'they give no usable vector'})"
            )
    return chosen, None


def _last_count(found: SalvagedNamespace) -> int | None:
    try:
        count = json.loads(found.state.get("summary", "")).get("count")
    except (ValueError, AttributeError):
        return None
    return count if isinstance(count, int) and count >= 0 else None


def _restore(
    store: ChromaEpisodeStore,
    found: SalvagedNamespace,
    embeddings: Embeddings | None,
    batch_size: int,
) -> list[str]:
    """Write one namespace into ``store``; what could not be carried, one line each."""
    problems: list[str] = []
    store.collection(found.namespace)
    # The logs are written as stored (after a check that they decode) before the memory
    # opens and reads them: the target is a new folder, so there is nothing to merge with.
    for key in _CARRIED_STATE:
        value = found.state.get(key)
        if value is None:
            continue
        try:
            decode_log(value)
        except (ValueError, TypeError) as error:
            problems.append(f"namespace {found.namespace!r}: its {key} log is damaged ({error})")
            continue
        store.write_state(found.namespace, key, value)
    memory = EpisodicMemory(store=store, namespace=found.namespace, embeddings=embeddings)
    episodes = iter(found.episodes)
    while batch := list(islice(episodes, batch_size)):
        memory.record_many(batch, in_time_order=False, infer_category=False)
    clashes = memory.journal.merge(found.journal)
    if clashes:
        problems.append(
            f"namespace {found.namespace!r}: journal entries {clashes[:5]} clash (kept the first)"
        )
    # An erasure the damaged folder began but did not finish stays an erasure here.
    erased = memory.forgetting.forgotten([episode.episode_id for episode in found.episodes])
    if erased:
        memory.forget(sorted(erased), reason="erased in the salvaged folder", by="salvage")
    return problems


def salvage_folder(
    path: str | os.PathLike[str],
    to: str | os.PathLike[str],
    *,
    embeddings: Embeddings | Mapping[str, Embeddings] | None = None,
    batch_size: int = 1000,
    lock_timeout: float = 0.0,
) -> SalvageReport:
    """Recover what a damaged on-disk memory still holds into a new folder.

    Reads every namespace of the folder from its database (never through its vector
    index; see `chroma_salvage`) and writes it into
    ``to`` through `ChromaEpisodeStore`: the episodes in
    their recording order, the journal (credit, lessons, erasure receipts), the
    quarantine and pin logs. Each namespace is re-embedded with the model its stored
    fingerprint names, so the new folder opens with the same model. The damaged
    folder is only read (from a copy of its database), never changed.

    Args:
        path: The damaged folder.
        to: The new folder: must not exist, or be empty.
        embeddings: The model to re-embed with, for namespaces built with a model
            that is not one of the package's own (one for all, or one per namespace
            name). It must match the stored fingerprint; a namespace built with an
            unknown model and none given is read, reported, and not written.
        batch_size: Episodes embedded and written per step.
        lock_timeout: Seconds to wait when another process holds ``path``.

    Returns:
        A `SalvageReport`: per namespace, what was recovered, what was not and
        why; what of the database could not be read.

    Raises:
        EpisodicValueError: ``path`` holds no Chroma database; ``to`` is ``path`` or
            a folder that holds something.
        StoreLockedError: Another process holds ``path`` after ``lock_timeout``.
    """
    check_int("batch_size", batch_size, 1)
    source, target = Path(path), Path(to)
    if not source.is_dir():
        msg = f"path={str(path)!r} is not a folder: give the damaged memory's folder"
        raise EpisodicValueError(msg)
    _check_target(source, target)
    lock = lock_folder(str(source), lock_timeout)  # no writer changes it while it is read
    try:
        found = read_folder(source)
    finally:
        lock.release()
    unreadable = list(found.unreadable)
    results: list[NamespaceSalvage] = []
    for collection_name in dict.fromkeys(n.collection_name for n in found.namespaces):
        group: Sequence[SalvagedNamespace] = [
            n for n in found.namespaces if n.collection_name == collection_name
        ]
        with ChromaEpisodeStore(path=target, collection_name=collection_name) as store:
            for namespace in group:
                model, refused = _embedder(namespace, embeddings)
                if refused is None:
                    unreadable += _restore(store, namespace, model, batch_size)
                journal = namespace.journal if refused is None else ()
                results.append(
                    NamespaceSalvage(
                        namespace=namespace.namespace,
                        collection_name=collection_name,
                        episodes=0 if refused else store.count(namespace.namespace),
                        journal_entries=len(journal),
                        lessons=sum(is_lesson_entry(e.entry_id) for e in journal),
                        listed=len(namespace.episodes) + len(namespace.damaged),
                        last_count=_last_count(namespace),
                        damaged=namespace.damaged,
                        not_written=refused,
                    )
                )
    return SalvageReport(
        str(path), str(to), tuple(results), tuple(unreadable), found.orphans, found.repaired
    )
