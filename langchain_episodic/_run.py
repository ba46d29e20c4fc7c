"""Which run a prompt built inside a LangChain call belongs to, for the credit loop.

A caller who will credit the run's outcome later names the run in the call's
configuration: ``config={"configurable": {"run_id": "..."}}``; LangGraph's
``thread_id`` is noted beside it. Without one, the run is the LangChain run id of
the call itself (what tracing shows), so every injection is still on record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["RUN_ID_KEY", "STATE_KEY", "agent_name", "agent_run", "given_text", "run_from_config"]

RUN_ID_KEY = "run_id"
"""The ``configurable`` key that names the run a prompt is for."""

STATE_KEY = "episodic_replay"
"""Key of the agent state under which the middleware keeps a run's replay."""


def given_text(value: object) -> str | None:
    """``str(value)``, or ``None`` when ``value`` is ``None`` or blank."""
    if value is None:
        return None
    text = str(value)
    return text if text.strip() else None


def run_from_config(config: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """``(run_id, thread_id)`` of a LangChain call's configuration.

    Examples:
        >>> run_from_config({"configurable": {"run_id": "job-7", "thread_id": "t1"}})
        ('job-7', 't1')
        >>> run_from_config(None)
        (None, None)
    """
    if not config:
        return None, None
    configurable = config.get("configurable") or {}
    thread_id = given_text(configurable.get("thread_id"))
    run_id = given_text(configurable.get(RUN_ID_KEY))
    if run_id is None:
        callbacks = config.get("callbacks")
        run_id = given_text(getattr(callbacks, "parent_run_id", None))
    return run_id, thread_id


def agent_run(runtime: object) -> tuple[str, str | None] | None:
    """``(run_id, namespace)`` the agent middleware noted this run under, if any.

    A tool called inside a ``create_agent`` run gets the run's state through its
    ``ToolRuntime``; when `EpisodicMemoryMiddleware` is
    part of the agent, that state holds the run's replay, and so the run id its
    outcome will be credited under. Noting a tool's recall under the same id makes
    one agent run one credited run.

    Examples:
        >>> from types import SimpleNamespace
        >>> state = {STATE_KEY: {"run_id": "r-1", "namespace": "user-alice"}}
        >>> agent_run(SimpleNamespace(state=state))
        ('r-1', 'user-alice')
        >>> agent_run(None) is None
        True
    """
    state = getattr(runtime, "state", None)
    replay = state.get(STATE_KEY) if isinstance(state, Mapping) else None
    if not isinstance(replay, Mapping):
        return None
    run_id = given_text(replay.get("run_id"))
    if run_id is None:
        return None
    namespace = replay.get("namespace")
    return run_id, namespace if isinstance(namespace, str) else None


def agent_name(config: Mapping[str, Any] | None) -> str | None:
    """The ``name`` a ``create_agent`` graph was given, from a call's configuration.

    Examples:
        >>> agent_name({"metadata": {"lc_agent_name": "coder"}})
        'coder'
    """
    metadata = (config or {}).get("metadata") or {}
    return given_text(metadata.get("lc_agent_name"))
