"""Copy a namespace from one store to another, streamed in batches and verified.

Stores keep vectors in their own formats, so a migration re-embeds each episode with
the target memory's embeddings (which may differ from the source's: a migration is
also how to move to a new embedding model). Episodes keep their recording order, and
the quarantine log and the credit journal (every run's injection records and outcome,
`langchain_episodic.scoring.credit`) come along: the target's ``runs.log()`` and
utilities are the source's afterwards. Running a migration again copies nothing twice.

Examples:
    ```python
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from langchain_episodic.stores import InMemoryEpisodeStore
    from langchain_episodic.migration import migrate_namespace

    notebook = EpisodicMemory(store=InMemoryEpisodeStore())
    ...  # record episodes
    on_disk = EpisodicMemory(store=ChromaEpisodeStore(path="./episodic-memory"))
    report = migrate_namespace(notebook, on_disk, progress=True)
    assert report.target_count == len(notebook)
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from tqdm import tqdm

from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError, MigrationError
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import Episode

__all__ = ["MigrationReport", "migrate_namespace"]


@dataclass(frozen=True)
class MigrationReport:
    """What a migration did.

    Attributes:
        source_count: Episodes in the source namespace.
        copied: Episodes written to the target.
        already_present: Identical episodes the target already held (skipped).
        target_count: Episodes in the target namespace afterwards.
    """

    source_count: int
    copied: int
    already_present: int
    target_count: int


def _verify(source: EpisodicMemory, target: EpisodicMemory, batch: Sequence[Episode]) -> None:
    stored = target.get_episodes([episode.episode_id for episode in batch])
    wrong = [e.episode_id for e in batch if stored.get(e.episode_id) != e]
    if wrong:
        msg = (
            f"after copying, the target namespace={target.namespace!r} does not hold "
            f"episode_ids={wrong[:5]!r}{' ...' if len(wrong) > 5 else ''} of the source "
            f"namespace={source.namespace!r} as they are in the source"
        )
        raise MigrationError(msg)


def _copy_journal(source: EpisodicMemory, target: EpisodicMemory) -> None:
    """Append the source's credit journal to the target's, verified; ids held are kept."""
    wrong = target.journal.merge(source.journal.entries())
    if wrong:
        msg = (
            f"the target namespace={target.namespace!r} holds other credit journal entries "
            f"under entry_ids={wrong[:5]!r}{' ...' if len(wrong) > 5 else ''} of the source "
            f"namespace={source.namespace!r} (the same run credited in both?); they were "
            "kept, the source's were not copied (every other entry was)"
        )
        raise MigrationError(msg)


def _carry_tombstones(source: EpisodicMemory, target: EpisodicMemory, batch_size: int) -> None:
    """Erase from the target what the source erased (a copy made before the erasure)."""
    held = [episode.episode_id for episode in target.episodes(page_size=batch_size)]
    erased = source.forgetting.forgotten(held)
    if erased:
        target.forget(
            sorted(erased),
            reason=f"erased in the source namespace={source.namespace!r} (migrated tombstone)",
            by="migration",
        )


def migrate_namespace(
    source: EpisodicMemory,
    target: EpisodicMemory,
    *,
    batch_size: int = 1000,
    progress: bool = False,
) -> MigrationReport:
    """Copy every episode of ``source``'s namespace into ``target``'s, then verify it.

    Episodes are streamed in recording order in batches of ``batch_size``, written with
    ``target.record_many(..., in_time_order=False)`` (so the order is kept), then read
    back by id and compared with the source. Identical episodes already in the target
    are skipped, so an interrupted migration can simply be run again. The source's
    quarantine log is appended to the target's (events the target already has are
    not repeated), and so is its credit journal (entries the target already holds,
    by id, are not written again), after which the target re-reads its credit.

    Erasures travel, content does not: an episode the target erased is not copied
    (its tombstone wins), journal entries naming one are redacted as the erasure
    redacted them, and an episode the source erased is erased from the target too
    (a copy made before the erasure) before the source's tombstones are copied.

    Args:
        source: The memory to copy from (its store and namespace).
        target: The memory to copy into; its embeddings embed the episodes.
        batch_size: Episodes read, embedded and written per step.
        progress: Show a tqdm progress bar on standard error.

    Returns:
        A `MigrationReport`.

    Raises:
        EpisodeConflictError: The target holds a different episode under a source id.
            Batches before the conflicting one stay copied; nothing of it is written.
        MigrationError: Reading back the target did not give the source's episodes,
            the target ends with fewer episodes than the source, some source
            records are not readable episodes (every readable one is copied first),
            or the target holds other credit journal entries under the ids of the
            source's (a run credited in both; the target's are kept).
    """
    for name, memory in (("source", source), ("target", target)):
        if not isinstance(memory, EpisodicMemory):
            msg = f"{name}={memory!r} is invalid: must be an EpisodicMemory"
            raise TypeError(msg)
    check_int("batch_size", batch_size, 1)
    if source.store is target.store and source.namespace == target.namespace:
        msg = f"source and target are the same namespace={source.namespace!r} of one store"
        raise EpisodicValueError(msg)
    total = len(source)
    copied = erased_in_target = 0
    with tqdm(total=total, desc="migrating", unit="ep", disable=not progress, leave=False) as bar:
        read = 0
        episodes = source.episodes(page_size=batch_size)
        while batch := list(islice(episodes, batch_size)):
            # An episode the target erased stays erased: its tombstone there wins.
            gone = target.forgetting.forgotten([episode.episode_id for episode in batch])
            wanted = [episode for episode in batch if episode.episode_id not in gone]
            copied += target.record_many(wanted, in_time_order=False, infer_category=False)
            _verify(source, target, wanted)
            read += len(batch)
            erased_in_target += len(gone)
            bar.update(len(batch))
    _carry_tombstones(source, target, batch_size)
    target.quarantine.merge_log(source.quarantine.log())
    _copy_journal(source, target)
    if read < total:
        msg = (
            f"{total - read} of the {total} records of the source namespace="
            f"{source.namespace!r} are not readable episodes and were not copied (every "
            "readable one was); list them with 'langchain-episodic verify'"
        )
        raise MigrationError(msg)
    target_count = len(target)
    if target_count < total - erased_in_target:
        msg = f"the target holds {target_count} episodes after copying {total}"
        raise MigrationError(msg)
    return MigrationReport(total, copied, read - copied - erased_in_target, target_count)
