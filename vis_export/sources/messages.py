"""Canonical JSON documents (a message, an array of messages, a session object)
and JSON Lines of messages, checked and turned into sessions."""

from __future__ import annotations

from typing import Any

from vis_export.contract import check_message, check_session
from vis_export.model import Session, message_from_json, session_from_json
from vis_export.problems import Problem
from vis_export.sources.result import LoadResult, failed


def session_document(value: dict[str, Any], source: str, default_id: str) -> LoadResult:
    problems: list[Problem] = []
    check_session(value, (), problems)
    if problems:
        return LoadResult(source, None, tuple(problems))
    return LoadResult(source, session_from_json(value, default_id, source))


def single_message(value: dict[str, Any], source: str, default_id: str) -> LoadResult:
    problems: list[Problem] = []
    check_message(value, (), problems)
    if problems:
        return LoadResult(source, None, tuple(problems))
    return _session_of([value], source, default_id)


def message_array(values: list[Any], source: str, default_id: str) -> LoadResult:
    """An array of messages; problems are located as ``messages[3]...``, as in a session."""
    problems: list[Problem] = []
    for index, value in enumerate(values):
        check_message(value, ("messages", index), problems)
    if problems:
        return LoadResult(source, None, tuple(problems))
    return _session_of(values, source, default_id)


def message_lines(lines: list[tuple[int, Any]], source: str, default_id: str) -> LoadResult:
    """JSON Lines of messages: problems are located as ``line N, content[2]...``."""
    problems: list[Problem] = []
    for lineno, value in lines:
        found: list[Problem] = []
        check_message(value, (), found)
        problems.extend(p.at(f"line {lineno}") for p in found)
    if problems:
        return LoadResult(source, None, tuple(problems))
    return _session_of([value for _, value in lines], source, default_id)


def _session_of(values: list[dict[str, Any]], source: str, default_id: str) -> LoadResult:
    if not values:
        return failed(source, Problem("", "no messages"))
    messages = tuple(message_from_json(value) for value in values)
    return LoadResult(source, Session(id=default_id, messages=messages, source=source))
