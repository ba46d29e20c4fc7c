"""The memory's areas beyond its core verbs, one sub-object each.

``memory.runs`` (credit and holdout runs), ``memory.lessons``, ``memory.quarantine``
(quarantine and pins), ``memory.forgetting`` (erasure receipts, retention) and
``memory.journal``. Each delegates to the namespace's services
(`langchain_episodic.service`), as the façade does.
"""

from langchain_episodic.areas.forgetting import MemoryForgetting
from langchain_episodic.areas.journal import MemoryJournal
from langchain_episodic.areas.lessons import MemoryLessons
from langchain_episodic.areas.quarantine import MemoryQuarantine
from langchain_episodic.areas.runs import MemoryRuns

__all__ = ["MemoryForgetting", "MemoryJournal", "MemoryLessons", "MemoryQuarantine", "MemoryRuns"]
