"""Rows read straight from the pages of a SQLite file, where SQL cannot reach them.

SQLite finds a row by walking its table's b-tree from the root. When an interior page
is garbled or lies past the end of a truncated file, every row below it is out of reach
of SQL, though the leaf pages that hold the rows may be intact. This module reads
those leaves directly (the file format: https://www.sqlite.org/fileformat2.html): every
table-leaf page that is not on the freelist, each cell's rowid and record, following
overflow chains. Pure: bytes in, rows out; nothing is written, nothing is trusted (a
cell that does not decode is skipped and counted).

A row read here says nothing of which table it belongs to: the caller tells tables
apart by the shape of their rows.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["HEADER_MAGIC", "PageRow", "PageScan", "page_size_of", "repaired_header", "scan_pages"]

HEADER_MAGIC = b"SQLite format 3\x00"
_TABLE_LEAF = 0x0D
_VALID_PAGE_SIZES = frozenset(2**n for n in range(9, 17))
_DEFAULT_PAGE_SIZE = 4096  # what Chroma's databases use
_MAX_PAYLOAD = 64 * 1024 * 1024  # a longer payload is garbage, not a row

Value = int | float | str | bytes | None


@dataclass(frozen=True)
class PageRow:
    """One row of a table-leaf page.

    Attributes:
        page: The page it was read from (1-based).
        rowid: Its rowid (an ``INTEGER PRIMARY KEY`` column is this, and ``None`` in
            ``values``).
        values: Its columns, in the table's order.
    """

    page: int
    rowid: int
    values: tuple[Value, ...]


@dataclass(frozen=True)
class PageScan:
    """What a scan read.

    Attributes:
        rows: Every row of every table-leaf page not on the freelist.
        bad_cells: Cells that did not decode (garbled bytes, a broken overflow chain).
    """

    rows: tuple[PageRow, ...]
    bad_cells: int


def page_size_of(data: bytes) -> int:
    """The page size the header states, or Chroma's 4096 when the header is garbled."""
    if len(data) < 100:
        return _DEFAULT_PAGE_SIZE
    (size,) = struct.unpack_from(">H", data, 16)
    size = 65536 if size == 1 else size
    return size if size in _VALID_PAGE_SIZES else _DEFAULT_PAGE_SIZE


