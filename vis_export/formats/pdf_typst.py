"""PDF through Typst (``--to pdf --pdf-engine typst``): the same document as the
WeasyPrint engine, typeset by the Typst compiler in one process, several times faster.

The session reaches Typst only as data: ``TypstProjector`` builds a JSON tree
(prose as nodes, code as runs of text, see ``typst_tree``) that the package's
template ``templates/typst/session.typ`` reads with ``json()`` and draws with
its own functions, so no string of the session is ever Typst markup or code.
Typst reads from a private temporary folder that holds only the template,
that JSON and the checked images (its root: it cannot read outside it), takes
fonts from the system, and is given empty package folders; the template
imports no package, so nothing is fetched. The bytes are deterministic: the
document's date is the session's (or none), the compiler's clock is pinned to
it, and nothing in the PDF names the temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from vis_export.attachments import Attachments, human_size
from vis_export.formats.facts import SessionFacts
from vis_export.formats.highlight import TOKEN_STYLES, inline_style
from vis_export.formats.lexing import HighlightBudget
from vis_export.formats.options import ExportOptions
from vis_export.formats.pdf_pages import MAX_WORKERS, cores, join, split
from vis_export.formats.projector import TRUNCATED_NOTE, Projector, ToolPart, json_text, status_note, tool_duration
from vis_export.formats.tool_lines import LEFT_OUT_NOTE, paper_part
from vis_export.formats.typst_tree import Images, Node, ProseTree, code
from vis_export.lonis_parsed import parsed as parsed_lonis
from vis_export.model import (
    AttachmentBlock,
    Block,
    CodeBlock,
    ErrorBlock,
    LonisBlock,
    Message,
    NoticeBlock,
    ProseBlock,
    ReasoningBlock,
    Session,
    SpeechBlock,
    ToolBlock,
)
from vis_export.policy import visible_session
from vis_export.resources import builtin_templates
from vis_export.strings import data_label, shortened, surrogates_replaced
from vis_export.timefmt import utc

# The page, in points: the template lays out with these, and code is wrapped
# to the columns they leave.
PAGES = {"A4": ("a4", 595.28), "Letter": ("us-letter", 612.0)}  # Typst's paper, its width
LAYOUT = {
    "margin_x": 39.7,  # 14 mm, as the print stylesheet
    "margin_top": 51.0,  # 18 mm
    "margin_bottom": 45.4,  # 16 mm
    "code_size": 8.5,
    "code_inset": 6.0,
    "frame_inset": 7.0,
    "list": 14.0,
    "quote": 12.0,
}
MONO_ADVANCE = 0.6021  # DejaVu Sans Mono's advance, in em: every character of code but the wide ones
MIN_COLUMNS = 16
# The running title's columns: one line of 8 pt text within either paper's margins
# (wider, it wrapped, and the header's one line showed the title's last).
RUNNING_TITLE_COLUMNS = 100
# Typst holds a document's whole layout until it is written: about 0.2 KB a
# character of message text (the benchmark's 240 pages: 570,000 characters,
# 220 MB), and keeps it for the life of its process. Longer sessions are laid
# out in parts of this much, each in a process of its own.
PART_SIZE = 1_000_000
# Typst holds every image of a document decoded until it is written (about 3
# bytes a pixel: twelve 25-megapixel images took 1.1 GB), so a document's
# images are bounded in pixels too: 100 megapixels peak near 0.5 GB.
MAX_DOCUMENT_PIXELS = 100_000_000
# The images' checks read their headers only: when Typst cannot decode one, the
# document is made again with a placeholder for each image instead.
UNDECODABLE = "Typst could not decode an image of this document"


def token_styles() -> dict[str, dict[str, str]]:
    """The highlighter's classes as Typst text settings: colour, slant, weight."""
    styles = {}
    for css in TOKEN_STYLES:
        declared = dict(part.split(":", 1) for part in inline_style(css).split(";"))
        styles[css] = {
            "fill": declared.get("color", "#1f2328"),
            "style": declared.get("font-style", "normal"),
            "weight": declared.get("font-weight", "regular").replace("normal", "regular"),
        }
    return styles


