"""A private copy of an embedded Chroma folder, for reading a folder no one may write.

Chroma writes to ``chroma.sqlite3`` as it opens a folder (measured with chromadb 1.5:
"attempt to write a readonly database" on a read-only mount, whatever its
``migrations`` setting), and it offers no read-only mode. So a folder this process
cannot write is copied to a temporary folder, and Chroma opens the copy: reading then
needs no write to the folder. The cost is one copy of the folder per process that opens
it (its database and vector index files; about 50 MB for 10,000 episodes) and the time
to make it; what is written to the copy is never seen, which is why every write to a
store opened this way is refused.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator

from langchain_episodic.errors import StoreConfigurationError

__all__ = ["make_readable_copy", "readable_copy", "remove_copy"]

# Our own files: the lock is never copied (the copy is private), nor the record of checks.
_NOT_COPIED = (".langchain-episodic.lock", ".langchain-episodic-checked")


def make_readable_copy(folder: str) -> str:
    """Copy the Chroma files of ``folder`` into a new temporary folder; its path.

    Raises:
        StoreConfigurationError: A file cannot be read or the copy cannot be written,
            naming the file and the cause.
    """
    copy = tempfile.mkdtemp(prefix="langchain-episodic-read-only-")
    try:
        shutil.copytree(
            folder,
            copy,
            ignore=shutil.ignore_patterns(*_NOT_COPIED),
            copy_function=shutil.copyfile,  # the copy's files must be writable by Chroma
            dirs_exist_ok=True,
        )
    except (OSError, shutil.Error) as error:
        remove_copy(copy)
        msg = (
            f"path={folder!r} is read-only and could not be copied to read it "
            f"({_cause(error)}): Chroma cannot open a folder it may not write"
        )
        raise StoreConfigurationError(msg) from error
    return copy


def remove_copy(copy: str) -> None:
    """Remove a copy made by `make_readable_copy` (best effort)."""
    shutil.rmtree(copy, ignore_errors=True)


@contextlib.contextmanager
def readable_copy(folder: str) -> Iterator[str]:
    """A copy of ``folder`` for the ``with`` block, removed afterwards."""
    copy = make_readable_copy(folder)
    try:
        yield copy
    finally:
        remove_copy(copy)


def _cause(error: BaseException) -> str:
    if isinstance(error, OSError):
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror or type(error).__name__}{where}"
    details = error.args[0] if error.args else None
    if isinstance(details, list) and details:  # shutil.Error: (source, target, why) each
        source, _, why = details[0]
        return f"{why}: {source}"
    return str(error)