def repaired_header(data: bytes) -> tuple[bytes, list[str], list[str]]:
    """``data`` with a header SQLite will open, what was repaired, and what is missing.

    The magic string and a garbled page size are restored (nothing is lost: the rest of
    the header and every page are as they were); the file is cut to whole pages, and
    the page count the header states is set to the pages the file holds (a truncated
    file states more, and SQLite then refuses every read): what was cut off is missing.
    Only the header is touched.
    """
    fixed = bytearray(data)
    repairs: list[str] = []
    missing: list[str] = []
    if len(fixed) < 100:
        return bytes(fixed), repairs, ["the file is shorter than its 100-byte header"]
    if fixed[:16] != HEADER_MAGIC:
        fixed[:16] = HEADER_MAGIC
        repairs.append("its header's magic string was damaged (restored in a copy)")
    size = page_size_of(bytes(fixed[:100]))
    (stated_size,) = struct.unpack_from(">H", fixed, 16)
    if (65536 if stated_size == 1 else stated_size) != size:
        struct.pack_into(">H", fixed, 16, size if size < 65536 else 1)
        repairs.append(f"its header's page size was damaged (taken as {size})")
    pages = len(fixed) // size
    if len(fixed) % size:
        del fixed[pages * size :]
        missing.append("it ends in a partial page")
    (stated,) = struct.unpack_from(">I", fixed, 28)
    if stated != pages:
        struct.pack_into(">I", fixed, 28, pages)
        if stated > pages:
            missing.append(f"it is truncated: {pages} of its {stated} pages are left")
    return bytes(fixed), repairs, missing


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at ``at`` and the offset after it."""
    value = 0
    for index in range(8):
        byte = data[at + index]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + index + 1
    return (value << 8) | data[at + 8], at + 9


def _free_pages(data: bytes, size: int, pages: int) -> set[int]:
    """The pages on the freelist (stale rows of deleted records live there)."""
    free: set[int] = set()
    trunk = struct.unpack_from(">I", data, 32)[0]
    while 0 < trunk <= pages and trunk not in free:
        free.add(trunk)
        base = (trunk - 1) * size
        following, count = struct.unpack_from(">II", data, base)
        count = min(count, (size - 8) // 4)
        free.update(struct.unpack_from(f">{count}I", data, base + 8))
        trunk = following
    return free


def _payload(data: bytes, size: int, usable: int, at: int, pages: int) -> tuple[int, bytes]:
    """The rowid and full payload of the table-leaf cell at ``at``."""
    length, at = _varint(data, at)
    rowid, at = _varint(data, at)
    if rowid >= 1 << 63:
        rowid -= 1 << 64
    if length > _MAX_PAYLOAD:
        raise ValueError("payload too long")
    most = usable - 35
    if length <= most:
        return rowid, data[at : at + length]
    least = (usable - 12) * 32 // 255 - 23
    local = least + (length - least) % (usable - 4)
    local = local if local <= most else least
    parts = [data[at : at + local]]
    remaining = length - local
    (page,) = struct.unpack_from(">I", data, at + local)
    seen: set[int] = set()
    while remaining > 0:
        if not 0 < page <= pages or page in seen:
            raise ValueError("broken overflow chain")
        seen.add(page)
        base = (page - 1) * size
        (following,) = struct.unpack_from(">I", data, base)
        chunk = data[base + 4 : base + 4 + min(remaining, usable - 4)]
        parts.append(chunk)
        remaining -= len(chunk)
        page = following
    return rowid, b"".join(parts)


def _record(payload: bytes) -> tuple[Value, ...]:
    """The column values of a record (SQLite's record format, UTF-8 text)."""
    header_size, at = _varint(payload, 0)
    if not 0 < header_size <= len(payload):
        raise ValueError("bad record header")
    types: list[int] = []
    while at < header_size:
        serial, at = _varint(payload, at)
        types.append(serial)
    values: list[Value] = []
    body = header_size
    for serial in types:
        if serial == 0:
            values.append(None)
        elif serial in (8, 9):
            values.append(serial - 8)
        elif 1 <= serial <= 6:
            width = (1, 2, 3, 4, 6, 8)[serial - 1]
            values.append(int.from_bytes(payload[body : body + width], "big", signed=True))
            body += width
        elif serial == 7:
            values.append(struct.unpack_from(">d", payload, body)[0])
            body += 8
        elif serial >= 12:
            width = (serial - 12) // 2
            raw = payload[body : body + width]
            if len(raw) != width:
                raise ValueError("record runs past its payload")
            values.append(raw.decode("utf-8") if serial % 2 else bytes(raw))
            body += width
        else:
            raise ValueError(f"reserved serial type {serial}")
    if body > len(payload):
        raise ValueError("record runs past its payload")
    return tuple(values)


def _leaf_rows(
    data: bytes, size: int, usable: int, page: int, pages: int
) -> Iterator[PageRow | None]:
    """The rows of ``page`` if it is a table leaf; ``None`` for each cell that is garbled."""
    base = (page - 1) * size
    header = base + (100 if page == 1 else 0)
    if data[header] != _TABLE_LEAF:
        return
    (cells,) = struct.unpack_from(">H", data, header + 3)
    if 8 + 2 * cells > size:
        return
    for index in range(cells):
        (offset,) = struct.unpack_from(">H", data, header + 8 + 2 * index)
        if not header + 8 + 2 * cells - base <= offset < usable:
            yield None
            continue
        try:
            rowid, payload = _payload(data, size, usable, base + offset, pages)
            yield PageRow(page, rowid, _record(payload))
        except (ValueError, IndexError, struct.error, UnicodeDecodeError):
            yield None


def scan_pages(data: bytes) -> PageScan:
    """Every row of every table-leaf page of the SQLite file ``data`` (see the module)."""
    size = page_size_of(data)
    pages = len(data) // size
    usable = size - (data[20] if len(data) > 20 else 0)
    try:
        free = _free_pages(data, size, pages)
    except struct.error:
        free = set()
    cells = [
        row
        for page in range(1, pages + 1)
        if page not in free
        for row in _leaf_rows(data, size, usable, page, pages)
    ]
    rows = tuple(row for row in cells if row is not None)
    return PageScan(rows, len(cells) - len(rows))
