"""What a credit log holds, against what a replay of the stored journal builds."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
from langchain_episodic.service.checkpoint import JournalPosition
from langchain_episodic.service.credit_log import CreditLog


def replayed_log(memory: EpisodicMemory) -> CreditLog:
    """The credit log a replay of the whole stored journal of ``memory`` builds."""
    log = memory.journal.credit
    replay = CreditLog(memory.store, memory.namespace, log.half_life, JournalPosition(False), print)
    replay.reload(memory.journal.entries())
    return replay


def log_state(log: CreditLog) -> dict[str, object]:
    """The book, open runs, latest outcome and count of closed runs ``log`` holds."""
    state = log.book.to_state()
    del state["version"]  # a count of changes, not of what they add up to
    return {"book": state, "open": log.open_runs(), "latest": log.latest, "closed": log.closed}
