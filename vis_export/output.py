"""Writing exports: atomic files and file names made from session ids (rule R6)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Iterable

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_NAME = 120


def encode(text: str) -> bytes:
    """UTF-8 of any text: a lone surrogate (JSON can carry one, UTF-8 cannot)
    becomes U+FFFD rather than failing the whole export."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def write_atomic(path: Path, data: str | bytes | Iterable[str]) -> None:
    """Write ``data`` (or its pieces, as they come) to ``path`` so that readers see
    the old file or the new one, never a part: a temporary file beside it, then a
    rename."""
    pieces: Iterable[bytes] = (
        [encode(data)] if isinstance(data, str)
        else [data] if isinstance(data, bytes)
        else (encode(piece) for piece in data)
    )
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as stream:
            for piece in pieces:
                stream.write(piece)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def file_names(session_ids: list[str], extension: str) -> list[str]:
    """One safe, distinct file name per session id, in order: ``<id>.<ext>``."""
    names: list[str] = []
    taken: set[str] = set()
    for session_id in session_ids:
        stem = _UNSAFE.sub("_", session_id).strip("._")[:MAX_NAME] or "session"
        name, n = f"{stem}.{extension}", 1
        while name.lower() in taken:
            n += 1
            name = f"{stem}-{n}.{extension}"
        taken.add(name.lower())
        names.append(name)
    return names
