"""The command's help: what each command offers, what building it costs, and read-only refusals.

``--help`` must not import what only running a command needs (numpy, Chroma, LangChain,
the memory): those tests run the real command in a subprocess and look at
``sys.modules`` afterwards, a fact about behaviour, never a timing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, HashingEmbeddings
from langchain_episodic.cli import COMMANDS, build_parser
from langchain_episodic.cli import _shared as shared
from langchain_episodic.errors import EmbeddingMismatchError, ReadOnlyMemoryError
from tests.helpers.cli import assert_one_line_error, run
from tests.helpers.episodes import QUERIES, corpus

HEAVY = (
    "numpy",
    "chromadb",
    "langchain_core",
    "langchain",
    "tqdm",
    "langchain_episodic.memory",
    "langchain_episodic.stores",
    "langchain_episodic.service",
    "langchain_episodic.embeddings",
    "langchain_episodic.pipeline",
    "langchain_episodic.scoring.priority",
)
"""Modules (and their submodules) that building the parser and printing help must not load."""

STORE_OPTIONS = ("--path", "--host", "--port", "--collection", "--namespace", "--lock-timeout")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (none if it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def every_help_argv() -> list[list[str]]:
    """``--help`` of the command, of every command, and of every ``lessons`` action."""
    argvs = [["--help"]]
    for name, sub in subcommands(build_parser()).items():
        argvs.append([name, "--help"])
        argvs += [[name, action, "--help"] for action in subcommands(sub)]
    return argvs


def loaded_after(argv: list[str]) -> tuple[int, str, list[str]]:
    """Run the command with ``argv`` in a fresh interpreter: exit code, stdout, heavy modules."""
    code = (
        "import contextlib, io, json, sys\n"
        "from langchain_episodic.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    code = main({argv!r})\n"
        f"heavy = sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') "
        f"for h in {HEAVY!r}))\n"
        "print(json.dumps([code, out.getvalue(), heavy]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    exit_code, out, heavy = json.loads(done.stdout)
    return exit_code, out, heavy


# --------------------------------------------------------------------------- lazy imports


def test_every_help_is_listed() -> None:
    argvs = every_help_argv()
    assert len(argvs) == 1 + len(COMMANDS) + 5  # lessons: list, show, reflect, quarantine, release
    assert ["lessons", "release", "--help"] in argvs


@pytest.mark.parametrize("argv", every_help_argv(), ids=" ".join)
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    code, out, heavy = loaded_after(argv)
    assert code == 0
    assert out.startswith("usage: langchain-episodic")
    assert heavy == []


def test_the_console_script_prints_help_without_loading_the_library() -> None:
    script = Path(sys.executable).with_name("langchain-episodic")
    if not script.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(script), "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "usage: langchain-episodic" in done.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert not {m for m in imported if m.split(".")[0] in ("numpy", "chromadb", "langchain_core")}
    assert "langchain_episodic.memory" not in imported


def test_a_command_still_loads_what_it_runs_with(tmp_path: Path) -> None:
    # Lazy, not missing: running recall imports the memory and finds the episodes.
    path = tmp_path / "m"
    EpisodicMemory(store=ChromaEpisodeStore(path=path)).record_many(corpus(4))
    code, out, heavy = loaded_after(["--path", str(path), "recall", QUERIES[0], "--json"])
    assert code == 0
    assert json.loads(out)["results"]
    assert {"numpy", "chromadb", "langchain_episodic.memory"} <= set(heavy)


def test_the_defaults_the_help_states_are_the_librarys() -> None:
    # Restated in cli/_shared.py so that building the parser imports none of these.
    from langchain_episodic.scoring.priority import DEFAULT_HALF_LIFE  # noqa: PLC0415
    from langchain_episodic.scoring.relevance import (  # noqa: PLC0415
        DEFAULT_RANKING,
        RELEVANCE_HALF_LIFE,
    )
    from langchain_episodic.stores.base import DEFAULT_NAMESPACE  # noqa: PLC0415

    assert shared.DEFAULT_NAMESPACE == DEFAULT_NAMESPACE
    assert shared.DEFAULT_RANKING == DEFAULT_RANKING
    assert shared.RELEVANCE_HALF_LIFE == RELEVANCE_HALF_LIFE
    assert shared.DEFAULT_HALF_LIFE == DEFAULT_HALF_LIFE


# --------------------------------------------------------------------------- what each offers


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_command_offers_the_store_options(command: str) -> None:
    sub = subcommands(build_parser())[command]
    parsers = [sub, *subcommands(sub).values()] if subcommands(sub) else [sub]
    for parser in parsers:
        offered = {option for action in parser._actions for option in action.option_strings}
        assert set(STORE_OPTIONS) <= offered, (command, parser.prog)


def test_the_lessons_summary_names_every_action(capsys: pytest.CaptureFixture[str]) -> None:
    lessons = next(command for command in COMMANDS if command.name == "lessons")
    actions = subcommands(subcommands(build_parser())["lessons"])
    assert list(actions) == ["list", "show", "reflect", "quarantine", "release"]
    summary = lessons.help.split(":", 1)[1]
    assert [action for action in actions if action not in summary] == []
    _, out, _ = run(capsys, "--help")
    assert f"lessons {lessons.help} skills" in " ".join(out.split())  # as printed (wrapped)


# --------------------------------------------------------------------------- read-only


@pytest.fixture
def other_model_memory(tmp_path: Path) -> Path:
    """A memory built with a model the command line cannot rebuild (by its dimension)."""
    path = tmp_path / "other"
    memory = EpisodicMemory(
        store=ChromaEpisodeStore(path=path), embeddings=HashingEmbeddings(dimensions=300)
    )
    memory.record_many(corpus(4))
    memory.store.close()  # type: ignore[attr-defined]
    return path


def test_the_api_says_read_only_and_names_the_operation(other_model_memory: Path) -> None:
    reader = EpisodicMemory(
        store=ChromaEpisodeStore(path=other_model_memory), on_embedding_mismatch="read-only"
    )
    assert len(reader) == 4  # reading works
    with pytest.raises(ReadOnlyMemoryError) as refused:
        reader.record(corpus(5)[4])
    message = str(refused.value)
    first, second = message.splitlines()
    assert first == (
        "cannot record: this memory is open read-only because namespace='default' was "
        "embedded with HashingEmbeddings, not with the given StaticEmbeddings."
    )
    assert "open it writable with the stored model" in second
    assert "embeddings=HashingEmbeddings(dimensions=300)" in second
    assert "migrate_namespace" in second
    assert len(message) < 400  # not the whole mismatch error again
    assert isinstance(refused.value, EmbeddingMismatchError)  # what was raised before
    with pytest.raises(ReadOnlyMemoryError, match=r"^cannot recall: this memory is open read-only"):
        reader.recall(QUERIES[0])
    assert len(reader) == 4


async def test_the_async_api_says_read_only_too(other_model_memory: Path) -> None:
    reader = EpisodicMemory(
        store=ChromaEpisodeStore(path=other_model_memory), on_embedding_mismatch="read-only"
    )
    with pytest.raises(ReadOnlyMemoryError, match=r"^cannot recall: "):
        await reader.arecall(QUERIES[0])
    with pytest.raises(ReadOnlyMemoryError, match=r"^cannot record: "):
        await reader.arecord(corpus(5)[4])


def test_the_mismatch_error_is_readable(other_model_memory: Path) -> None:
    with pytest.raises(EmbeddingMismatchError) as refused:
        EpisodicMemory(store=ChromaEpisodeStore(path=other_model_memory))
    lines = str(refused.value).splitlines()
    assert lines[0] == (
        "namespace='default' was embedded with HashingEmbeddings, not with the given "
        "StaticEmbeddings: their vectors are not comparable."
    )
    assert lines[1] == (
        f"  store:        ChromaEpisodeStore(path={str(other_model_memory)!r}, "
        "collection_name='episodes')"
    )
    text = "\n".join(lines)
    for fragment in (
        "stored model: langchain_episodic.embeddings.hashing.HashingEmbeddings",
        "(300 dimensions)",
        "given model:  langchain_episodic.embeddings.static.StaticEmbeddings",
        "difference:   its vectors have a dimension of 300",
        "open it with the stored model (embeddings=HashingEmbeddings(dimensions=300))",
        "migrate_namespace(",
        "on_embedding_mismatch='read-only'",
    ):
        assert fragment in text
    assert max(len(line) for line in lines[2:]) <= 200
    assert refused.value.location == lines[1].split(":", 1)[1].strip()


@pytest.fixture
def foreign_model_memory(tmp_path: Path) -> Path:
    """A memory built with a model the command line cannot rebuild (not the package's own)."""
    path = tmp_path / "foreign"
    memory = EpisodicMemory(
        store=ChromaEpisodeStore(path=path), embeddings=DeterministicFakeEmbedding(size=16)
    )
    memory.record_many(corpus(4))
    memory.store.close()  # type: ignore[attr-defined]
    return path


@pytest.mark.parametrize(
    ("argv", "operation"),
    [
        (["recall", QUERIES[0]], "recall"),
        (["import", "EPISODES"], "record"),
    ],
)
def test_the_cli_says_read_only_naming_the_operation(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    foreign_model_memory: Path,
    argv: list[str],
    operation: str,
) -> None:
    lines = tmp_path / "more.jsonl"
    lines.write_text(json.dumps(corpus(6)[5].to_dict()) + "\n")
    argv = [str(lines) if arg == "EPISODES" else arg for arg in argv]
    code, out, err = run(capsys, "--path", str(foreign_model_memory), *argv)
    assert (code, out) == (2, "")
    assert_one_line_error(
        err,
        f"error: cannot {operation}: namespace 'default' is open read-only because it was "
        "embedded with langchain_core.embeddings.fake.DeterministicFakeEmbedding",
        "the command line embeds with",
        f"To {operation}, use Python with the stored model",
        "'migrate --to-path NEW' re-embeds it",
    )
    code, out, _ = run(capsys, "--path", str(foreign_model_memory), "stats")
    assert code == 0
    assert "episodes    4\n" in out  # nothing was written; reading still works


def test_migrating_into_a_namespace_of_another_model_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, foreign_model_memory: Path
) -> None:
    source = tmp_path / "source"
    EpisodicMemory(store=ChromaEpisodeStore(path=source)).record_many(corpus(2))
    argv = ("--path", str(source), "migrate", "--to-path", str(foreign_model_memory), "-q")
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert_one_line_error(
        err,
        "namespace 'default' was embedded with langchain_core.embeddings.fake."
        "DeterministicFakeEmbedding",
        "the command line embeds with",
        "write to another namespace or collection (--to-namespace, --to-collection)",
    )
    assert "read-only" not in err
