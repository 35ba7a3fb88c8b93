"""One file (or stdin) to load results: format detection by content.

The extension is only a hint: a ``.json`` file holding JSON Lines, or a file
with no extension holding a session, is read for what it is.

Only regular files are read (after following links), and none larger than
``MAX_FILE_BYTES``: a FIFO, a device such as ``/dev/zero`` or a socket would
block or never end, so each is a one-line problem instead. The file is opened
with ``O_NONBLOCK`` so that ``open`` itself cannot wait for a FIFO's writer.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from codecs import BOM_UTF8
from pathlib import Path
from typing import Any, BinaryIO

from vis_export.collector import paused
from vis_export.contract.duplicates import recording
from vis_export.problems import Problem
from vis_export.sources.events import event_log, is_gateway_event
from vis_export.sources.imported import foreign_document, foreign_lines
from vis_export.sources.jsontext import (
    MAX_TEXT_BYTES,
    UNSURE,
    TooManyContainers,
    holds_infinity,
    parse,
    parse_lines,
    read_quick,
)
from vis_export.sources.lonis_blocks import lonis_blocks
from vis_export.sources.messages import message_array, message_lines, session_document, single_message
from vis_export.sources.result import LoadResult, failed
from vis_export.sources.store import is_store, read_store
from vis_export.sources.trusted import NotCertain

LONIS_PREFIX = "lonis."
_LINE = re.compile(r"line (\d+)")
# The most a file (or stdin) may hold: sessions are read into memory whole, at
# up to about 18 bytes of memory per byte (``jsontext``): 0.94 GB.
MAX_FILE_BYTES = MAX_TEXT_BYTES
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


NOT_FOUND = "no such file or directory"  # one line however the file is reached
# What leads to no file: a broken link, a loop of links, a file gone since it
# was found, a folder on its path replaced by a file. ``Path.exists`` is false
# for each, so a source named on the command line gets ``NOT_FOUND`` for them
# without opening it; one found by walking a folder must get the same line.
_NO_FILE = (errno.ENOENT, errno.ELOOP, errno.ENOTDIR)


class _Unreadable(Exception):
    """Why a file is not read: the one-line message of its problem."""


def read_file(path: Path, source: str, lenient: bool = False) -> list[LoadResult]:
    try:
        with _open_regular(path) as handle:
            head = handle.read(16)
            if is_store(head):
                handle.close()
                return read_store(path, source, lenient)
            data = _bounded(head + handle.read(MAX_FILE_BYTES + 1 - len(head)))
    except OSError as error:
        if error.errno in _NO_FILE:
            return [failed(source, Problem("", NOT_FOUND))]
        return [failed(source, Problem("", f"cannot read: {error.strerror or error}"))]
    except _Unreadable as error:
        return [failed(source, Problem("", str(error)))]
    return read_bytes(data, source, name_as_id(path.stem or path.name), lenient)


def name_as_id(name: str) -> str:
    """A file's name as the id of a session that names none: a name of bytes
    that are not UTF-8 holds lone surrogates as Python reads it, which no
    output, index or database can hold; each such byte is written ``\\xHH``,
    so two names stay two ids."""
    if name.isascii():
        return name
    return _SURROGATE.sub(_escaped, name)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def read_stream(stream: BinaryIO, source: str, default_id: str, lenient: bool = False) -> list[LoadResult]:
    """Standard input, up to the same limit (``-`` may well be ``/dev/zero``)."""
    try:
        data = _bounded(stream.read(MAX_FILE_BYTES + 1))
    except _Unreadable as error:
        return [failed(source, Problem("", str(error)))]
    return read_bytes(data, source, default_id, lenient)


def starts_like_store(path: Path) -> bool:
    """Whether ``path`` is a regular file that begins like a SQLite database."""
    try:
        with _open_regular(path) as handle:
            return is_store(handle.read(16))
    except (OSError, _Unreadable):
        return False


def _open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file of at most ``MAX_FILE_BYTES``
    (a SQLite store, which is read page by page, may be larger), checked on the
    open descriptor, so a file swapped in after the check is not read."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(descriptor)
        if not stat.S_ISREG(mode.st_mode):
            kind = next((name for test, name in _KINDS if test(mode.st_mode)), "a special file")
            raise _Unreadable(f"not a regular file ({kind}); only regular files are read")
        if mode.st_size > MAX_FILE_BYTES and not is_store(os.pread(descriptor, 16, 0)):
            raise _Unreadable(_too_large())
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def _bounded(data: bytes) -> bytes:
    if len(data) > MAX_FILE_BYTES:
        raise _Unreadable(_too_large())
    return data


def _too_large() -> str:
    exact = MAX_FILE_BYTES % 2**20 == 0
    limit = f"{MAX_FILE_BYTES // 2**20} MiB" if exact else f"{MAX_FILE_BYTES} byte"
    return f"larger than the {limit} limit of a file read whole (it keeps memory under 1 GB)"


def read_bytes(data: bytes, source: str, default_id: str, lenient: bool = False) -> list[LoadResult]:
    try:
        with paused(), recording():
            return _read_text(data, source, default_id, lenient)
    except MemoryError:  # within the limits this needs a machine short of 1 GB: still one line
        return [failed(source, Problem("", "not enough memory to read it"))]


def _read_text(data: bytes, source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    if is_store(data[:16]):
        return [failed(source, Problem("", "a Vis store cannot be read from standard input; name the file"))]
    # Read quickly first, from the bytes: most files are valid sessions, which
    # never need their text (``text`` below is made for the exact reading only).
    quick = read_quick(data[len(BOM_UTF8) :] if data.startswith(BOM_UTF8) else data)
    if quick.value is not UNSURE:
        try:
            results = _document(quick.value, source, default_id, lenient, trusted=True)
        except NotCertain:  # the value may be partly frozen: read exactly, from the start
            pass
        else:
            if not any(result.problems for result in results):
                return results
        # Problems are located by the exact reading, from the start.
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return [failed(source, Problem(f"byte {error.start}", "not UTF-8 text"))]
    if not text or text.isspace():
        return [failed(source, Problem("", "empty file"))]
    try:
        value = parse(text, counted=quick.counted)
    except TooManyContainers as error:  # for the whole text: JSON Lines may not pass it line by line
        return [failed(source, Problem(f"line {error.lineno} column {error.colno}", error.msg))]
    except json.JSONDecodeError as error:
        if error.msg == "Extra data" or _first_line_parses(text):
            return _json_lines(text, source, default_id, lenient)
        return [failed(source, Problem(f"line {error.lineno} column {error.colno}", f"not JSON: {error.msg}"))]
    return _document(value, source, default_id, lenient)


def _first_line_parses(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        parse(first)
    except json.JSONDecodeError:
        return False
    return True


def _document(value: Any, source: str, default_id: str, lenient: bool, trusted: bool = False) -> list[LoadResult]:
    """The sessions of one JSON document; ``trusted``: the quick reading's value,
    whose Vis sessions are built in one pass (``sources.trusted``), and which any
    other reader takes only once it holds no infinity (``jsontext.read_quick``)."""
    foreign = foreign_document(value, source, default_id, lenient)
    if foreign is not None:
        return _finite(foreign, value, trusted)
    if isinstance(value, dict):
        if _is_lonis(value):
            return _finite([lonis_blocks([("", value)], source, default_id)], value, trusted)
        if "messages" in value:
            return [session_document(value, source, default_id, lenient, owned=True, trusted=trusted)]
        if is_gateway_event(value):
            return _finite(event_log([(1, value)], source, default_id, lenient), value, trusted)
        return [single_message(value, source, default_id, lenient, owned=True, trusted=trusted)]
    if isinstance(value, list):
        if any(_is_lonis(item) for item in value):
            lonis = lonis_blocks([(f"[{n}]", item) for n, item in enumerate(value)], source, default_id)
            return _finite([lonis], value, trusted)
        if value and all(is_gateway_event(item) for item in value):
            return _finite(event_log(list(enumerate(value, 1)), source, default_id, lenient), value, trusted)
        if value and all(isinstance(item, dict) and "messages" in item for item in value):
            # Several session objects, as `convert --to json` writes them to one stream.
            return [
                session_document(item, source, f"{default_id}_{n}", lenient, owned=True, trusted=trusted)
                for n, item in enumerate(value, 1)
            ]
        return [message_array(value, source, default_id, lenient, owned=True, trusted=trusted)]
    return [failed(source, Problem("", "expected a message, an array of messages or a session object"))]


def _finite(results: list[LoadResult], value: Any, trusted: bool) -> list[LoadResult]:
    """``results``, read by a reader that does not pass over every number, unless
    the quick reading's ``value`` held an infinity: then the text is read exactly."""
    if trusted and holds_infinity(value):
        raise NotCertain
    return results


