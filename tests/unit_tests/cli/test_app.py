"""The ``langchain-episodic`` command, end to end on real on-disk Chroma stores: its
parser, help, store options and errors (each command's own output is tested in the
file named for the command's module).

Most tests call ``main([...])`` in-process and read stdout/stderr with ``capsys``; a
few run the real ``python -m langchain_episodic`` and the installed console script.
``--help`` must not import what only running a command needs (numpy, Chroma, LangChain,
the memory): those tests run the real command in a subprocess and look at
``sys.modules`` afterwards, a fact about behaviour, never a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    HashingEmbeddings,
)
from langchain_episodic.cli import COMMANDS, build_parser
from langchain_episodic.cli import _shared as shared
from langchain_episodic.errors import EmbeddingMismatchError, ReadOnlyMemoryError
from tests.helpers.cli import (
    GOOD,
    QUERY,
    assert_one_line_error,
    open_memory,
    run,
)
from tests.helpers.episodes import QUERIES, corpus
from tests.unit_tests.factories import make_episode

REPO = Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------ store options


def test_store_options_may_follow_the_command_and_come_from_the_environment(
    capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, before, _ = run(capsys, "--path", str(store_path), "stats")
    _, after, _ = run(capsys, "stats", "--path", str(store_path))
    monkeypatch.setenv("LANGCHAIN_EPISODIC_PATH", str(store_path))
    _, from_env, _ = run(capsys, "stats")
    assert before == after == from_env
    assert "episodes    12" in before


def test_default_path_is_episodic_memory_in_the_working_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGCHAIN_EPISODIC_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(make_episode().to_dict()) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "import", str(source))
    assert code == 0
    assert "imported 1," in out
    assert len(open_memory(tmp_path / "episodic-memory")) == 1


# ------------------------------------------------------------------ reading commands


@pytest.mark.parametrize("command", [["stats"], ["recall", "x"], ["skills"], ["curve"]])
def test_read_commands_never_create_a_memory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    target = tmp_path / "nothing-here"
    code, _, err = run(capsys, "--path", str(target), *command)
    assert code == 2
    assert_one_line_error(err, f"no episodic memory at {str(target)!r}")
    assert not target.exists()


# ------------------------------------------------------------------ namespaces, options


def test_namespaces_are_isolated(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = str(tmp_path / "shared")
    team_a = tmp_path / "a.jsonl"
    team_a.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in GOOD[:2]), "utf-8")
    team_b = tmp_path / "b.jsonl"
    team_b.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in corpus(3)), "utf-8")
    assert run(capsys, "--path", path, "--namespace", "team-a", "import", str(team_a))[0] == 0
    assert run(capsys, "--path", path, "import", str(team_b), "--namespace", "team-b")[0] == 0

    code, _, err = run(capsys, "--path", path, "stats")
    assert code == 2
    assert_one_line_error(err, "namespace 'default' not found", "'team-a', 'team-b'")

    _, out, _ = run(capsys, "--path", path, "--namespace", "team-a", "stats")
    assert "episodes    2\n" in out
    assert "namespaces  team-a, team-b\n" in out
    _, out, _ = run(
        capsys,
        *("--path", path, "--namespace", "team-b", "recall", "Good task", "-k", "5", "--json"),
        *("--ranking", "article"),  # every candidate of the namespace, relevant or not
    )
    assert {r["episode_id"] for r in json.loads(out)["results"]} == {"ep-0", "ep-1", "ep-2"}
    _, out, _ = run(capsys, "--path", path, "--namespace", "team-a", "export", "-")
    assert [json.loads(line)["episode_id"] for line in out.splitlines()] == ["good-0", "good-1"]


def test_a_collection_of_another_embedding_model_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "other-model"
    EpisodicMemory(
        store=ChromaEpisodeStore(path=path), embeddings=DeterministicFakeEmbedding(size=16)
    ).record_many(corpus(3))
    code, out, err = run(capsys, "--path", str(path), "recall", QUERY)
    assert (code, out) == (2, "")
    assert_one_line_error(err, "dimension of 16", "use another --collection")


def test_conflicting_store_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--path", str(tmp_path), "--host", "localhost", "stats")
    assert code == 2
    assert_one_line_error(err, "--path", "--host/--port", "not both")


def test_unreachable_server_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, _, err = run(capsys, "--host", "127.0.0.1", "--port", str(port), "stats")
    assert code == 2
    assert_one_line_error(err, f"cannot reach the Chroma server at 127.0.0.1:{port}")


def test_help_version_and_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for name in ("stats", "recall", "skills", "curve", "export", "import", "exit codes"):
        assert name in out
    code, out, _ = run(capsys, "--version")
    assert (code, out.strip()) == (0, "langchain-episodic 0.2.0.dev0")
    code, out, err = run(capsys)
    assert code == 2
    assert out == ""
    assert "usage: langchain-episodic" in err
    code, _, err = run(capsys, "frobnicate")
    assert code == 2
    assert_one_line_error(err, "invalid choice: 'frobnicate'")


# ------------------------------------------------------------------ real processes


def test_real_processes_python_dash_m_and_console_script(
    store_path: Path, fresh_store: Path, tmp_path: Path
) -> None:
    script = Path(sys.executable).with_name("langchain-episodic")
    assert script.is_file(), f"console script missing: {script} (pip install -e .)"
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps(GOOD[0].to_dict()) + "\nnot json\n" + json.dumps(GOOD[1].to_dict()) + "\n",
        encoding="utf-8",
    )
    env = {**os.environ, "LANGCHAIN_EPISODIC_PATH": str(tmp_path / "unused")}
    commands = [
        [sys.executable, "-m", "langchain_episodic", "--path", str(store_path), "stats"],
        [str(script), "--path", str(fresh_store), "import", str(source)],
    ]
    # Started together: each spends seconds importing chromadb and langchain-core.
    processes = [
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env
        )
        for command in commands
    ]
    (module_out, module_err), (script_out, script_err) = (
        process.communicate(timeout=120) for process in processes
    )
    module_code, script_code = (process.returncode for process in processes)

    assert module_code == 0, module_err
    assert "episodes    12\n" in module_out
    assert "short-term  ep-7, ep-8, ep-9, ep-10, ep-11" in module_out

    assert script_code == 1  # one line rejected
    assert script_err == f"{source}:2: invalid JSON: Expecting value (column 1)\n"
    assert script_out.startswith("imported 2, already present 0, rejected 1 (of 3 lines")
    assert len(open_memory(fresh_store)) == 14
    assert not (tmp_path / "unused").exists()


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
