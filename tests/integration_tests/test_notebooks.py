"""Every notebook in examples/ runs top to bottom offline, is stored without outputs,
and asserts what it shows: a notebook's text promises what its output says, and an
``assert`` in a cell is what keeps the two from drifting apart when the library changes.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(path.name for path in EXAMPLES.glob("*.ipynb"))

# The kernel inherits the environment: no telemetry, no model downloads, no GUI.
KERNEL_ENV = {
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "MPLBACKEND": "Agg",
}


# The agent notebook's "Swap in a real model" cell is code, run with a fake model
# standing in for the real one: a swap-in shown only as text once raised KeyError.
SWAP_IN_TAG = "swap-in-model"


def cells_tagged(notebook: nbformat.NotebookNode, tag: str) -> list[nbformat.NotebookNode]:
    return [cell for cell in notebook.cells if tag in cell.metadata.get("tags", [])]


def test_the_examples_include_the_notebooks() -> None:
    # rag_with_experience, learning_curve and agent_with_memory (written separately):
    # the glob must find them all, so a notebook moved or renamed away cannot go unrun.
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS
    assert {"rag_with_experience.ipynb", "learning_curve.ipynb"} <= set(NOTEBOOKS)


def test_the_agent_notebook_swaps_in_a_model_in_a_code_cell() -> None:
    notebook = nbformat.read(EXAMPLES / "agent_with_memory.ipynb", as_version=4)
    tagged = cells_tagged(notebook, SWAP_IN_TAG)
    assert len(tagged) == 1, "the swap-in cell lost its tag"
    assert tagged[0].cell_type == "code"
    assert "init_chat_model" in tagged[0].source


def sections(notebook: nbformat.NotebookNode) -> dict[str, list[str]]:
    """The sources of the code cells under each ``##`` heading (the title's set-up aside)."""
    found: dict[str, list[str]] = {}
    heading = None
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            headings = [line for line in cell.source.splitlines() if line.startswith("## ")]
            heading = headings[-1] if headings else heading
        elif heading is not None:
            found.setdefault(heading, []).append(cell.source)
    return found


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_section_that_prints_asserts(name: str) -> None:
    # What a section prints is what its text describes; an assert checks the claim.
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    unchecked = [
        heading
        for heading, sources in sections(notebook).items()
        if any("print(" in source for source in sources)
        and not any(re.search(r"^\s*assert\b", source, re.MULTILINE) for source in sources)
    ]
    assert unchecked == [], f"{name}: sections that print but assert nothing"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_without_outputs(name: str) -> None:
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    nbformat.validate(notebook)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells, f"{name} has no code cell"
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [], f"{name}: cell {index} is stored with outputs; clear them"
        assert cell.execution_count is None, f"{name}: cell {index} has an execution count"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_without_errors(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in KERNEL_ENV.items():
        monkeypatch.setenv(key, value)
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(EXAMPLES)}},
    )
    client.execute()  # raises CellExecutionError on the first cell that fails
    executed = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in executed), name
    errors = [
        output
        for cell in executed
        for output in cell.outputs
        if output.get("output_type") == "error"
    ]
    assert errors == [], name
    for cell in cells_tagged(notebook, SWAP_IN_TAG):
        printed = "".join(output.get("text", "") for output in cell.outputs)
        assert "recorded" in printed, f"{name}: the swap-in cell ran but recorded nothing"