def _json_lines(text: str, source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    lines: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    for lineno, value in parse_lines(text):
        if isinstance(value, json.JSONDecodeError):
            problems.append(Problem(f"line {lineno}", f"not JSON: {value.msg} (column {value.colno})"))
        else:
            lines.append((lineno, value))
    if not lines:
        return [LoadResult(source, None, tuple(problems))]
    foreign = foreign_lines(lines, problems, text, source, default_id, lenient)
    if foreign is not None:
        return foreign
    if any(_is_lonis(value) for _, value in lines):
        results = [lonis_blocks([(f"line {n}", value) for n, value in lines], source, default_id)]
    elif any(is_gateway_event(value) for _, value in lines):
        results = event_log(lines, source, default_id, lenient)
    else:
        results = [message_lines(lines, source, default_id, lenient, owned=True)]
    if not problems:
        return results
    if not lenient:  # refused: every bad line is reported, those that parse but break the contract too
        found = (*problems, *(problem for r in results for problem in r.problems))
        return [LoadResult(source, None, tuple(sorted(found, key=_line_of)))]
    # Lines left out as not JSON are warnings of the session(s) read from the rest.
    return [LoadResult(r.source, r.session, (*problems, *r.problems)) for r in results]


def _line_of(problem: Problem) -> int:
    """The line a problem is on (``line 12...``), for reporting in file order."""
    match = _LINE.match(problem.location)
    return int(match.group(1)) if match else 0


def _is_lonis(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("schema_version", "")).startswith(LONIS_PREFIX)
