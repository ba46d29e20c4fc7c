"""What an agent run's messages say: the latest request, the system prompt, a thread.

Pure functions over LangChain messages, for the middleware
(`langchain_episodic.integrations.middleware`): the text of the latest human
message, the system message with the replay appended, and the task of a follow-up turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage

from langchain_episodic.model.episode import TaskCategory, TaskDescription

__all__ = ["FOLLOW_UP", "append_to_system", "follow_up", "human_texts", "latest_human_text"]

FOLLOW_UP = "\nFollow-up: "
"""What joins a thread's task and a follow-up request in the follow-up's task."""


def _message_text(message: HumanMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content.strip()
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(part.strip() for part in parts if part.strip())


def latest_human_text(messages: Sequence[AnyMessage]) -> str | None:
    """Text of the latest ``HumanMessage`` in ``messages``, or ``None`` if there is none.

    String content is returned stripped; for a list of content blocks the text blocks
    are joined with newlines (images and other blocks are ignored). A human message
    without text is skipped in favour of an earlier one.

    Examples:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> latest_human_text([HumanMessage("old task"), AIMessage("ok"),
        ...                    HumanMessage([{"type": "text", "text": "new task"}])])
        'new task'
    """
    # Read from the newest back: a long thread's older messages are not extracted.
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and (text := _message_text(message)):
            return text
    return None


def append_to_system(system: SystemMessage | None, text: str) -> SystemMessage:
    """A new system message: the user's own content first, then ``text``."""
    if system is None:
        return SystemMessage(content=text)
    content = system.content
    if isinstance(content, str):
        new_content: str | list[str | dict[str, Any]] = (
            f"{content}\n\n{text}" if content.strip() else text
        )
    else:  # content blocks: keep them (e.g. cache-control markers), add a text block
        new_content = [*content, {"type": "text", "text": f"\n\n{text}"}]
    return system.model_copy(update={"content": new_content})


def human_texts(messages: Sequence[AnyMessage]) -> list[str]:
    """The texts of the human messages, oldest first (those without text left out)."""
    texts = (_message_text(m) for m in messages if isinstance(m, HumanMessage))
    return [text for text in texts if text]


def follow_up(thread_task: TaskDescription, request: TaskDescription) -> TaskDescription:
    """The task of a follow-up: its thread's task, then the request."""
    own = request.category is not TaskCategory.UNKNOWN
    if request.description == thread_task.description:  # the first request, asked again
        return request if own else thread_task
    return TaskDescription(
        f"{thread_task.description}{FOLLOW_UP}{request.description}",
        request.category if own else thread_task.category,
        request.complexity if own else thread_task.complexity,
    )
