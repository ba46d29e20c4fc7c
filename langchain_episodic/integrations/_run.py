"""Which run a prompt built inside a LangChain call belongs to, for the credit loop.

A caller who will credit the run's outcome later names the run in the call's
configuration: ``config={"configurable": {"run_id": "..."}}``; LangGraph's
``thread_id`` is noted beside it. Without one, the run is the LangChain run id of
the call itself (what tracing shows), so every injection is still on record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["RUN_ID_KEY", "run_from_config"]

RUN_ID_KEY = "run_id"
"""The ``configurable`` key that names the run a prompt is for."""


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text.strip() else None


def run_from_config(config: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """``(run_id, thread_id)`` of a LangChain call's configuration.

    Example:
        >>> run_from_config({"configurable": {"run_id": "job-7", "thread_id": "t1"}})
        ('job-7', 't1')
        >>> run_from_config(None)
        (None, None)
    """
    if not config:
        return None, None
    configurable = config.get("configurable") or {}
    thread_id = _text(configurable.get("thread_id"))
    run_id = _text(configurable.get(RUN_ID_KEY))
    if run_id is None:
        callbacks = config.get("callbacks")
        run_id = _text(getattr(callbacks, "parent_run_id", None))
    return run_id, thread_id
