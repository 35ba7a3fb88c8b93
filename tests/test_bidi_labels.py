"""A short string from the data shown beside the formats' own words (a title, an
author, a model, a tool's or an attachment's name) cannot reorder those words: its
bidirectional controls are written as ``\\uXXXX`` in every format
(``strings.data_label``), and HTML isolates it in a ``<bdi>``."""

from __future__ import annotations

import json
from typing import Any

from htmldom import elements, parse, text_content
from sessions import message_of, session_of

from vis_export.formats.html import to_html
from vis_export.formats.markdown import to_markdown
from vis_export.formats.pdf_typst import TypstProjector
from vis_export.formats.text import to_text
from vis_export.model import Session
from vis_export.strings import data_label

# An isolate's end first (it would close a <bdi> early), then a right-to-left override:
# unescaped, "failed" after it reads "deliaf".
EVIL = "\u2069\u202eevil"
SHOWN = "\\u2069\\u202eevil"
CONTROLS = ("\u2069", "\u202e")


def labelled(name: str, unknown: bool = False) -> Session:
    """A session whose every label holds ``name``, each beside a word of the format's own
    (with ``unknown``, an unknown block's type too, which Markdown's JSON of the block,
    code, keeps as written; an error's code is a snake_case identifier)."""
    tool: dict[str, Any] = {"type": "tool", "tool": name, "status": "failed"}
    attachment = {"type": "attachment", "attachment_id": "a", "name": name, "media_type": "text/plain"}
    blocks = [tool, attachment, {"type": name, "field": 1}] if unknown else [tool, attachment]
    first = message_of(*blocks, model=name, author={"display_name": name}, status="failed")
    second = message_of({"type": "prose", "markdown": "ok"}, id="m2", model="plain")
    return session_of({"id": "s", "title": name, "messages": [first, second]})


def test_a_label_is_one_line_with_its_controls_escaped() -> None:
    assert data_label(f" a\n{EVIL}\t\x1b[2J\u200f ") == "a \\u2069\\u202eevil \\u001b[2J\\u200f"


def test_no_label_carries_a_control_into_any_format() -> None:
    """Text, Markdown and PDF have no isolation a reader's viewer keeps: the controls
    are shown as escapes, once for each label (title, author, model, tool, attachment)."""
    session = labelled(EVIL)
    unknown = TypstProjector().document(labelled(EVIL, unknown=True))["messages"][0]["blocks"][2]
    assert unknown["type"] == SHOWN  # PDF's heading of an unknown block
    printed = json.dumps(TypstProjector().document(session), ensure_ascii=False)  # what Typst lays out
    for written in (to_html(session), to_markdown(session), to_text(session), printed):
        assert not any(control in written for control in CONTROLS)
    assert SHOWN in to_markdown(session) and SHOWN in to_text(session)


def test_every_label_in_html_is_inside_a_bdi() -> None:
    """The body shows the name eight times (title, the models in the session line, the
    author in the contents and in the heading, model, the tool's name, the attachment's,
    the unknown block's type), each in a <bdi> of its own."""
    dom = parse(to_html(labelled("NAME", unknown=True)))
    (body,) = elements(dom, "body")
    isolated = [text_content(bdi) for bdi in elements(body, "bdi")]
    assert sorted(isolated) == ["NAME"] * 8 + ["plain"] * 2
    assert text_content(body).count("NAME") == 8


def test_the_status_after_a_name_stays_in_reading_order() -> None:
    """The words of the format after a label stay outside its <bdi>: the status badge
    of the message whose author holds an override."""
    dom = parse(to_html(labelled(EVIL)))
    (heading, _) = elements(dom, "h2")
    spans = [text_content(e) for e in heading if e.tag.endswith("span") or e.tag.endswith("bdi")]
    assert spans == [f"Assistant ({SHOWN})", "failed", SHOWN]
