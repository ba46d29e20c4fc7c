"""Audit of stored records for a ``verify`` step: pure, no I/O.

Recall, ``get`` and ``episodes()`` skip a record they cannot read, with a
`MalformedRecordWarning`. `RecordAudit` finds every
such record up front, fed one page of ``(record id, metadata)`` at a time, and also
the records that break ordered iteration: a missing, repeated or out-of-range ``seq``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_episodic.errors import MalformedRecordWarning
from langchain_episodic.stores.codec import read_record

__all__ = ["RecordAudit"]


@dataclass
class RecordAudit:
    """Findings over the records of one namespace, fed page by page.

    Attributes:
        deleted: Records erased from the namespace (their numbers stay given): a
            ``seq`` may reach ``checked + deleted - 1``.
        checked: Records seen so far.
        findings: One `MalformedRecordWarning` (record id and reason) per
            problem, in the order the records were fed.
    """

    deleted: int = 0
    checked: int = 0
    findings: list[MalformedRecordWarning] = field(default_factory=list)
    _seq_owner: dict[int, str] = field(default_factory=dict)

    def feed(self, record_id: str, metadata: Mapping[str, Any] | None, episode_key: str) -> None:
        """Check one record: its episode JSON under ``episode_key``, and its ``seq``."""
        self.checked += 1
        metadata = metadata or {}
        # Why the readers would skip this record, or why it does not belong.
        episode, reason = read_record(record_id, metadata.get(episode_key))
        if episode is None:
            self._found(record_id, reason)
        elif episode.episode_id != record_id:
            self._found(record_id, f"holds episode_id={episode.episode_id!r}, not its record id")
        seq = metadata.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int):
            self._found(record_id, f"seq={seq!r} is not an integer: ordered reads never see it")
        elif seq in self._seq_owner:
            owner = self._seq_owner[seq]
            self._found(record_id, f"seq={seq} repeats the seq of record id={owner!r}")
        else:
            self._seq_owner[seq] = record_id

    def _found(self, record_id: str, reason: str) -> None:
        self.findings.append(MalformedRecordWarning(record_id, reason))

    def finish(self) -> list[MalformedRecordWarning]:
        """All findings, including a ``seq`` outside ``0 .. checked + deleted - 1`` (known now)."""
        limit = self.checked + self.deleted
        for seq, record_id in sorted(self._seq_owner.items()):
            if not 0 <= seq < limit:
                self._found(
                    record_id,
                    f"seq={seq} is outside 0..{limit - 1}: "
                    "ordered reads of the latest episodes may miss it",
                )
        return self.findings