class TypstProjector(Projector):
    """The session as the template's data: one method per block type, as every format."""

    def __init__(self, options: ExportOptions | None = None, image_refusal: str | None = None):
        """``image_refusal``: why no image is shown, when Typst could not decode one."""
        super().__init__(options)
        self.marked = self.options.redaction is not None  # markers drawn as inserted, not as data
        self.images = Images(image_refusal, self.marked)
        self.attachments = Attachments.of(None, self.options.attachments)
        self.indent = 0.0  # points the block being projected is indented by its frames
        self.highlighting = HighlightBudget()
        self._prose: ProseTree | None = None

    def output_part(self, part: ToolPart) -> ToolPart:
        return paper_part(part, self.options.tool_output_limit)

    def columns(self, indent: float) -> int:
        """Columns of code that fit in a code box at ``indent``."""
        width = PAGES[self.options.paper][1] - 2 * LAYOUT["margin_x"] - indent - 2 * LAYOUT["code_inset"] - 2
        return max(MIN_COLUMNS, int(width / (MONO_ADVANCE * LAYOUT["code_size"])))

    def code(self, text: str, language: str | None, extra: float = 0.0) -> Node:
        columns = self.columns(self.indent + extra)
        return code(text, language, columns, None if self.options.no_highlight else self.highlighting, self.marked)

    def prose(self, markdown: str, extra: float = 0.0) -> list[Node]:
        assert self._prose is not None
        return self._prose(markdown, self.indent + extra)

    def document(self, session: Session, part: Part | None = None) -> dict[str, Any]:
        """The template's whole input, of the session as the reasoning policy shows
        it (R2), or of one ``part`` of it. Each call has its own image and highlighting
        budgets, as an HTML document."""
        session = visible_session(session, self.options.reasoning, self.options.redaction)
        facts = part.facts if part is not None else SessionFacts.of(session)
        self.attachments = Attachments.of(session, self.options.attachments, pixels=MAX_DOCUMENT_PIXELS)
        self.highlighting = HighlightBudget()
        whole = part.whole if part is not None else session  # prose in one part may show another's attachment
        attached = [b for _, b in whole.blocks() if isinstance(b, AttachmentBlock)]
        self._prose = ProseTree(
            self.attachments.lookup(attached),
            self.attachments.budget,
            self.images,
            self.columns,
            LAYOUT,
            None if self.options.no_highlight else self.highlighting,
            self.marked,
        )
        created = facts.created
        moment = datetime.fromtimestamp(created / 1000, tz=UTC) if created is not None else None
        return {
            "title": facts.title,
            "running_title": shortened(facts.title, RUNNING_TITLE_COLUMNS),
            "id": session.id,
            "subject": f"Vis session {session.id}",
            "created": utc(created) if created is not None else None,
            "date": list(moment.timetuple()[:6]) if moment is not None else None,
            "models": list(facts.models),
            "continuation": part is not None and part.number > 0,  # only the running title, then messages
            "numbered": part is None,  # a part's pages are numbered once joined
            "redacted": self.marked,  # the template draws markers in any string as inserted
            "paper": PAGES[self.options.paper][0],
            "layout": LAYOUT,
            "tokens": token_styles(),
            "messages": [self.message_node(m) for m in session.messages],
        }

    def message_node(self, message: Message) -> Node:
        return {
            "role": message.role,
            "label": self.header_parts(message, data_label)[0],  # role, and author
            "note": status_note(message),
            "model": data_label(message.model) if message.model else None,
            "time": utc(message.created_at),
            "blocks": [self.block(b) for b in self.blocks(message)],
        }

    def _framed(self, build: Any) -> Any:
        """``build()`` with code and prose inside a frame's inset."""
        self.indent += 2 * LAYOUT["frame_inset"] + 2
        try:
            return build()
        finally:
            self.indent -= 2 * LAYOUT["frame_inset"] + 2

    # --- one method per block type ----------------------------------------------------

    def block_prose(self, block: ProseBlock) -> Node:
        return {"t": "prose", "c": self.prose(block.markdown)}

    def block_code(self, block: CodeBlock) -> Node:
        return {"t": "codeblock", "language": block.language, "code": self.code(block.text, block.language)}

    def block_tool(self, block: ToolBlock) -> Node:
        def parts() -> list[Node]:
            return [
                {
                    "label": part.label,
                    "code": self.code(part.text, part.language),
                    "truncated": TRUNCATED_NOTE.format(part.cut) if part.cut else None,
                    "left_out": LEFT_OUT_NOTE.format(part.left_out) if part.left_out else None,
                    "tail": self.code(part.tail, part.language) if part.left_out else None,
                }
                for part in self.tool_parts(block)
            ]

        return {
            "t": "tool",
            "name": data_label(block.tool),
            "status": block.status,
            "duration": tool_duration(block),
            "parts": self._framed(parts),
        }

    def block_reasoning(self, block: ReasoningBlock) -> Node:
        label = "Private reasoning" if block.is_private else "Reasoning"
        return {"t": "reasoning", "label": label, "c": self._framed(lambda: self.prose(block.text))}

    def block_error(self, block: ErrorBlock) -> Node:
        return {"t": "error", "code": block.code, "message": block.message, "retryable": bool(block.retryable)}

    def block_notice(self, block: NoticeBlock) -> Node:
        return {"t": "notice", "code": block.code, "message": block.message}

    def block_speech(self, block: SpeechBlock) -> Node:
        return {"t": "speech", "text": block.text}

    def block_attachment(self, block: AttachmentBlock) -> Node:
        image = self.attachments.image(block.attachment_id, block.media_type)
        return {
            "t": "attachment",
            "name": data_label(block.name),
            "media_type": block.media_type,
            "size": human_size(self.attachments.size(block.attachment_id)),
            "image": self.images.node(image, block.name) if image else None,
        }

    def block_lonis(self, block: LonisBlock) -> Node:
        shown = parsed_lonis(block.envelope)

        def fields() -> list[Node]:
            return [
                {
                    "name": f.name,
                    "style": f.style,
                    "value": self.code(f.value, "json", LAYOUT["list"]) if f.style == "json" else f.value,
                }
                for f in shown.fields
            ]

        return {
            "t": "lonis",
            "kind": shown.kind,
            "category": shown.category,
            "summary": shown.summary,
            "header": [list(pair) for pair in shown.header],
            "fields": self._framed(fields),
            "hash": shown.content_hash,
            "replay": shown.replay,
        }

    def block_unknown(self, block: Block) -> Node:
        def fields() -> list[list[Any]]:
            return [
                [key, self.code(json_text(value), None, LAYOUT["list"])]
                for key, value in block.fields.items()
                if key not in ("id", "type")
            ]

        return {"t": "unknown", "type": data_label(block.type), "fields": self._framed(fields)}


