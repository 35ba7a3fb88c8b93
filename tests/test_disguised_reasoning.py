"""R2 against disguises: reasoning that is mis-cased, mislabelled or salvaged stays private.

Each case is a whole session through the real command line, in every format
and the search index, strict and ``--lenient`` alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st
from sessions import session_of
from strategies import PRIVATE_CANARY, json_values

from vis_export.cli import main
from vis_export.formats import FORMATS

SECRET = f"{PRIVATE_CANARY} the plan nobody may read"
# Keys real providers and agents keep reasoning under (R2 names these).
REASONING_KEYS = (
    "thinking",
    "redacted_thinking",
    "reasoning_details",
    "reasoning_content",
    "thinking_content",
    "private_reasoning",
    "hidden_reasoning",
    "thoughts",
)

# (block, valid to the strict contract?)
DISGUISES: list[tuple[dict[str, Any], bool]] = [
    ({"type": "Reasoning", "text": SECRET}, True),
    ({"type": "REASONING", "text": SECRET, "visibility": "visible"}, True),
    ({"type": "thinking", "text": SECRET}, True),
    ({"type": "summary", "text": SECRET, "visibility": "private"}, True),
    ({"type": "reasoning", "text": SECRET, "visibility": "Private"}, False),
    ({"type": "reasoning", "text": SECRET, "visibility": "hidden"}, False),
    ({"type": "reasoning", "text": SECRET, "visibility": None}, False),
    ({"type": "reasoning", "text": SECRET, "visibility": "Visible"}, False),
    ({"type": "reasoning", "text": [SECRET]}, False),
    ({"type": "wrapper", "items": [{"inner": {"type": "reasoning", "text": SECRET}}]}, True),
    ({"type": 7, "text": SECRET}, False),
    ({"text": SECRET}, False),
    ({"thinking": SECRET}, False),
    ({"type": None, "reasoning_content": SECRET}, False),
    ({"type": "ｒｅａｓｏｎｉｎｇ", "text": SECRET}, True),  # fullwidth
    ({"type": "r\u0435asoning", "text": SECRET}, True),  # a Cyrillic е
    ({"type": "th\u0456nking", "text": SECRET}, True),  # a Cyrillic і
    ({"type": "reasoning", "text": {SECRET: 1}}, False),  # not even a problem's location may quote it
    ({"type": "reasoning", "text": "x", "visibility": SECRET}, False),
    # reasoning held inside a known block: a sub-agent's transcript in a tool's output
    (
        {
            "type": "tool",
            "tool": "agent",
            "status": "completed",
            "output": [{"type": "reasoning", "visibility": "private", "text": SECRET}, {"answer": "42"}],
        },
        True,
    ),
    ({"type": "tool", "tool": "agent", "status": "completed", "output": {"reasoning_content": SECRET}}, True),
    # a Lonis envelope carried as a block, of a reasoning kind
    (
        {
            "type": "lonis",
            "envelope": {"schema_version": "lonis.block/v1", "payload": {"kind": "thinking", "data": {"text": SECRET}}},
        },
        True,
    ),
    (
        {
            "type": "lonis",
            "envelope": {
                "schema_version": "lonis.block/v1",
                "payload": {"kind": "note", "data": {"text": SECRET, "visibility": "private"}},
            },
        },
        True,
    ),
    (
        {
            "type": "lonis",
            "envelope": {
                "schema_version": "lonis.block/v1",
                "payload": {"kind": "note", "data": {"text": "fine", "hidden_reasoning": SECRET}},
            },
        },
        True,
    ),
    # reasoning a block marked visible carries: it shows its own text, never that
    ({"type": "reasoning", "visibility": "visible", "text": "shown", "thinking": SECRET}, True),
    (
        {
            "type": "reasoning",
            "visibility": "visible",
            "text": "shown",
            "details": [{"type": "thinking", "thinking": SECRET, "signature": "x"}],
        },
        True,
    ),
    (
        {
            "type": "reasoning",
            "visibility": "visible",
            "text": "shown",
            "nested": {"type": "reasoning", "visibility": "private", "text": SECRET},
        },
        True,
    ),
    # a field named content is a block's own data: searched like any other
    ({"type": "tool", "tool": "x", "status": "completed", "content": [{"type": "thinking", "thinking": SECRET}]}, True),
    ({"type": "reasoning", "visibility": "visible", "text": "shown", "content": {"thinking": SECRET}}, True),
    # keys providers and agents use, wherever they stand
    *(
        ({"type": "tool", "tool": "agent", "status": "completed", "output": {key: SECRET, "answer": "42"}}, True)
        for key in REASONING_KEYS
    ),
    *(({"type": "note_v2", "body": {"deep": [{key: SECRET}]}}, True) for key in REASONING_KEYS),
    # a true reasoning flag makes a map reasoning, text and all
    (
        {"type": "tool", "tool": "x", "status": "completed", "output": {"parts": [{"text": SECRET, "thought": True}]}},
        True,
    ),
    ({"type": "prose", "markdown": SECRET, "thought": True}, True),
    ({"type": "gemini_part", "text": SECRET, "thought": True}, True),
    # look-alike types: Armenian o, small capitals, digits for letters
    ({"type": "reas\u0585ning", "text": SECRET}, True),
    ({"type": "\u0280\u1d07\u1d00\ua731\u1d0f\u0274\u026a\u0274\u0262", "text": SECRET}, True),
    ({"type": "reas0ning", "text": SECRET}, True),
    ({"type": "th1nking", "text": SECRET}, True),
]


def _session(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "s",
        "title": "t",
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "status": "completed",
                "created_at": 1,
                "content": [{"id": "p1", "type": "prose", "markdown": "question"}],
            },
            {
                "id": "m2",
                "role": "assistant",
                "status": "completed",
                "created_at": 2,
                "content": [{"id": "b1", **block}, {"id": "p2", "type": "prose", "markdown": "the answer"}],
            },
        ],
    }


def _leaks(path: Path) -> bool:
    data = path.read_bytes()
    if PRIVATE_CANARY.encode() in data:
        return True
    if path.suffix == ".pdf":
        from pypdf import PdfReader

        return any(PRIVATE_CANARY in (page.extract_text() or "") for page in PdfReader(path).pages)
    return False


def _shows_none(tmp_path: Path, block: dict[str, Any], strict_valid: bool, formats: list[str]) -> None:
    """Converts a session holding ``block`` to each of ``formats`` at both reasoning levels, strict and lenient,
    and asserts the private text is in none of them."""
    source = tmp_path / "in" / "chat.json"
    source.parent.mkdir()
    source.write_text(json.dumps(_session(block)))
    runner = CliRunner()
    for lenient in [False, True] if strict_valid else [True]:
        flags = ["--lenient"] if lenient else []
        for name in formats:
            for reasoning in ("none", "visible"):
                out = tmp_path / f"out-{name}-{reasoning}-{lenient}"
                result = runner.invoke(
                    main, ["convert", str(source), "--to", name, "--reasoning", reasoning, "-o", str(out), *flags]
                )
                assert result.exit_code == 0, result.output
                assert not _leaks(out), (name, reasoning, lenient)
                assert PRIVATE_CANARY not in result.output
        if "pdf" in formats:
            continue
        index = tmp_path / f"index-{lenient}"
        result = runner.invoke(main, ["index", str(source), "--index", str(index), "--reasoning", "visible", *flags])
        assert result.exit_code == 0, result.output
        assert not any(PRIVATE_CANARY.encode() in f.read_bytes() for f in index.rglob("*") if f.is_file())
        hits = runner.invoke(main, ["search", "plan", "--index", str(index), "--json"])
        assert PRIVATE_CANARY not in hits.output and json.loads(hits.stdout) == []


def _ids(value: Any) -> str:
    return json.dumps(value) if isinstance(value, dict) else ""


@pytest.mark.parametrize("block,strict_valid", DISGUISES, ids=_ids)
def test_no_format_but_pdf_and_no_index_shows_disguised_reasoning(
    tmp_path: Path, block: dict[str, Any], strict_valid: bool
) -> None:
    _shows_none(tmp_path, block, strict_valid, [name for name in FORMATS if name != "pdf"])


# A PDF is rendered from the view every format gets, at ten times the cost of all the others: a plain pytest
# renders one disguise of each kind (mis-cased, lenient only, in a tool's output, Lonis, carried by visible
# reasoning, deep in an unknown block, a thought flag); CI and --slow render every one.
_PDF_QUICK = (0, 4, 19, 21, 24, 37, 46)


@pytest.mark.parametrize(
    "block,strict_valid",
    [
        pytest.param(*case, marks=() if number in _PDF_QUICK else pytest.mark.slow)
        for number, case in enumerate(DISGUISES)
    ],
    ids=_ids,
)
def test_no_pdf_shows_disguised_reasoning(tmp_path: Path, block: dict[str, Any], strict_valid: bool) -> None:
    _shows_none(tmp_path, block, strict_valid, ["pdf"])


ENVELOPES: list[tuple[str, dict[str, Any]]] = [
    ("message", {"reasoning_content": SECRET}),
    ("message", {"extra": {"type": "reasoning", "text": SECRET}}),
    ("message", {"author": {"name": "agent", "thinking": SECRET}}),
    ("session", {"notes": [{"type": "thinking", "text": SECRET}]}),
]


@pytest.mark.parametrize("where,fields", ENVELOPES, ids=lambda v: json.dumps(v) if isinstance(v, dict) else v)
def test_reasoning_in_message_and_session_fields_is_not_shown(
    tmp_path: Path, where: str, fields: dict[str, Any]
) -> None:
    document = _session({"type": "prose", "markdown": "fine"})
    (document if where == "session" else document["messages"][1]).update(fields)
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    for name in FORMATS:
        out = tmp_path / f"out-{name}"
        result = CliRunner().invoke(main, ["convert", str(source), "--to", name, "--reasoning", "none", "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert not _leaks(out), name
    shown = CliRunner().invoke(main, ["convert", str(source), "--to", "json", "--reasoning", "all"])
    assert PRIVATE_CANARY in shown.stdout  # authorised: kept as stored


@st.composite
def _reasoning_held_somewhere(draw: st.DrawFn) -> dict[str, Any]:
    """A tool block whose input or output holds private reasoning at a generated place."""
    secret = draw(
        st.sampled_from(
            [
                {"type": "reasoning", "text": SECRET},
                {"type": "Thinking", "content": SECRET},
                {"kind": "thought", "data": SECRET},
                {"note": SECRET, "visibility": "private"},
                {"reasoning_content": SECRET},
            ]
        )
    )
    value: Any = secret
    for wrap in draw(st.lists(st.sampled_from(["list", "map"]), max_size=4)):
        value = [draw(json_values), value] if wrap == "list" else {"step": value, "other": draw(json_values)}
    return {
        "id": "t",
        "type": "tool",
        "tool": "agent",
        "status": "completed",
        draw(st.sampled_from(["input", "output"])): value,
    }


@given(_reasoning_held_somewhere(), st.sampled_from(["none", "visible"]))
def test_reasoning_held_anywhere_in_a_tool_never_shows(block: dict[str, Any], reasoning: str) -> None:
    from vis_export.formats.json import to_json
    from vis_export.formats.markdown import to_markdown
    from vis_export.formats.provider import to_provider
    from vis_export.formats.text import to_text

    session = session_of(_session(block))
    for render in (to_text, to_markdown, to_json):
        assert PRIVATE_CANARY not in render(session, reasoning=reasoning)
    assert PRIVATE_CANARY not in json.dumps(to_provider(session, reasoning=reasoning))
    assert PRIVATE_CANARY in to_json(session, reasoning="all")  # authorised: kept as stored


def test_visible_reasoning_shows_its_own_text_and_nothing_private_it_carries() -> None:
    from vis_export.formats.json import to_json

    carried = [{"type": "thinking", "thinking": SECRET}, {"text": SECRET, "thought": True}, {"note": "kept"}]
    block = {"type": "reasoning", "visibility": "visible", "text": "shown", "thinking": SECRET, "details": carried}
    session = session_of(_session(block))
    shown = json.loads(to_json(session, reasoning="visible"))["messages"][1]["content"][0]
    assert shown["text"] == "shown" and shown["details"][2] == {"note": "kept"}
    assert PRIVATE_CANARY not in json.dumps(shown)
    assert PRIVATE_CANARY in to_json(session, reasoning="all")  # authorised: kept as stored
