"""A real Chroma server (``chroma run``) for tests: started here, or the one CI started.

``.ci/run`` starts one server for the whole run and exports its address as
``LANGCHAIN_EPISODIC_CHROMA_SERVER=host:port``; without it, the test session starts its
own on a free loopback port. Tests that restart a server start private ones.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import chromadb
from chromadb.api import ClientAPI

SERVER_ENV = "LANGCHAIN_EPISODIC_CHROMA_SERVER"


def chroma_executable() -> str:
    found = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    assert Path(found).exists(), "the chroma CLI ships with the chromadb package"
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_heartbeat(
    host: str, port: int, process: subprocess.Popen[bytes] | None = None, timeout: float = 60
) -> ClientAPI:
    """A client of the server at ``host:port`` once it answers its heartbeat."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client = chromadb.HttpClient(host=host, port=port)
            client.heartbeat()
            return client
        except Exception:
            if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
                raise
            time.sleep(0.25)


@contextmanager
def chroma_server(path: Path, port: int | None = None) -> Iterator[ClientAPI]:
    """Start ``chroma run`` over ``path`` on a free loopback port; yield a client; stop it."""
    port = port or free_port()
    path.mkdir(parents=True, exist_ok=True)
    log = (path.parent / f"chroma-{port}.log").open("w")
    process = subprocess.Popen(
        [
            chroma_executable(),
            "run",
            "--path",
            str(path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        yield wait_for_heartbeat("127.0.0.1", port, process)
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def server_address_from_env() -> tuple[str, int] | None:
    """The CI server's ``(host, port)``, when ``.ci/run`` started one."""
    value = os.environ.get(SERVER_ENV)
    if not value:
        return None
    host, _, port = value.rpartition(":")
    return host or "127.0.0.1", int(port)