def template() -> bytes:
    return (builtin_templates() / "typst" / "session.typ").read_bytes()


def document_json(document: dict[str, Any]) -> bytes:
    """JSON Typst can read: a lone surrogate (which no UTF-8 holds) becomes U+FFFD."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return surrogates_replaced(text).encode("utf-8")


class Part(NamedTuple):
    """One of the parts a long session is laid out in, and what the whole shows."""

    number: int
    facts: SessionFacts
    whole: Session


def render_typst(session: Session, options: ExportOptions) -> bytes:
    """One Typst document; a long session (over ``PART_SIZE`` of text) in parts,
    each compiled by a process of its own (Typst keeps what it compiled for the
    life of a process), and joined as the WeasyPrint engine joins its parts."""
    session = visible_session(session, options.reasoning, options.redaction)
    chunks = split(session, PART_SIZE, options=options)
    facts = SessionFacts.of(session)
    with tempfile.TemporaryDirectory(prefix="vis-export-typst-") as folder:

        def pdf_of(number: int, compile: Callable[[Path, int | None], bytes]) -> bytes:
            start, end = chunks[number]
            part = Part(number, facts, session) if len(chunks) > 1 else None
            shown = replace(session, messages=session.messages[start:end]) if part else session
            root = Path(folder) / str(number)
            try:
                return compile(_write(root, shown, options, part), facts.created)
            except RuntimeError:  # TypstError too: an image whose header is sound and whose data is not
                if not any((root / "images").iterdir()):
                    raise
                shutil.rmtree(root)
                return compile(_write(root, shown, options, part, UNDECODABLE), facts.created)

        if len(chunks) == 1:
            return pdf_of(0, compile_folder)
        with ThreadPoolExecutor(max_workers=min(len(chunks), cores(), MAX_WORKERS)) as pool:
            pdfs = list(pool.map(lambda number: pdf_of(number, _compile_in_process), range(len(chunks))))
    return join(session, pdfs, engine="Typst")


def _write(
    root: Path, session: Session, options: ExportOptions, part: Part | None, image_refusal: str | None = None
) -> Path:
    """The private folder Typst reads: the template, the session as JSON, the checked images."""
    root.mkdir()
    projector = TypstProjector(options, image_refusal)
    (root / "session.json").write_bytes(document_json(projector.document(session, part)))
    (root / "images").mkdir()
    for name, data in projector.images.files.items():
        (root / name.lstrip("/")).write_bytes(data)
    (root / "no-packages").mkdir()
    (root / "session.typ").write_bytes(template())
    return root


def compile_folder(root: Path, created: int | None) -> bytes:
    """The PDF of a folder ``_write`` made: nothing read outside it but fonts, no package."""
    import typst

    empty = str(root / "no-packages")
    pdf = typst.compile(
        str(root / "session.typ"),
        root=str(root),
        font_paths=[],
        package_path=empty,
        package_cache_path=empty,
        timestamp=(created or 0) // 1000,
    )
    return bytes(pdf)


_CHILD = (
    "import sys; from pathlib import Path; from vis_export.formats.pdf_typst import compile_folder; "
    "root = Path(sys.argv[1]); (root / 'out.pdf').write_bytes(compile_folder(root, int(sys.argv[2]) or None))"
)


def _compile_in_process(root: Path, created: int | None) -> bytes:
    """``compile_folder`` in a new interpreter, whose memory goes with it (a fork
    could inherit a Typst thread pool that no longer has its threads)."""
    package = str(Path(__file__).resolve().parents[2])  # where this vis_export is, however it was found
    path = os.pathsep.join(filter(None, [package, os.environ.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), str(created or 0)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": path},
    )
    if run.returncode != 0:
        raise RuntimeError(f"Typst failed on part {root.name}: {run.stderr.strip().splitlines()[-1:]}")
    return (root / "out.pdf").read_bytes()
