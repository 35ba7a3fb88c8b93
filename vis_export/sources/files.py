"""One file (or stdin) to load results: format detection by content.

The extension is only a hint: a ``.json`` file holding JSON Lines, or a file
with no extension holding a session, is read for what it is.
"""

from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from vis_export.problems import Problem
from vis_export.sources.events import event_log, is_gateway_event
from vis_export.sources.lonis import lonis_blocks
from vis_export.sources.messages import message_array, message_lines, session_document, single_message
from vis_export.sources.result import LoadResult, failed
from vis_export.sources.store import is_store, read_store

LONIS_PREFIX = "lonis."


def read_file(path: Path, source: str, lenient: bool = False) -> list[LoadResult]:
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
            if is_store(head):
                handle.close()
                return read_store(path, source, lenient)
            data = head + handle.read()
    except OSError as error:
        return [failed(source, Problem("", f"cannot read: {error.strerror or error}"))]
    return read_bytes(data, source, path.stem or path.name, lenient)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Loading builds hundreds of thousands of acyclic objects; the cyclic garbage
    collector would walk them again and again for nothing (a third of load time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_bytes(data: bytes, source: str, default_id: str, lenient: bool = False) -> list[LoadResult]:
    with _collector_paused():
        return _read_text(data, source, default_id, lenient)


def _read_text(data: bytes, source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    if is_store(data[:16]):
        return [failed(source, Problem("", "a Vis store cannot be read from standard input; name the file"))]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return [failed(source, Problem(f"byte {error.start}", "not UTF-8 text"))]
    if not text or text.isspace():
        return [failed(source, Problem("", "empty file"))]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data" or _first_line_parses(text):
            return _json_lines(text, source, default_id, lenient)
        return [failed(source, Problem(f"line {error.lineno} column {error.colno}", f"not JSON: {error.msg}"))]
    return _document(value, source, default_id, lenient)


def _first_line_parses(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return False
    return True


def _document(value: Any, source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    if isinstance(value, dict):
        if _is_lonis(value):
            return [lonis_blocks([("", value)], source, default_id)]
        if "messages" in value:
            return [session_document(value, source, default_id, lenient)]
        if is_gateway_event(value):
            return event_log([(1, value)], source, default_id, lenient)
        return [single_message(value, source, default_id, lenient)]
    if isinstance(value, list):
        if any(_is_lonis(item) for item in value):
            return [lonis_blocks([(f"[{n}]", item) for n, item in enumerate(value)], source, default_id)]
        if value and all(is_gateway_event(item) for item in value):
            return event_log(list(enumerate(value, 1)), source, default_id, lenient)
        if value and all(isinstance(item, dict) and "messages" in item for item in value):
            # Several session objects, as `convert --to json` writes them to one stream.
            return [session_document(item, source, f"{default_id}_{n}", lenient) for n, item in enumerate(value, 1)]
        return [message_array(value, source, default_id, lenient)]
    return [failed(source, Problem("", "expected a message, an array of messages or a session object"))]


def _json_lines(text: str, source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    lines: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            lines.append((lineno, json.loads(line)))
        except json.JSONDecodeError as error:
            problems.append(Problem(f"line {lineno}", f"not JSON: {error.msg} (column {error.colno})"))
    if problems and not (lenient and lines):
        return [LoadResult(source, None, tuple(problems))]
    if any(_is_lonis(value) for _, value in lines):
        return [lonis_blocks([(f"line {n}", value) for n, value in lines], source, default_id)]
    if any(is_gateway_event(value) for _, value in lines):
        results = event_log(lines, source, default_id, lenient)
    else:
        results = [message_lines(lines, source, default_id, lenient)]
    # Lines left out as not JSON are warnings of the session(s) read from the rest.
    return [LoadResult(r.source, r.session, (*problems, *r.problems)) for r in results] if problems else results


def _is_lonis(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("schema_version", "")).startswith(LONIS_PREFIX)
