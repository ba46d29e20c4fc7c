"""How well does the memory infer a task's category from its text?

On ``category_sets.py`` (100 clear software tasks, 20 per category, and 20 requests
that are not software work, all written apart from the packaged examples), for the
default static model and all-MiniLM-L6-v2: accuracy on the clear tasks (goal >= 90%),
how many of them were called ``unknown``, and how many off-topic requests got a
software category. ``memory.task(text)`` is what is measured; ``--neighbours`` tries
other vote sizes.

    python benchmarks/categories.py [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from category_sets import CLEAR, OFF_TOPIC

from langchain_episodic import EpisodicMemory, StaticEmbeddings
from langchain_episodic.stores import InMemoryEpisodeStore

DEFAULT_OUT = Path(__file__).parent / "results" / "categories.md"


def measure(memory: EpisodicMemory) -> tuple[float, float, float, list[str]]:
    right = unknown = 0
    wrong: list[str] = []
    for expected, texts in CLEAR.items():
        for text in texts:
            got = memory.task(text).category.value
            right += got == expected
            unknown += got == "unknown"
            if got != expected:
                wrong.append(f"{text!r}: {got} (expected {expected})")
    total = sum(len(texts) for texts in CLEAR.values())
    leaked = sum(memory.task(text).category.value != "unknown" for text in OFF_TOPIC)
    return right / total, unknown / total, leaked / len(OFF_TOPIC), wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-minilm", action="store_true")
    args = parser.parse_args(argv)
    models = [("StaticEmbeddings (default)", StaticEmbeddings())]
    if not args.no_minilm:
        from langchain_episodic.embeddings.minilm import minilm_embeddings

        models.append(("all-MiniLM-L6-v2", minilm_embeddings()))
    lines = [
        "# Category inference",
        "",
        "Produced by `python benchmarks/categories.py`: `memory.task(text)` on 100 clear "
        "software tasks (20 per category) and 20 requests that are not software work, "
        "written apart from the 125 packaged examples.",
        "",
        "| model | accuracy on clear tasks (goal >= 90%) | clear tasks called unknown | "
        "off-topic given a category |",
        "|---|---|---|---|",
    ]
    misses = []
    for name, embeddings in models:
        memory = EpisodicMemory(store=InMemoryEpisodeStore(), embeddings=embeddings)
        accuracy, unknown, leaked, wrong = measure(memory)
        lines.append(f"| {name} | {accuracy:.1%} | {unknown:.1%} | {leaked:.1%} |")
        misses += ["", f"Misses, {name}:", ""] + [f"- {w}" for w in wrong]
    text = "\n".join([*lines, *misses, ""])
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
