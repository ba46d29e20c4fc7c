"""Every Python snippet of README.md and of the docs runs, offline, in reading order.

The fenced ``python`` blocks of README.md, then of every page of the docs site in the
order of ``mkdocs.yml``'s nav, are executed top to bottom in one namespace
(a reader who copies them in order has the names earlier blocks defined), in a fresh
working directory, so the folders they create (``./episodic-memory``, ...) land in a
temporary directory. Then they run again, in a fresh namespace but on what the first
run left (the same folders, Chroma server and PostgreSQL database): a reader who runs
the script twice must not meet an error the first run did not raise. The README binds
``model`` to an offline fake chat model itself; no block reaches a real model or the
network. The server block's
``chromadb.HttpClient(host="localhost", port=8000)`` is pointed at the test session's
real ``chroma run`` server (``tests/chroma_server.py``), and the PostgreSQL block's
``PostgresStore.from_conn_string(POSTGRES_URI, ...)`` at a fresh database on the test
session's real PostgreSQL with pgvector (``tests/postgres_server.py``).

A block may be left out only with ``<!-- readme-test: skip (why) -->`` on the line
above it; there are few such blocks (today none), and each says why.

Of the shell blocks, the quickstart (``python examples/quickstart.py``) and every
``langchain-episodic ...`` command run too, in process; the set-up commands (venv,
pip install, the full test run) do not. The names in the "Public API in brief" table
import from where the table says.
"""

from __future__ import annotations

import builtins
import importlib
import re
import runpy
import shlex
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import chromadb
import pytest
from langgraph.store.postgres import PostgresStore

import langchain_episodic
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.cli import main as cli_main
from tests.postgres_server import fresh_database

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def documents() -> list[Path]:
    """README.md, then the docs pages in the nav order of mkdocs.yml."""
    nav = re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    return [README, *(ROOT / "docs" / page for page in nav)]


SKIP_MARKER = re.compile(r"^<!--\s*readme-test:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->$")
MAX_SKIPPED = 1

# The servers the README's and the docs' Chroma server blocks talk to.
README_SERVERS = {("localhost", 8000), ("memory.internal", 8000)}


@dataclass(frozen=True)
class Block:
    """One fenced code block of the README or a docs page."""

    document: str  # its file, relative to the repository
    language: str
    line: int  # 1-based line of the block's first code line
    section: str  # the closest heading above it
    code: str
    skip_reason: str | None


def readme_blocks(text: str, document: str = "README.md") -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    section = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#") and not line.startswith("#!"):
            section = line.lstrip("#").strip()
        fence = re.match(r"^(?P<indent>\s*)```(?P<language>[\w-]*)\s*$", line)
        if fence is None:
            index += 1
            continue
        indent = fence["indent"]
        start = index + 1
        end = start
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        assert end < len(lines), f"README.md:{index + 1}: unclosed code fence"
        code = "\n".join(
            body[len(indent) :] if body.startswith(indent) else body for body in lines[start:end]
        )
        previous = next(
            (lines[i].strip() for i in range(index - 1, -1, -1) if lines[i].strip()), ""
        )
        marker = SKIP_MARKER.match(previous)
        blocks.append(
            Block(
                document=document,
                language=fence["language"],
                line=start + 1,
                section=section,
                code=code + "\n",
                skip_reason=None if marker is None else marker["reason"].strip(),
            )
        )
        index = end + 1
    return blocks


BLOCKS = [
    block
    for path in documents()
    for block in readme_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
]
PYTHON_BLOCKS = [block for block in BLOCKS if block.language == "python"]


def test_the_parser_finds_the_readme_snippets() -> None:
    assert len(PYTHON_BLOCKS) >= 10, [block.line for block in PYTHON_BLOCKS]
    sections = {block.section for block in PYTHON_BLOCKS}
    assert {"Use it", "Retriever", "A tool the agent calls itself"} <= sections, sections
    # A skip marker above a bash block would be meaningless: markers are for Python.
    assert all(block.skip_reason is None for block in BLOCKS if block.language != "python")


def test_few_blocks_are_skipped_and_each_says_why() -> None:
    skipped = [block for block in PYTHON_BLOCKS if block.skip_reason is not None]
    assert len(skipped) <= MAX_SKIPPED, [(block.line, block.skip_reason) for block in skipped]
    for block in skipped:
        assert len(block.skip_reason or "") >= 10, f"{block.document}:{block.line}: say why"
    # A marker that matches no block (a typo, a moved block) would be dead text.
    markers = [
        line
        for path in documents()
        for line in path.read_text().splitlines()
        if "readme-test" in line
    ]
    assert len(markers) == len(skipped), markers


