"""Reading an embedded Chroma folder's ``chroma.sqlite3`` directly, as a test checks it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def database_rows(folder: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """Every row ``sql`` selects from ``folder``'s database (closed again after)."""
    connection = sqlite3.connect(folder / "chroma.sqlite3")
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()
