r"""Stored text reaches a terminal inert: control, format and separator characters escaped.

A memory's text comes from agents, tools and test output. Printed raw, an ESC sequence
could clear the screen, retitle the terminal or forge a hyperlink, a bidi override could
reorder what is shown, and a backspace could hide characters, for whoever inspects the
memory. The rule is by Unicode category, not by a list: every character of category
``Cc`` (controls, C0 and C1) except newline and tab, ``Cf`` (format: bidi controls,
zero-width characters, interlinear annotations, ...), ``Zl`` and ``Zp`` (line and
paragraph separators) and ``Cs`` (lone surrogates) is written as its ``\uXXXX``
escape (a surrogate pair of them beyond the BMP). The escape is also a JSON string
escape, so JSON output stays exact JSON that decodes to the stored text.
"""

from __future__ import annotations

import unicodedata
from typing import Any, TextIO

__all__ = ["SafeStream", "terminal_safe"]

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_KEPT = frozenset({"\n", "\t"})


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    # Beyond the BMP, as JSON writes it: a UTF-16 surrogate pair of escapes.
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def terminal_safe(text: str) -> str:
    r"""``text`` with every control, format and separator character escaped visibly.

    Examples:
        >>> terminal_safe("ok\x1b[2J\u202eevil\tend")
        'ok\\u001b[2J\\u202eevil\tend'
    """
    if text.isprintable():  # the common case: nothing to escape (tab/newline aside)
        return text
    return "".join(
        _escape(char)
        if char not in _KEPT and unicodedata.category(char) in _ESCAPED_CATEGORIES
        else char
        for char in text
    )


class SafeStream:
    """A text stream that writes through `terminal_safe` (the CLI's standard output)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` made terminal-safe; the length of what was given."""
        self._stream.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line made terminal-safe."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