def redirecting_http_client(address: tuple[str, int]) -> Any:
    """``chromadb.HttpClient`` that sends the README's localhost:8000 to the test server."""
    real = chromadb.HttpClient

    def http_client(*args: Any, host: str = "localhost", port: int = 8000, **kwargs: Any) -> Any:
        if (host, port) in README_SERVERS:
            host, port = address
        return real(*args, host=host, port=port, **kwargs)

    return http_client


def redirecting_conn_string(uri: str) -> Any:
    """``PostgresStore.from_conn_string`` that opens the test database whatever it is given."""
    original = PostgresStore.from_conn_string

    def from_conn_string(conn_string: str, **kwargs: Any) -> Any:
        assert conn_string.startswith("postgresql://"), conn_string
        return original(uri, **kwargs)

    return from_conn_string


def test_every_python_block_runs_in_order(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    chroma_server_address: tuple[str, int],
    postgres_uri: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setattr(chromadb, "HttpClient", redirecting_http_client(chroma_server_address))
    monkeypatch.setattr(
        PostgresStore, "from_conn_string", redirecting_conn_string(fresh_database(postgres_uri))
    )
    # Keys of a real model provider, if the machine has any, must not be used.
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)

    runs = [run_python_blocks(which) for which in ("first run", "second run")]
    # The second run (a re-run of the script) saw what the first one left, and passed.
    for namespace in runs:
        check_what_the_blocks_did(namespace, tmp_path)


def run_python_blocks(which: str) -> dict[str, Any]:
    """Every Python block not skipped, in order, in one fresh namespace; that namespace."""
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    ran = 0
    for block in PYTHON_BLOCKS:
        if block.skip_reason is not None:
            continue
        code = compile(block.code, f"{block.document}:{block.line}", "exec")
        try:
            exec(code, namespace)
        except Exception as error:
            msg = (
                f"{block.document}:{block.line} (section {block.section!r}) failed on the "
                f"{which}: {error!r}"
            )
            raise AssertionError(msg) from error
        ran += 1
    assert ran == len(PYTHON_BLOCKS) - sum(b.skip_reason is not None for b in PYTHON_BLOCKS)
    return namespace


def check_what_the_blocks_did(namespace: dict[str, Any], tmp_path: Path) -> None:
    """What the snippets claim happened, happened."""
    # The snippets ran on the fake model the README defines, never a real one.
    from langchain_core.language_models.fake_chat_models import (  # noqa: PLC0415
        GenericFakeChatModel,
    )

    assert isinstance(namespace["model"], GenericFakeChatModel)
    # Read back from the folder they wrote.
    getting_started = namespace["replay"]
    assert "Task: Implement a login form with validation" in getting_started.text
    assert "Strategy: " in getting_started.text
    # The credit example's comment: login-1 was shown in its runs, which were credited
    # (each run of the page, and later pages' runs, add to the counts).
    credited = namespace["row"]
    assert credited.episode_id == "login-1"
    assert credited.injections >= credited.credited_runs >= 1
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path / "episodic-memory"))
    recorded = {episode.task.description: episode for episode in memory.episodes()}
    assert recorded["Implement a login form with validation"].outcome.value == "success"
    # Each turn of the middleware's thread is recorded.
    assert "Add password reset to the login form" in recorded
    assert any("Now add rate limiting to it" in description for description in recorded)


# ------------------------------------------------------------------ the shell blocks

QUICKSTART = README.parent / "examples" / "quickstart.py"


def reads_the_time(argv: list[str]) -> bool:
    """Whether the command's output depends on "now" (recency, utility, --max-age)."""
    return bool({"recall", "harmful", "prune"} & set(argv)) or (
        "lessons" in argv and bool({"list", "show"} & set(argv))
    )


def cli_commands() -> list[list[str]]:
    """The ``langchain-episodic ...`` lines of the README's shell blocks, as argv lists."""
    return [
        shlex.split(line)[1:]
        for block in BLOCKS
        if block.language == "bash"
        for line in block.code.splitlines()
        if line.startswith("langchain-episodic ")
    ]


