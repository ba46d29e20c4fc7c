"""Docstrings are the Markdown the docs site renders, and their code is Python that parses."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_episodic"
FENCE = re.compile(r"^(?P<indent>[ \t]*)```python\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)
SPHINX_ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|data|attr|exc|obj):`")


def docstrings() -> list[tuple[str, str]]:
    """``(where, text)`` of every module, class and function docstring of the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node, clean=True)
                if text:
                    name = getattr(node, "name", "<module>")
                    found.append((f"{path.relative_to(PACKAGE.parent)}:{name}", text))
    return found


DOCSTRINGS = docstrings()


def test_no_docstring_uses_a_sphinx_role_or_directive() -> None:
    raw = [
        where for where, text in DOCSTRINGS if SPHINX_ROLE.search(text) or ".. code-block" in text
    ]
    assert raw == []


def test_an_example_section_is_spelled_examples_so_its_doctests_render_as_code() -> None:
    # Google style's "Example:" is an admonition: mkdocstrings shows its ">>>" lines as
    # nested quotes. "Examples:" is the section whose doctests it renders as code.
    singular = [w for w, text in DOCSTRINGS if re.search(r"(?m)^\s*Example:\s*$", text)]
    assert singular == []


BLOCKS = [
    (where, match.group("body")) for where, text in DOCSTRINGS for match in FENCE.finditer(text)
]


def test_docstrings_hold_fenced_python() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize(("where", "body"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_every_fenced_python_block_in_a_docstring_parses(where: str, body: str) -> None:
    # Doctests run (--doctest-modules); a fenced block that needs a running agent or a
    # server is shown, not run: at least it is Python a user can paste.
    import textwrap  # noqa: PLC0415

    ast.parse(textwrap.dedent(body), filename=where)
