"""The ``langchain-episodic`` command: inspect, query and move an episodic memory.

A thin shell over the public API. Every number it prints comes from the package's own
functions (``EpisodicMemory.recall``, ``temporal_decay``, ``compute_learning_curve``,
...), so the command line and the library never disagree.

Usage::

    langchain-episodic [--path PATH | --host HOST [--port PORT]]
                       [--collection NAME] [--namespace NS] COMMAND ...

    langchain-episodic stats
    langchain-episodic recall "Fix the login session bug" -k 3 --phase late
    langchain-episodic skills --threshold 0.6
    langchain-episodic curve --window 10 --plot curve.png
    langchain-episodic export episodes.jsonl
    langchain-episodic --path ./other-memory import episodes.jsonl
    langchain-episodic verify
    langchain-episodic lessons list --status all
    langchain-episodic lessons show lesson-0123abcd
    langchain-episodic lessons reflect --model my_models:reflector --limit 20
    langchain-episodic lessons quarantine lesson-0123abcd --reason "wrong advice"
    langchain-episodic lessons release lesson-0123abcd --reason "fixed upstream"

The store options may also follow the command (``langchain-episodic stats --path P``).
The memory lives in an embedded on-disk Chroma at ``--path`` (default: the
``LANGCHAIN_EPISODIC_PATH`` environment variable, else ``./episodic-memory``), or on a
Chroma server given by ``--host`` / ``--port``.

Exit codes:
    0: Success.
    1: ``import`` rejected some lines; every good line was still imported;
       ``verify`` found records that recall would skip.
    2: A usage error (bad arguments, missing file, invalid value, unknown namespace,
       unreachable server): one ``error: ...`` line on stderr, no traceback.
    130: Interrupted (Ctrl-C); batches already imported stay imported.
    141: Standard output was closed early (``export - | head``), as for SIGPIPE.

Adding a command takes a ``configure`` function (its arguments), a ``run`` function
(``argparse.Namespace -> exit code``) and one `Command` entry in ``COMMANDS``.
Building the parser runs every ``configure``, so a command module imports nothing heavy
(numpy, Chroma, LangChain, the memory) at its top: ``--help`` stays instant, and each
``run`` imports what it needs.
"""

from langchain_episodic.cli._shared import (
    CliError,
    format_duration,
    format_table,
    parse_duration,
    parse_time,
)
from langchain_episodic.cli.app import COMMANDS, Command, build_parser, main

__all__ = [
    "COMMANDS",
    "CliError",
    "Command",
    "build_parser",
    "format_duration",
    "format_table",
    "main",
    "parse_duration",
    "parse_time",
]