def test_the_quickstart_then_every_cli_command_of_the_readme_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    chroma_server_address: tuple[str, int],
    unique_name: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The set-up commands (venv, pip install) are not run; what they end with is.
    quickstart = next(block for block in BLOCKS if block.section == "Quickstart")
    assert quickstart.code.strip().endswith("python examples/quickstart.py")
    commands = cli_commands()
    assert len(commands) >= 8, commands

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setattr(sys, "argv", [str(QUICKSTART)])
    quickstart_now = runpy.run_path(str(QUICKSTART), run_name="__main__")["NOW"]
    assert (tmp_path / "quickstart-memory").is_dir()
    # The default embedder is semantic: the paraphrase finds the login-form episode.
    paraphrased = capsys.readouterr().out.split("=== Recall of a paraphrase", 1)[1]
    found = paraphrased.split("\n\n", 1)[0].splitlines()[2]
    assert found.endswith("  Implement a login form with email validation"), found

    host, port = chroma_server_address
    for argv in commands:
        if "--to-host" in argv:  # the README's localhost:8000 is the test session's server
            argv[argv.index("--to-host") + 1] = host
            argv[argv.index("--to-port") + 1] = str(port)
            argv += ["--to-collection", unique_name]
    # What depends on the time is read at the quickstart's "now", as the README says.
    for argv in commands:
        if reads_the_time(argv):
            assert "--now" in argv, f"{argv}: pass --now, as the README's text says"
            when = datetime.fromisoformat(argv[argv.index("--now") + 1].replace("Z", "+00:00"))
            assert when.timestamp() == quickstart_now, argv
    capsys.readouterr()
    for argv in commands:
        assert cli_main(argv) == 0, argv
    recalls = sum("recall" in argv for argv in commands)
    assert capsys.readouterr().out.count("recency    now 2026-05-30 20:26:40 UTC") == recalls
    assert (tmp_path / "episodes.jsonl").is_file()
    assert (tmp_path / "curve.png").is_file()


# ------------------------------------------------------------------ the API table


def api_table_rows(text: str) -> list[list[str]]:
    section = text.split("## Public API in brief", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) > 2, "the API table is missing"
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def leading_name(token: str) -> str:
    match = re.match(r"\.?([A-Za-z_][A-Za-z0-9_]*)", token)
    assert match is not None, token
    return match[1]


def has_attribute(owner: object, name: str) -> bool:
    fields = getattr(owner, "__dataclass_fields__", None) or getattr(owner, "model_fields", None)
    return hasattr(owner, name) or (fields is not None and name in fields)


def check_cell(cell: str, module: Any, *, modules_allowed: bool) -> list[str]:
    """Resolve every backticked name of ``cell``; return those that do not resolve.

    A name resolves in ``module`` (or, in the module column, in the module named before
    it), as a builtin (``ValueError``), or as an attribute (a method, a property) of a
    name listed earlier in the same cell.
    """
    missing: list[str] = []
    owners: list[object] = []
    base = module
    for token in re.findall(r"`([^`]+)`", cell):
        if token == "len()":
            continue  # EpisodicMemory supports len()
        if modules_allowed and token.startswith("langchain_episodic"):
            base = importlib.import_module(token)
            continue
        if modules_allowed and re.fullmatch(r"\.[a-z_]+", token):
            parent = base.__name__.rsplit(".", 1)[0]
            importlib.import_module(parent + token)
            continue
        name = leading_name(token)
        if hasattr(base, name):
            owners.append(getattr(base, name))
        elif hasattr(builtins, name) or any(has_attribute(owner, name) for owner in owners):
            continue
        else:
            missing.append(f"{base.__name__}:{token}")
    return missing


def test_the_api_table_names_import_from_where_it_says() -> None:
    missing: list[str] = []
    rows = api_table_rows((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    for area, top_level, from_module in rows:
        missing += [
            f"{area}: {name}"
            for name in check_cell(top_level, langchain_episodic, modules_allowed=False)
        ]
        missing += [
            f"{area}: {name}"
            for name in check_cell(from_module, langchain_episodic, modules_allowed=True)
        ]
    assert missing == []


def test_the_top_level_names_in_the_table_are_all_of_all() -> None:
    rows = api_table_rows((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    listed = {
        leading_name(token)
        for _area, top_level, _module in rows
        for token in re.findall(r"`([^`]+)`", top_level)
        if leading_name(token) in langchain_episodic.__all__
    }
    assert listed == set(langchain_episodic.__all__) - {"__version__"}
