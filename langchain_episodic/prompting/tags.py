"""The prompt's own tags: the one list the renderers write and the sanitiser escapes.

Every block of a prompt this package builds is delimited by one of these tags
(``<experience ...>`` ... ``</experience>``, ``<feedback>``, ``<solution>``,
``<lesson ...>``); the renderers spell them from here, and
`sanitize` escapes any stored text that would read as
one of them, so a tag a renderer writes is always one the sanitiser guards.

Examples:
    >>> open_tag(EXPERIENCE, index=1, outcome="success")
    '<experience index="1" outcome="success">'
    >>> close_tag(SOLUTION)
    '</solution>'
"""

from __future__ import annotations

__all__ = [
    "EXPERIENCE",
    "FEEDBACK",
    "LESSON",
    "PROMPT_TAGS",
    "SOLUTION",
    "close_tag",
    "open_tag",
]

EXPERIENCE = "experience"
"""One recalled episode's block."""
FEEDBACK = "feedback"
"""An episode's feedback message, inside its block."""
SOLUTION = "solution"
"""An episode's solution, inside its block."""
LESSON = "lesson"
"""One lesson's block."""

PROMPT_TAGS: tuple[str, ...] = (EXPERIENCE, FEEDBACK, SOLUTION, LESSON)
"""Every tag name a prompt of this package uses; stored text never shows one."""


def open_tag(name: str, **attributes: object) -> str:
    """The opening tag ``<name key="value" ...>`` (attributes in the order given)."""
    shown = "".join(f' {key}="{value}"' for key, value in attributes.items())
    return f"<{name}{shown}>"


def close_tag(name: str) -> str:
    """The closing tag ``</name>``."""
    return f"</{name}>"
