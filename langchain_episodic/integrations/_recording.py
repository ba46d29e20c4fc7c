"""After an agent run: record its episode, credit what it was shown, reflect on it.

`RunRecorder` holds the middleware's recording settings (``record_episode``,
what a recording error does, the lesson writer and its background queue) and does the
work of ``after_agent``: the episode ``record_episode`` builds gets the run's
provenance, closes the run's credit, is recorded, and is reflected on.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_episodic._async import in_executor
from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.integrations._background import BackgroundWorker
from langchain_episodic.integrations._memories import RunMemories
from langchain_episodic.integrations._run_state import replay_of, source_of
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import Episode
from langchain_episodic.reflection import LessonWriter, reflect

__all__ = ["RecordEpisode", "RunRecorder"]

# The logger keeps the middleware's name: it is what users filter their logs by.
_log = logging.getLogger("langchain_episodic.integrations.middleware")
_CREDITED_BY = "EpisodicMemoryMiddleware"

RecordEpisode = Callable[[Any, Any], Episode | Awaitable[Episode | None] | None]
"""``record_episode(state, runtime) -> Episode | None``: the episode of a finished run.

Called once after the agent finishes, with the final agent state and the LangGraph
``Runtime``. Return the `Episode` to record, or ``None`` to record nothing. It
may be a coroutine function (awaited under ``ainvoke``; refused under ``invoke``).
An episode built without a timestamp is dated now by the wall clock (``time.time()``);
pass ``timestamp=memory.now()`` to date it on the memory's own (injectable) clock.
"""


@dataclass(eq=False, kw_only=True)
class RunRecorder:
    """The recording settings of a middleware, and the recording of a finished run.

    Args and their checks are `EpisodicMemoryMiddleware`'s
    of the same names.
    """

    memories: RunMemories
    record_episode: RecordEpisode | None
    on_record_error: Literal["log", "raise"]
    reflect_with: LessonWriter | None
    reflect_in_background: bool
    reflection_queue: int
    infer_category: bool = True
    reflections: BackgroundWorker = field(init=False)

    def __post_init__(self) -> None:
        if self.on_record_error not in ("log", "raise"):
            msg = f"on_record_error={self.on_record_error!r} is invalid: must be 'log' or 'raise'"
            raise EpisodicValueError(msg)
        if self.record_episode is not None and not callable(self.record_episode):
            msg = f"record_episode={self.record_episode!r} is invalid: must be callable"
            raise TypeError(msg)
        if self.reflect_with is not None and not isinstance(self.reflect_with, LessonWriter):
            msg = (
                f"reflect_with={self.reflect_with!r} is invalid: must be a "
                "langchain_episodic.reflection.LessonWriter or None"
            )
            raise TypeError(msg)
        if not isinstance(self.reflect_in_background, bool):
            msg = f"reflect_in_background={self.reflect_in_background!r} is invalid: must be a bool"
            raise TypeError(msg)
        check_int("reflection_queue", self.reflection_queue, 1)
        # The reflection thread is a daemon: at exit it gets EXIT_FLUSH_TIMEOUT seconds
        # to finish (and store) what it is doing, then what is pending is abandoned.
        self.reflections = BackgroundWorker(
            self.reflection_queue, name="episodic-reflection", jobs="reflections", logger=_log
        )

    def record(self, state: Mapping[str, Any], runtime: object) -> None:
        """Record the finished run's episode; an error is logged or raised as configured.

        Raises:
            TypeError: ``record_episode`` returned something other than an
                `Episode` or ``None``, or is async under a sync ``invoke``.
        """
        if self.record_episode is None:
            return
        with self._handling_errors():
            result = self.record_episode(state, runtime)
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                msg = (
                    "record_episode is async: run the agent with ainvoke/astream, "
                    "or pass a synchronous record_episode"
                )
                raise TypeError(msg)
            self._store(state, runtime, result)

    async def arecord(self, state: Mapping[str, Any], runtime: object) -> None:
        """Async twin of `record`; a sync ``record_episode`` runs in a thread."""
        if self.record_episode is None:
            return
        with self._handling_errors():
            result: object
            if inspect.iscoroutinefunction(self.record_episode):
                result = self.record_episode(state, runtime)
            else:
                result = await in_executor(self.record_episode, state, runtime)
            if inspect.isawaitable(result):
                result = await result
            await in_executor(self._store, state, runtime, result)

    @contextlib.contextmanager
    def _handling_errors(self) -> Iterator[None]:
        try:
            yield
        except TypeError:
            raise  # a misconfigured record_episode, not a run's data
        except Exception:
            if self.on_record_error == "raise":
                raise
            _log.exception("could not record the finished run (the answer is kept)")

    def _store(self, state: Mapping[str, Any], runtime: object, result: object) -> None:
        """Record what ``record_episode`` returned, credit the run, reflect on it."""
        if result is None:
            return
        if not isinstance(result, Episode):
            msg = f"record_episode returned {result!r}: expected an Episode or None"
            raise TypeError(msg)
        memory = self.memories.for_recording(state, runtime)
        episode = result
        # The run's provenance fills what the episode's own source leaves unset.
        if (run := source_of(state)) is not None:
            source = run if episode.source is None else episode.source.merged_over(run)
            if source != episode.source:
                episode = replace(episode, source=source)
        _credit(state, episode, memory)
        memory.record(episode, infer_category=self.infer_category)
        if (writer := self.reflect_with) is None:
            return
        if not self.reflect_in_background:
            _reflect(memory, writer, episode)
        elif not self.reflections.submit(lambda: _reflect(memory, writer, episode)):
            # The queue is full (or the middleware closed): the reflection is dropped.
            _log.warning(
                "reflection on episode_id=%r dropped: %s",
                episode.episode_id,
                "the middleware is closed"
                if self.reflections.closed
                else f"{self.reflection_queue} reflections are already pending",
            )


def _reflect(memory: EpisodicMemory, writer: LessonWriter, episode: Episode) -> None:
    """Reflect on a recorded episode and store its lessons; never raises."""
    try:
        result = reflect(memory, writer, episode.episode_id)
    except Exception:  # reflection must never break the run it follows
        _log.warning(
            "reflection on episode_id=%r in namespace=%r failed; no lesson was stored",
            episode.episode_id,
            memory.namespace,
            exc_info=True,
        )
        return
    if result.stored:
        _log.info(
            "reflection on episode_id=%r stored lessons %s",
            episode.episode_id,
            [lesson.lesson_id for lesson in result.stored],
        )


def _credit(state: Mapping[str, Any], episode: Episode, memory: EpisodicMemory) -> None:
    """Close the run with its reward (idempotent, never raises: ``memory.runs.close``).

    Before the episode is recorded: recording an episode whose source names the
    run would close it too, without saying who closed it.
    """
    replay = replay_of(state)
    if replay is not None and (run_id := replay.get("run_id")) is not None:
        # A run acting for a principal is credited by it (a shared memory then gives
        # its reward no say over that principal's own episodes).
        by = replay.get("principal") or _CREDITED_BY
        memory.runs.close(run_id, episode.feedback.reward, by=by)
