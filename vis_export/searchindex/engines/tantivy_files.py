"""A tantivy index's files checked without tantivy: importing and opening it
was a fifth of a no-op rerun (a job that finds every file unchanged), which
writes nothing and only has to refuse a damaged index."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vis_export.searchindex.guard import DamagedIndex

RAW_FIELDS = ("key", "session_id", "message_id", "block_id", "role", "block_type", "language")
FIELDS = (*RAW_FIELDS, "session_title", "text", "created_at", "words", "terms")  # the schema's, in its order
# The files tantivy writes for every segment (deletions, ``ID.OPSTAMP.del``, only once a document is deleted).
SEGMENT_FILES = ("idx", "pos", "fast", "fieldnorm", "term", "store")


def check_files(directory: Path) -> None:
    """What opening the index to read checks first: ``meta.json`` parses, names
    this schema's fields, and every segment it lists has its files, none empty.
    The segments' contents are read only by a job that writes or a search."""
    meta = directory / "meta.json"
    try:
        data: Any = json.loads(meta.read_bytes())
    except FileNotFoundError:
        raise DamagedIndex(f"{meta} is missing") from None
    except ValueError as error:
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
    for name in names:
        try:
            empty = os.stat(directory / name).st_size == 0
        except OSError:
            raise DamagedIndex(f"{directory / name}, a file {meta} lists, is missing") from None
        if empty:
            raise DamagedIndex(f"{directory / name} is empty")
