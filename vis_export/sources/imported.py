"""Recognising other tools' transcripts by content (``docs/sources.md``, "Other
agents' transcripts"), for the file reader: Claude Code sessions, Codex CLI
rollouts and provider message logs, each read by its own module.

These files are often read while their tool still writes them, so a last line
cut short (no newline after it) is a warning and the session is read up to the
last whole line; any other line that is not JSON is a located problem, as in
every JSON Lines source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vis_export.problems import NOTE, Problem
from vis_export.sources.claude_code import claude_code, is_claude_code
from vis_export.sources.codex import codex, is_codex
from vis_export.sources.provider_logs import is_conversation, is_provider_log, provider_log
from vis_export.sources.result import LoadResult

Reader = Callable[[list[tuple[int, Any]], str, str, bool], list[LoadResult]]


def _reader(values: list[Any]) -> Reader | None:
    if is_claude_code(values):
        return claude_code
    if is_codex(values):
        return codex
    if is_provider_log(values):
        return _provider_lines
    return None


def _provider_lines(lines: list[tuple[int, Any]], source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    return provider_log([value for _, value in lines], source, default_id, lenient)


def foreign_document(value: Any, source: str, default_id: str, lenient: bool) -> list[LoadResult] | None:
    """A whole JSON document of another tool (a one-line transcript, a provider log), else ``None``."""
    if isinstance(value, dict) and isinstance(value.get("loglines"), list) and is_claude_code(value["loglines"]):
        # Claude Code on the web exports a session as {"loglines": [entries]}.
        return claude_code(list(enumerate(value["loglines"], 1)), source, default_id, lenient)
    values = value if isinstance(value, list) else [value]
    if isinstance(value, dict) and "messages" in value and not is_conversation(value):
        return None
    reader = _reader(values) if values else None
    return reader(list(enumerate(values, 1)), source, default_id, lenient) if reader else None


def foreign_lines(
    lines: list[tuple[int, Any]], problems: list[Problem], text: str, source: str, default_id: str, lenient: bool
) -> list[LoadResult] | None:
    """The sessions of another tool's JSON Lines file, else ``None``; ``problems`` are its lines that are not JSON."""
    reader = _reader([value for _, value in lines])
    if reader is None:
        return None
    warnings: list[Problem] = []
    cut_short = problems and not text.endswith("\n")  # counting the lines is for a file that ends so
    if cut_short and problems[-1].location == "line {}".format(text.count("\n") + 1):
        cut = problems.pop()
        warnings.append(
            Problem(cut.location, "incomplete last line (still being written?); read up to the line before", NOTE)
        )
    if problems and not lenient:
        return [LoadResult(source, None, tuple(problems))]
    results = reader(lines, source, default_id, lenient)
    return [LoadResult(r.source, r.session, (*problems, *warnings, *r.problems)) for r in results]
