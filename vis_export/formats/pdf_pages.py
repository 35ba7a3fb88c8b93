"""A PDF's pages, whichever engine laid them out (WeasyPrint, Typst): how a
long session is split into parts of about equal text as printed, and the parts
joined into one file with pypdf, ``N / M`` stamped on every page and the
session's metadata (dates from the session, the identifier from the content,
so the bytes are deterministic). ``pdf`` and ``pdf_typst`` both build on it,
and neither imports the other's module at its top."""

from __future__ import annotations

import hashlib
import io
import os
from datetime import UTC, datetime
from typing import Any

from vis_export.formats.facts import SessionFacts
from vis_export.formats.options import ExportOptions
from vis_export.formats.projector import Projector, ToolPart
from vis_export.formats.tool_lines import paper_part
from vis_export.model import Block, Session, ToolBlock
from vis_export.version import __version__

MAX_WORKERS = 4  # Typst parts compiled at once (WeasyPrint parts wait for each other: pdf_seams)
FOOTER_SIZE = 8
FOOTER_RISE = 22  # points above the bottom edge, below the 16 mm margin
FOOTER_COLOUR = "0.35 0.39 0.43"  # the stylesheet's muted grey, #59636e


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def split(
    session: Session, size: int, parts: int | None = None, options: ExportOptions | None = None
) -> list[tuple[int, int]]:
    """Message ranges of about equal text: ``parts`` of them (at most one per message),
    by default as many as keep each within about ``size`` (the engine's ``PART_SIZE``). Text is
    counted as ``options`` show it: a 4,000-line log printed as 60 lines counts as 60
    (counted whole, it split a short document into parts, each starting a page)."""
    shown = _Shown(options or ExportOptions())
    sizes = [sum(shown.size(b) for b in shown.blocks(m)) + 200 for m in session.messages]
    total = sum(sizes)
    parts = max(1, min(parts if parts is not None else -(-total // size), len(sizes)))
    bounds: list[tuple[int, int]] = []
    start = running = 0
    for index, size in enumerate(sizes):
        running += size
        if len(bounds) < parts - 1 and running >= total * (len(bounds) + 1) / parts and index + 1 < len(sizes):
            bounds.append((start, index + 1))
            start = index + 1
    bounds.append((start, len(sizes)))
    return bounds


class _Shown(Projector):
    """What a page shows of each block, to measure: tool output as ``tool_lines`` keeps it."""

    def output_part(self, part: ToolPart) -> ToolPart:
        return paper_part(part, self.options.tool_output_limit)

    def size(self, block: Block) -> int:
        if isinstance(block, ToolBlock):
            return sum(len(part.label) + len(part.text) + len(part.tail) for part in self.tool_parts(block))
        return sum(len(str(value)) for value in block.fields.values())


def join(session: Session, pdfs: list[bytes], engine: str = "WeasyPrint") -> bytes:
    """The parts as one PDF: outlines kept, ``N / M`` stamped, the session's metadata."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, ByteStringObject

    writer = PdfWriter()
    for pdf in pdfs:
        writer.append(PdfReader(io.BytesIO(pdf)))
    _stamp_page_numbers(writer)
    writer.add_metadata(_metadata(session, engine))
    identifier = ByteStringObject(hashlib.sha256(b"".join(pdfs)).digest()[:16])
    writer._ID = ArrayObject([identifier, identifier])  # deterministic, unlike pypdf's random one
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def created(session: Session) -> int:
    """Milliseconds: the date every stamp in the PDF carries."""
    return SessionFacts.of(session).created or 0


def _metadata(session: Session, engine: str) -> dict[str, str]:
    stamp = datetime.fromtimestamp(created(session) / 1000, tz=UTC).strftime("D:%Y%m%d%H%M%SZ")
    facts = SessionFacts.of(session)
    models, title = facts.models, facts.title
    return {
        "/Title": title,
        "/Subject": f"Vis session {session.id}",
        "/Keywords": ", ".join(models),
        "/Creator": f"vis-export {__version__}",
        "/Producer": f"vis-export {__version__} ({engine}, pypdf)",
        "/CreationDate": stamp,
        "/ModDate": stamp,
    }


def _stamp_page_numbers(writer: Any) -> None:
    """``N / M`` centred in each page's footer, in Helvetica (every PDF reader has it)."""
    from pypdf.generic import DictionaryObject, NameObject

    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
                NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
            }
        )
    )
    total = len(writer.pages)
    for number, page in enumerate(writer.pages, 1):
        label = f"{number} / {total}"
        box = page.mediabox
        width = FOOTER_SIZE * sum(0.556 if ch.isdigit() else 0.278 for ch in label)
        x = float(box.left) + (float(box.width) - width) / 2
        y = float(box.bottom) + FOOTER_RISE
        resources = page.setdefault(NameObject("/Resources"), DictionaryObject()).get_object()
        fonts = resources.setdefault(NameObject("/Font"), DictionaryObject()).get_object()
        fonts[NameObject("/VisExportFooter")] = font
        text = f"BT /VisExportFooter {FOOTER_SIZE} Tf {x:.2f} {y:.2f} Td ({label}) Tj ET"
        _draw_over(writer, page, f"{FOOTER_COLOUR} rg {text}")


def _draw_over(writer: Any, page: Any, operators: str) -> None:
    """Draw ``operators`` over the page in default user space (origin at the
    bottom left, y up). WeasyPrint's content ends with its own flipped and
    scaled matrix still in effect, so it is wrapped in ``q`` … ``Q`` first:
    drawn after it bare, the footer came out upside down at the top."""
    from pypdf.generic import ArrayObject, DecodedStreamObject, NameObject

    def stream(data: str) -> Any:
        content = DecodedStreamObject()
        content.set_data(data.encode())
        return writer._add_object(content)

    contents = page.get("/Contents")
    existing = contents.get_object() if contents is not None else ArrayObject()
    layers = list(existing) if isinstance(existing, ArrayObject) else [contents]
    page[NameObject("/Contents")] = ArrayObject([stream("q\n"), *layers, stream(f"\nQ\nq {operators} Q\n")])
