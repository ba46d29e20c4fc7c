"""The memory in your traces: each recall, replay, credit and forget as a run and a span.

Where LangChain users look: when a memory call happens inside a LangChain run (a chain,
a tool, an agent's middleware), it is a child run of that run, so LangSmith and every
callback handler see it with its outputs: what was shown, what was withheld and why,
the scores, the holdout flag, the lessons. A call outside any run makes no trace of
its own. When OpenTelemetry has a tracer provider (an SDK is configured), each call is
also a span, named ``episodic.<operation>``, with attributes under ``episodic.*``
(`SPAN_ATTRIBUTES`). With neither, nothing is built: the check is one context
variable and one global.

What a trace holds: ids, counts, scores and flags. Text the memory stores (task
descriptions, solutions, lessons, the replay prompt) only when the memory is opened
with ``trace_content=True``, since traces leave the machine. An erasure's trace
never holds an id it erased: counts, and digests of the ids.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

__all__ = ["SPAN_ATTRIBUTES", "Trace", "id_digest", "traced"]

SPAN_ATTRIBUTES = {
    "episodic.namespace": "the memory's namespace",
    "episodic.operation": "recall, replay, credit or forget",
    "episodic.run_id": "the run a replay or a credit is for",
    "episodic.holdout": "the run was held out: shown no memory",
    "episodic.presentation": "the presentation policy a replay showed with",
    "episodic.shown.ids": "the episodes shown (a replay) or kept (a recall), in order",
    "episodic.shown.count": "how many",
    "episodic.withheld.count": "relevant episodes recall found that the prompt does not show",
    "episodic.rejected.count": "candidates recall turned away",
    "episodic.lessons.ids": "the lessons shown above the episodes",
    "episodic.reward": "the reward a credit gave",
    "episodic.credited.ids": "the episodes and lessons a credit moved",
    "episodic.erased.count": "episodes an erasure removed",
    "episodic.erased.digests": "SHA-256 digests (16 hex) of the ids an erasure removed",
}
"""The OpenTelemetry attributes a memory's spans carry, each with what it says."""

_OPERATIONS = frozenset({"recall", "replay", "credit", "forget"})


def id_digest(value: str) -> str:
    """A short digest of an id, for traces that must not carry it (an erasure's).

    Examples:
        >>> id_digest("login-1")
        '9055b0b547c61f8e'
    """
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Trace:
    """One memory call's run and span, open while the call runs; `done` says its outputs."""

    def __init__(self, run: Any, span: Any) -> None:
        self._run = run
        self._span = span
        self.outputs: dict[str, Any] = {}

    @property
    def active(self) -> bool:
        """Whether anything listens: worth building outputs for."""
        return self._run is not None or self._span is not None

    def done(self, outputs: Mapping[str, Any], attributes: Mapping[str, Any] | None = None) -> None:
        """Record what the call produced: ``outputs`` for the run, ``attributes`` for the span."""
        self.outputs = dict(outputs)
        if self._span is not None:
            for key, value in (attributes or {}).items():
                if value is not None:
                    self._span.set_attribute(key, value)

    def _end(self, error: BaseException | None) -> None:
        if self._run is not None:
            if error is None:
                self._run.on_chain_end(self.outputs)
            else:
                self._run.on_chain_error(error)
        if self._span is not None and error is not None:
            self._span.record_exception(error)
            from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

            self._span.set_status(Status(StatusCode.ERROR, type(error).__name__))


def _parent_callbacks() -> Any:
    """The callbacks of the LangChain run this call happens in, or ``None``."""
    # LangChain's config module is loaded once any runnable ran; before, no run is open.
    config_module = sys.modules.get("langchain_core.runnables.config")
    if config_module is None:
        return None
    config = config_module.var_child_runnable_config.get()
    callbacks = config.get("callbacks") if config else None
    # A run's child config carries a manager naming its run: the memory's run nests
    # under it. Handlers given with no run open make no trace of the memory's own.
    if getattr(callbacks, "parent_run_id", None) is None:
        return None
    return callbacks


def _tracer() -> Any:
    """OpenTelemetry's tracer for the package, or ``None`` when no provider is set."""
    try:
        from opentelemetry import trace  # noqa: PLC0415
    except ImportError:  # the API is optional (chromadb brings it)
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return provider.get_tracer("langchain_episodic")


def traced(
    operation: str, namespace: str, inputs: Mapping[str, Any]
) -> AbstractContextManager[Trace]:
    """A run (under the caller's LangChain run) and a span around one memory call.

    ``inputs`` are the run's inputs: ids, numbers and flags (what may leave the machine).
    The caller fills the outputs with `Trace.done` when `Trace.active`. With nothing
    listening, one shared inactive trace: nothing is built.
    """
    if operation not in _OPERATIONS:
        msg = f"operation={operation!r} is not traced; one of {sorted(_OPERATIONS)}"
        raise ValueError(msg)
    callbacks = _parent_callbacks()
    tracer = _tracer()
    if callbacks is None and tracer is None:
        return _UNTRACED
    return _traced(operation, namespace, inputs, callbacks, tracer)


_UNTRACED = nullcontext(Trace(None, None))


@contextmanager
def _traced(
    operation: str, namespace: str, inputs: Mapping[str, Any], callbacks: Any, tracer: Any
) -> Iterator[Trace]:
    run = None
    if callbacks is not None:
        from langchain_core.callbacks.manager import CallbackManager  # noqa: PLC0415

        manager = CallbackManager.configure(
            inheritable_callbacks=callbacks,
            local_tags=["langchain_episodic"],
            local_metadata={"episodic_operation": operation},
        )
        run = manager.on_chain_start(
            None, {"namespace": namespace, **inputs}, name=f"episodic_{operation}"
        )
    with _inside(run), _span(tracer, operation, namespace) as span:
        trace = Trace(run, span)
        try:
            yield trace
        except BaseException as error:
            trace._end(error)
            raise
        trace._end(None)


@contextmanager
def _inside(run: Any) -> Iterator[None]:
    """Make ``run`` the parent of the memory calls made while it is open (a replay's recall)."""
    if run is None:
        yield
        return
    config_module = sys.modules["langchain_core.runnables.config"]
    current = config_module.var_child_runnable_config.get() or {}
    token = config_module.var_child_runnable_config.set({**current, "callbacks": run.get_child()})
    try:
        yield
    finally:
        config_module.var_child_runnable_config.reset(token)


def _span(tracer: Any, operation: str, namespace: str) -> AbstractContextManager[Any]:
    """The operation's OpenTelemetry span, current while it runs; ``None`` without a tracer."""
    if tracer is None:
        return nullcontext()
    span: AbstractContextManager[Any] = tracer.start_as_current_span(
        f"episodic.{operation}",
        attributes={"episodic.namespace": namespace, "episodic.operation": operation},
        record_exception=False,
        set_status_on_exception=False,
    )
    return span
