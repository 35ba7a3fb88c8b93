"""Canonical JSON documents (a message, an array of messages, a session object)
and JSON Lines of messages, checked and turned into sessions.

``owned``: the caller just parsed the values and will not use them again, so
the model may take their maps as they are (``model.adopt``) instead of copying.
``trusted``: the values are the quick reading's, built in one pass
(``sources.trusted``), which raises ``NotCertain`` for any it cannot vouch for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vis_export.contract import check_message, check_session
from vis_export.contract.reasoning_words import SAYING_KEYS, is_reasoning_map, names_reasoning
from vis_export.model import EMPTY, Session, freeze, message_from_json, session_from_json
from vis_export.problems import Problem
from vis_export.sources.result import LoadResult, failed
from vis_export.sources.salvage import salvage_messages, time_or_none
from vis_export.sources.trusted import trusted_messages, trusted_session


def session_document(
    value: dict[str, Any],
    source: str,
    default_id: str,
    lenient: bool = False,
    owned: bool = False,
    trusted: bool = False,
) -> LoadResult:
    if trusted:
        return LoadResult(source, trusted_session(value, default_id, source))
    problems: list[Problem] = []
    check_session(value, (), problems)
    if not problems:
        return LoadResult(source, session_from_json(value, default_id, source, owned))
    if not lenient:
        return LoadResult(source, None, tuple(problems))
    messages: list[Any] = value["messages"] if isinstance(value.get("messages"), list) else []
    session_id: str = value["id"] if isinstance(value.get("id"), str) and value["id"].strip() else default_id
    title = value.get("title") if isinstance(value.get("title"), str) else None
    created = time_or_none(value.get("created_at"))
    session = Session(
        id=session_id,
        messages=salvage_messages(messages),
        title=title,
        created_at=created,
        metadata=_reasoning_marks(value),
        source=source,
    )
    return LoadResult(source, session, tuple(problems))


def _reasoning_marks(session: dict[str, Any]) -> Mapping[str, Any]:
    """The fields that make a salvaged session reasoning (R2), as stored: its other fields are
    dropped, but not the judgement that the policy hides all of it (the reading that hides more wins)."""
    if not is_reasoning_map(session):
        return EMPTY
    marks = {key: item for key, item in session.items() if key in SAYING_KEYS or names_reasoning(key)}
    return freeze(marks)  # type: ignore[no-any-return]


def single_message(
    value: dict[str, Any],
    source: str,
    default_id: str,
    lenient: bool = False,
    owned: bool = False,
    trusted: bool = False,
) -> LoadResult:
    if trusted:
        return LoadResult(source, Session(id=default_id, messages=trusted_messages([value], 0), source=source))
    problems: list[Problem] = []
    check_message(value, (), problems)
    return _session_of([value], problems, source, default_id, lenient, owned)


def message_array(
    values: list[Any], source: str, default_id: str, lenient: bool = False, owned: bool = False, trusted: bool = False
) -> LoadResult:
    """An array of messages; problems are located as ``messages[3]...``, as in a session."""
    if trusted and values:
        return LoadResult(source, Session(id=default_id, messages=trusted_messages(values, 2), source=source))
    problems: list[Problem] = []
    for index, value in enumerate(values):
        check_message(value, ("messages", index), problems)
    return _session_of(values, problems, source, default_id, lenient, owned)


def message_lines(
    lines: list[tuple[int, Any]], source: str, default_id: str, lenient: bool = False, owned: bool = False
) -> LoadResult:
    """JSON Lines of messages: problems are located as ``line N, content[2]...``."""
    problems: list[Problem] = []
    for lineno, value in lines:
        found: list[Problem] = []
        check_message(value, (), found)
        problems.extend(p.at(f"line {lineno}") for p in found)
    return _session_of([value for _, value in lines], problems, source, default_id, lenient, owned)


def _session_of(
    values: list[Any], problems: list[Problem], source: str, default_id: str, lenient: bool, owned: bool
) -> LoadResult:
    if not values:
        return failed(source, Problem("", "no messages"))
    if not problems:
        messages = tuple([message_from_json(value, owned) for value in values])
    elif lenient:
        messages = salvage_messages(values)
    else:
        return LoadResult(source, None, tuple(problems))
    return LoadResult(source, Session(id=default_id, messages=messages, source=source), tuple(problems))
