"""A tantivy index's files checked without tantivy: importing and opening it
was a fifth of a no-op rerun (a job that finds every file unchanged), which
writes nothing and only has to refuse a damaged index."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from vis_export.searchindex.guard import DamagedIndex

RAW_FIELDS = ("key", "session_id", "message_id", "block_id", "role", "block_type", "language")
FIELDS = (*RAW_FIELDS, "session_title", "text", "created_at", "words", "terms")  # the schema's, in its order
# The files tantivy writes for every segment (deletions, ``ID.OPSTAMP.del``, only once a document is deleted).
SEGMENT_FILES = ("idx", "pos", "fast", "fieldnorm", "term", "store")
# Every such file ends with a footer: its JSON (version and checksum), the JSON's length and this
# number, both little-endian u32: a file cut short, whatever is left of it, has lost it.
FOOTER_MAGIC = 1337
_FOOTER_MAX = 4096


def check_files(directory: Path) -> None:
    """What opening the index to read checks first: ``meta.json`` parses, names
    this schema's fields and each segment once, and every segment it lists has its
    files, each a file that ends with tantivy's footer (none empty, none cut short).
    The segments' contents are read only by a job that writes or a search."""
    meta = directory / "meta.json"
    try:
        data: Any = json.loads(meta.read_bytes())
    except FileNotFoundError:
        raise DamagedIndex(f"{meta} is missing") from None
    except (ValueError, RecursionError) as error:
        raise DamagedIndex(f"{meta} is not JSON ({error})") from None
    try:
        fields = tuple(field["name"] for field in data["schema"])
        segments = [(s["segment_id"].replace("-", ""), s["deletes"]) for s in data["segments"]]
        names = [
            f"{segment}.{extension}"
            for segment, deletes in segments
            for extension in (*SEGMENT_FILES, *([f"{deletes['opstamp']}.del"] if deletes else []))
        ]
    except (KeyError, TypeError, AttributeError) as error:
        raise DamagedIndex(f"{meta} is not a tantivy index's ({type(error).__name__}: {error})") from None
    if fields != FIELDS:
        raise DamagedIndex(f"{meta}: the fields {', '.join(map(str, fields))} are not this schema's")
    if len(set(names)) != len(names):
        raise DamagedIndex(f"{meta} lists a segment twice")
    for name in names:
        _check_footer(directory / name, meta)


def _check_footer(path: Path, meta: Path) -> None:
    """``path`` is a file whose last bytes are a footer as tantivy writes it (read, not its checksum)."""
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size == 0:
                raise DamagedIndex(f"{path} is empty")
            file.seek(max(0, size - _FOOTER_MAX - 8))
            tail = file.read()
    except FileNotFoundError:
        raise DamagedIndex(f"{path}, a file {meta} lists, is missing") from None
    except IsADirectoryError:
        raise DamagedIndex(f"{path}, a file {meta} lists, is a directory") from None
    # Any other OSError is the guard's to judge (a permission is the machine's, not damage).
    length, magic = struct.unpack("<II", tail[-8:]) if len(tail) >= 8 else (0, 0)
    footer = tail[-8 - length : -8] if magic == FOOTER_MAGIC and 0 < length <= len(tail) - 8 else b""
    try:
        whole = isinstance(json.loads(footer), dict)
    except ValueError:
        whole = False
    if not whole:
        raise DamagedIndex(f"{path} is cut short (no tantivy footer at its end)")
