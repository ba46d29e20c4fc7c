"""``langchain-episodic import`` on fuzzed JSON Lines (GitHub issue 5).

Every bad line (random bytes, random text, truncated JSON, valid JSON that is no valid
episode) is reported with its line number, every good line is imported, the exit code
is 1 when any line was bad, and the store stays readable. ``test_cli`` covers a fixed
file of known mistakes; this throws arbitrary lines at the importer.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.cli import main
from langchain_episodic.errors import MalformedRecordWarning
from tests.unit_tests.factories import make_episode
from tests.unit_tests.fuzzing import DESCRIPTIONS, fuzz_settings, valid_episode_fields

_NAMESPACES = itertools.count()
# What another tool may put in a field: any JSON value, NaN and infinities included.
JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=10),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def lines(draw: st.DrawFn) -> list[tuple[str, bytes]]:
    """``(kind, raw line)``: kind is "good", "bad" or "blank"."""
    out: list[tuple[str, bytes]] = []
    for index in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["good", "bytes", "text", "truncated", "invalid"]))
        fields = draw(valid_episode_fields(text=DESCRIPTIONS))
        good = json.dumps(make_episode(**{**fields, "episode_id": f"good-{index}"}).to_dict())
        if kind == "good":
            raw = good.encode()
        elif kind == "bytes":
            raw = draw(st.binary(max_size=40).filter(lambda b: b"\n" not in b))
        elif kind == "text":
            raw = draw(st.text(max_size=40).filter(lambda t: "\n" not in t)).encode()
        elif kind == "truncated":
            raw = good[: draw(st.integers(1, len(good) - 1))].encode()
        else:
            data = json.loads(good)
            owner = draw(st.sampled_from(["", "task", "feedback"]))
            target = data[owner] if owner else data
            target[draw(st.sampled_from(sorted(target)))] = draw(JSON_VALUES)
            raw = json.dumps(data).encode()
        stripped = raw.rstrip(b"\r\n")
        if index == 0 and stripped.startswith(b"\xef\xbb\xbf"):
            stripped = stripped[3:]
        if not stripped.strip():
            out.append(("blank", raw))
        else:
            out.append(("good" if kind == "good" else kind, raw))
    return out


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-import") / "memory"


@given(lines())
@fuzz_settings(50)
def test_import_keeps_every_good_line_and_names_every_bad_one(
    store_path: Path, drawn: list[tuple[str, bytes]]
) -> None:
    # One namespace per example, in one on-disk store: each example starts empty.
    namespace = f"fuzz-{next(_NAMESPACES)}"
    source = store_path.parent / f"{namespace}.jsonl"
    source.write_bytes(b"\n".join(raw for _, raw in drawn) + b"\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--path", str(store_path), "--namespace", namespace, "import", str(source)])
    good = [number for number, (kind, _) in enumerate(drawn, 1) if kind == "good"]
    bad_kinds = {
        number: kind for number, (kind, _) in enumerate(drawn, 1) if kind not in ("good", "blank")
    }
    store = ChromaEpisodeStore(path=store_path)
    memory = EpisodicMemory(store=store, namespace=namespace)
    imported = {e.episode_id for e in memory.episodes()}
    # A mutation may leave a valid episode (e.g. a message replaced by another string).
    harmless = {
        n for n, kind in bad_kinds.items() if kind == "invalid" and f"good-{n - 1}" in imported
    }
    bad = sorted(set(bad_kinds) - harmless)
    assert code == (1 if bad else 0), (err.getvalue(), out.getvalue())
    numbers = [int(line.split(":")[1]) for line in err.getvalue().splitlines()]
    assert numbers == bad, err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert imported == {f"good-{n - 1}" for n in good} | {f"good-{n - 1}" for n in harmless}
    assert out.getvalue().startswith(
        f"imported {len(imported)}, already present 0, rejected {len(bad)}"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", MalformedRecordWarning)
        assert len(memory) == len(imported)
        assert store.verify(namespace) == []
        memory.recall("implement login", top_k=3)


def test_import_rejects_an_escaped_lone_surrogate_by_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # "\ud800" is valid JSON but no Unicode text: Chroma cannot store it.
    good = json.dumps(make_episode(episode_id="fine").to_dict())
    surrogate = json.dumps({**make_episode(episode_id="bad").to_dict(), "solution": "x\ud800y"})
    source = tmp_path / "in.jsonl"
    source.write_text(f"{good}\n{surrogate}\n", encoding="utf-8")
    code = main(["--path", str(tmp_path / "m"), "import", str(source)])
    out, err = capsys.readouterr()
    assert code == 1
    assert err.startswith(f"{source}:2: ")
    assert "solution" in err
    assert out.startswith("imported 1, already present 0, rejected 1")
