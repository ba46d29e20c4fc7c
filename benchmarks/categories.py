"""How well does the memory infer a task's category from its text?

On the two sets of ``category_sets.py`` (each 100 clear software tasks, 20 per
category, and 20-odd requests that are not software work, all written apart from the
packaged examples; the second, ``fresh``, written later in other domains and phrasings
as a check of generalisation), for the default static model and all-MiniLM-L6-v2:
accuracy on the clear tasks (goal >= 90%), how many of them were called ``unknown``, and
how many off-topic requests got a software category. ``memory.task(text)`` is what is
measured.

    python benchmarks/categories.py [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from category_sets import CLEAR, FRESH_CLEAR, FRESH_OFF_TOPIC, OFF_TOPIC

from langchain_episodic import EpisodicMemory, StaticEmbeddings
from langchain_episodic.embeddings.categories import default_category_examples
from langchain_episodic.stores import InMemoryEpisodeStore

DEFAULT_OUT = Path(__file__).parent / "results" / "categories.md"


SETS = {"first": (CLEAR, OFF_TOPIC), "fresh": (FRESH_CLEAR, FRESH_OFF_TOPIC)}

BEFORE = (
    "| model | set | accuracy on clear tasks | clear tasks called unknown | "
    "off-topic given a category |",
    "|---|---|---|---|---|",
    "| StaticEmbeddings (default) | first | 88.0% | 5.0% | 5.0% |",
    "| StaticEmbeddings (default) | fresh | 87.0% | 3.0% | 0.0% |",
    "| all-MiniLM-L6-v2 | first | 94.0% | 2.0% | 0.0% |",
    "| all-MiniLM-L6-v2 | fresh | 90.0% | 2.0% | 0.0% |",
)


def measure(
    memory: EpisodicMemory, clear: dict[str, tuple[str, ...]], off_topic: tuple[str, ...]
) -> tuple[float, float, float, list[str]]:
    right = unknown = 0
    wrong: list[str] = []
    for expected, texts in clear.items():
        for text in texts:
            got = memory.task(text).category.value
            right += got == expected
            unknown += got == "unknown"
            if got != expected:
                wrong.append(f"{text!r}: {got} (expected {expected})")
    total = sum(len(texts) for texts in clear.values())
    leaked = sum(memory.task(text).category.value != "unknown" for text in off_topic)
    return right / total, unknown / total, leaked / len(off_topic), wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-minilm", action="store_true")
    parser.add_argument(
        "--set", choices=sorted(SETS), action="append", help="only these sets (default: both)"
    )
    args = parser.parse_args(argv)
    models = [("StaticEmbeddings (default)", StaticEmbeddings())]
    if not args.no_minilm:
        from langchain_episodic.embeddings.minilm import minilm_embeddings

        models.append(("all-MiniLM-L6-v2", minilm_embeddings()))
    names = args.set or list(SETS)
    lines = [
        "# Category inference",
        "",
        "Produced by `python benchmarks/categories.py`: `memory.task(text)` on two sets of "
        "100 clear software tasks (20 per category) and 20-odd requests that are not "
        "software work, written apart from the "
        f"{len(default_category_examples())} packaged examples (`first`: the set the "
        "method was developed against; `fresh`: written later, in other domains and "
        "phrasings, as a check of generalisation).",
        "",
        "| model | set | accuracy on clear tasks (goal >= 90%) | clear tasks called unknown | "
        "off-topic given a category |",
        "|---|---|---|---|---|",
    ]
    notes = [
        "",
        "Before the category probe (the vote of the nearest of the 125 examples packaged "
        "then; this script run against commit abdb1b9's package):",
        "",
        *BEFORE,
        "",
        "The fresh set was written before the method or the examples changed, without "
        "reading the packaged examples; none of the 175 examples added since rewords a "
        "task of either set. Common software work still meets itself: a few fresh tasks "
        "are close to examples packaged before (a deadlock between two database "
        "transactions, a memory leak in a websocket server, a plugin system for an "
        "editor), and several fresh everyday requests share a theme with the first set or "
        "the packaged background (a lasagne recipe, the capital of Australia), so its "
        "off-topic rate is the easier of the two.",
    ]
    misses = []
    for name, embeddings in models:
        memory = EpisodicMemory(store=InMemoryEpisodeStore(), embeddings=embeddings)
        for set_name in names:
            accuracy, unknown, leaked, wrong = measure(memory, *SETS[set_name])
            lines.append(f"| {name} | {set_name} | {accuracy:.1%} | {unknown:.1%} | {leaked:.1%} |")
            misses += ["", f"Misses, {name}, {set_name} set:", ""] + [f"- {w}" for w in wrong]
    text = "\n".join([*lines, *notes, *misses, ""])
    print(text)
    if args.out and args.out.name:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
