"""Lonis blocks: closed-schema validation with locations, content hashes equal
to the golden ones, replay verdicts, and every kind rendered in every format."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT
from htmldom import parse, text_content
from hypothesis import given, strategies as st
from strategies import json_values

from vis_export import load
from vis_export.cli import main
from vis_export.contract.lonis_check import check_lonis_block, content_hash, replay_verdict
from vis_export.formats.html import to_html
from vis_export.formats.markdown import to_markdown
from vis_export.formats.markdown_syntax import escape_one_line
from vis_export.formats.text import to_text
from vis_export.lonis_parsed import Field, parsed
from vis_export.model import LonisBlock, UnknownBlock

HASHES = json.loads((Path(__file__).parent / "lonis_hashes.json").read_text())
BLOCKS = [json.loads(line) for line in (INPUT / "lonis.jsonl").read_text().splitlines()]
SESSION = next(load(INPUT / "lonis.jsonl"))


def test_every_golden_hash_is_reproduced() -> None:
    for block in BLOCKS:
        kind = block["payload"]["kind"]
        assert content_hash(block["payload"]) == HASHES[kind if kind in HASHES else "extension"]
        assert check_lonis_block(block) == []
    assert len(BLOCKS) == len(HASHES) == 15


def test_hash_canonical_form() -> None:
    a = {"kind": "x", "data": {"b": 1.0, "a": [-0.0, 2.5, "é"]}}
    b = {"data": {"a": [0, 2.5, "é"], "b": 1}, "kind": "x"}
    assert content_hash(a) == content_hash(b)
    assert content_hash({"kind": "x", "data": {"n": 2.0**60}}) != content_hash({"kind": "x", "data": {"n": 2**60}})


def test_validate_reports_hashes_and_verdicts() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["validate", "--json", str(INPUT / "lonis.jsonl")])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert sorted(b["content_hash"] for b in report["blocks"]) == sorted(HASHES.values())
    assert all(b["replay"] == {"status": "undeclared"} for b in report["blocks"])


def with_replay(replay: dict[str, Any], **provenance: Any) -> dict[str, Any]:
    block = copy.deepcopy(BLOCKS[11])  # the plan
    block["provenance"] = {"replay": replay, **provenance}
    return block


def test_replay_verdicts() -> None:
    digest = content_hash(BLOCKS[11]["payload"])
    ok = replay_verdict(
        with_replay(
            {"replayable": True, "required_hashes": ["input_hash", "content_hash", "plan_hash"]},
            input_hash="abc",
            plan_hash="cafe",
        )
    )
    assert ok.status == "replayable" and str(ok) == "replayable"
    no = replay_verdict(with_replay({"replayable": False, "reasons": ["uses the network"]}))
    assert (no.status, str(no)) == ("not_replayable", "not replayable: uses the network")
    bad = replay_verdict(
        with_replay(
            {"replayable": True, "required_hashes": ["input_hash", "plan_hash", f"content_hash={'0' * 64}"]},
            plan_hash="beef",
        )
    )
    assert (bad.status, bad.missing, bad.mismatched) == ("failed", ("input_hash",), ("plan_hash", "content_hash"))
    assert str(bad) == "replay failed: missing input_hash; mismatched plan_hash, content_hash"
    assert (
        replay_verdict(with_replay({"replayable": True, "required_hashes": [f"content_hash={digest}"]})).status
        == "replayable"
    )


@pytest.mark.parametrize(
    ("change", "location"),
    [
        (lambda b: b.update(extra=1), ""),
        (lambda b: b["attribution"].update(mood="x"), "attribution"),
        (lambda b: b["attribution"]["provenance"].update(city="x"), "attribution.provenance"),
        (lambda b: b.update(bounds={"max_items": 1, "max_pages": 2}), "bounds"),
        (lambda b: b["payload"].update(meta=1), "payload"),
        (lambda b: b["payload"]["data"].update(mood="x"), "payload.data"),
        (lambda b: b.update(schema_version="lonis.block/v2"), "schema_version"),
        (
            lambda b: b["payload"].update(kind="message", data={"text": "an extension using a seed kind name"}),
            "payload.data",
        ),
        (lambda b: b["payload"]["data"].update(confidence=1.5), "payload.data.confidence"),
        (lambda b: b.update(bounds={"max_items": -1}), "bounds.max_items"),
        (lambda b: b["payload"]["data"].pop("text"), "payload.data"),
    ],
)
def test_invalid_blocks_are_located(change: Any, location: str, tmp_path: Path) -> None:
    block = copy.deepcopy(BLOCKS[1])  # the answer
    change(block)
    problems = check_lonis_block(block)
    assert problems and any(p.location == location for p in problems), problems
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(BLOCKS[0]) + "\n" + json.dumps(block) + "\n")
    from vis_export.sources import read

    (result,) = read(path)
    assert result.session is None
    assert all(p.location.startswith("line 2") for p in result.problems)


def test_unknown_kind_is_an_extension_carried_losslessly() -> None:
    block = copy.deepcopy(BLOCKS[7])
    assert block["payload"]["kind"] == "karpal.search"
    shown = parsed(block)
    assert shown.category == "extension"
    assert shown.summary == 'extension[karpal.search]: {"query":"Functor","results":["karpal-proof"]}'
    (lonis,) = [b for _, b in SESSION.blocks() if b.fields["envelope"]["payload"]["kind"] == "karpal.search"]
    assert json.loads(json.dumps(lonis.to_json()["envelope"])) == block


ONE_LINERS = {
    "action": "action: invoke Pending",
    "answer": "answer: yes",
    "assumption": "assumption: the catalog is current (Open)",
    "plan": "plan: 1 step(s)",
    "result": "result: 1 assumption(s) validated",
    "outcome": "outcome[Blocked]: policy forbids",
    "capability": "capability: lonis:builtin:echo — echo input",
}


def test_every_kind_in_every_format_from_the_same_value() -> None:
    text, markdown, html = to_text(SESSION), to_markdown(SESSION), to_html(SESSION)
    dom_text = text_content(parse(html))
    pdf_text = ""
    from pypdf import PdfReader

    from vis_export.formats.pdf import to_pdf

    for page in PdfReader(io.BytesIO(to_pdf(SESSION))).pages:
        pdf_text += page.extract_text().replace("\x00", "")
    for _, block in SESSION.blocks():
        assert isinstance(block, LonisBlock)
        shown = parsed(block.envelope)
        assert shown.summary in text and shown.summary in dom_text
        assert escape_one_line(shown.summary) in markdown
        for field in shown.fields:
            assert field.name in text and field.name in dom_text
    for kind, line in ONE_LINERS.items():
        assert line in text, kind
    assert '1. dependency: {"package":"amari-holographic","version":"0.24.1"}' in text  # plan steps
    assert "[probe] nim-sum probe" in text  # result evidence
    assert "exit_code: 4" in text  # outcome exit code
    assert "lonis.echo/input/v1" in dom_text and "policy forbids" in " ".join(pdf_text.split())
    assert "by lonis:test:golden" in text  # attribution as a header


def test_a_vis_block_typed_lonis_without_an_envelope_is_just_unknown() -> None:
    from vis_export.model import UnknownBlock, block_from_json

    for fields in (
        {"id": "x", "type": "lonis"},
        {"id": "x", "type": "lonis", "envelope": 5},
        {"id": "x", "type": "lonis", "envelope": {"payload": []}},
    ):
        block = block_from_json(fields)
        assert isinstance(block, UnknownBlock)
        assert "unsupported block: lonis" in to_text(block)


@given(
    st.dictionaries(st.sampled_from(["attribution", "bounds", "warnings", "provenance", "payload"]), json_values),
    st.text(min_size=1, max_size=12),
    json_values,
)
def test_any_envelope_carried_in_vis_json_renders(envelope: dict[str, Any], kind: str, data: Any) -> None:
    """A valid envelope renders as Lonis; any other as inert data: never a crash."""
    from vis_export.model import block_from_json

    envelope["payload"] = {"kind": kind, "data": data}
    block = block_from_json({"id": "x", "type": "lonis", "envelope": envelope})
    assert isinstance(block, LonisBlock) == (not check_lonis_block(envelope))
    for render in (to_text, to_markdown, to_html):
        assert render(block) is not None


def test_a_broken_envelope_in_a_vis_session_is_inert_data() -> None:
    from vis_export.model import block_from_json

    plan = json.loads((INPUT / "lonis.jsonl").read_text().splitlines()[11])
    assert plan["payload"]["kind"] == "plan"
    plan["payload"]["data"]["steps"] = 5  # a number where the schema wants a list
    block = block_from_json({"id": "x", "type": "lonis", "envelope": plan})
    assert isinstance(block, UnknownBlock) and "unsupported block: lonis" in to_text(block)
    assert to_html(block) and to_markdown(block)


def test_a_problem_quoting_a_huge_value_stays_a_short_line() -> None:
    block = copy.deepcopy(BLOCKS[1])
    block["payload"]["data"]["question"] = [1] * 50_000
    (problem,) = check_lonis_block(block)
    assert problem.location == "payload.data.question" and len(problem.message) <= 301


@pytest.mark.parametrize(
    ("field", "in_text", "in_markdown", "on_a_terminal"),
    [
        (Field("f", "json", "{}"), True, True, True),
        (Field("f", "code", "pub struct Proven<T>"), False, True, True),  # text has no monospace to set it in
        (Field("f", "code", "a\nb"), True, True, True),
        (Field("f", "text", "a\nb"), True, False, True),  # Markdown keeps the lines as hard breaks
        (Field("f", "text", "a"), False, False, False),
        (Field("f", "list", ["a\nb"]), False, False, False),
    ],
)
def test_the_formats_set_a_field_apart_by_one_rule(
    field: Field, in_text: bool, in_markdown: bool, on_a_terminal: bool
) -> None:
    """A field stands apart, verbatim under its name, by what the medium can show: the rule is the field's, the
    formats only say what they are (text and Markdown as ``to_text``/``to_markdown`` ask, the terminal as ``show``)."""
    mediums = [(False, False), (True, True), (True, False)]
    assert [field.apart(*medium) for medium in mediums] == [in_text, in_markdown, on_a_terminal]
