"""PDF (``--to pdf``): WeasyPrint from the same templates, with the print stylesheet.

Long transcripts are laid out in parts of about ``PART_SIZE`` characters of
message text, in parallel processes, and joined with pypdf (outline entries
kept, in order); each part starts on a new page. The size of a part, not the
number of cores, decides where parts begin, so every machine writes the same
bytes; and it bounds memory: WeasyPrint holds about 0.8 KB per character while
it lays a part out (a part peaks near 200 MB), and at most ``MAX_WORKERS``
parts are laid out at once. 10,000 short messages peaked at 1.9 GB over two
halves of 1 GB each; in parts of this size, at 0.5 GB for every process
together (``python -m benchmarks.pdf_memory``).

Page numbers ``N / M`` are stamped on the joined pages, since no part knows
``M`` while it is laid out. Nothing is fetched while rendering: the URL
fetcher serves ``data:`` URIs only (the document holds nothing else), so no
file is read and no request is made, whatever the content says. The bytes are
deterministic: dates come from the session, the identifier from the content.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from multiprocessing import get_context
from typing import Any

from vis_export import __version__
from vis_export.formats.facts import SessionFacts
from vis_export.formats.html import HtmlProjector
from vis_export.formats.options import ExportOptions
from vis_export.formats.prose_bounds import LayoutBudget
from vis_export.model import Message, Session
from vis_export.policy import visible_session

PART_SIZE = 150_000  # below this much message text a second process costs more than it saves
MAX_WORKERS = 4
FOOTER_SIZE = 8
FOOTER_RISE = 22  # points above the bottom edge, below the 16 mm margin
FOOTER_COLOUR = "0.35 0.39 0.43"  # the stylesheet's muted grey, #59636e


PAGE_SIZES = {"A4": "A4", "Letter": "letter"}


class PrintProjector(HtmlProjector):
    """The HTML projector with the print stylesheet's page rules and every time shown."""

    def page_size(self) -> str | None:
        return PAGE_SIZES[self.options.paper]

    def shows_times(self) -> bool:
        return True

    def layout_budget(self) -> LayoutBudget:
        """WeasyPrint's time grows with every list item and table cell: bounded per part."""
        return LayoutBudget()


def _fetcher() -> Any:
    from weasyprint.urls import URLFetcher

    class DataOnly(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            if url.startswith("data:"):
                return super().fetch(url, headers)
            raise ValueError(f"vis-export loads nothing but data: URIs ({url[:40]!r} refused)")

    return DataOnly()


def to_pdf(
    obj: Session | Message | list[Message] | tuple[Message, ...], engine: str | None = None, **options: object
) -> bytes:
    """A session, a message or a list of messages as PDF bytes (options as in
    ``ExportOptions``); messages are laid out as a session of their own.
    ``engine``: ``weasyprint`` (the default) or ``typst`` (``pdf_engine`` in ``ExportOptions``)."""
    if engine is not None:
        options["pdf_engine"] = engine
    if isinstance(obj, Message):
        obj = [obj]
    if isinstance(obj, (list, tuple)):
        first = obj[0].id if obj else "messages"
        obj = Session(id=first, messages=tuple(obj))
    if not isinstance(obj, Session):
        raise TypeError(f"to_pdf takes a Session, a Message or a list of messages, not a {type(obj).__name__}")
    return render_pdf(obj, ExportOptions(**options))  # type: ignore[arg-type]


def render_pdf(session: Session, options: ExportOptions, parts: int | None = None) -> bytes:
    """``parts`` (default: one per ``PART_SIZE`` of text) forces the split (WeasyPrint);
    ``options.pdf_engine`` ``typst`` hands the session to ``pdf_typst`` instead."""
    from vis_export.extras import require

    if options.pdf_engine == "typst":
        require("typst", "PDF with the Typst engine")
        from vis_export.formats.pdf_typst import render_typst

        return render_typst(session, options)
    require("weasyprint", "PDF")
    require("pypdf", "PDF")
    session = visible_session(session, options.reasoning)  # R2: the parts are rendered from this view
    chunks = split(session, parts)
    if len(chunks) == 1:
        pdfs = [_render_part(session, options, 0, chunks)]
    else:
        pdfs = _render_in_parallel(session, options, chunks)
    return join(session, pdfs)


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def split(session: Session, parts: int | None = None, size: int | None = None) -> list[tuple[int, int]]:
    """Message ranges of about equal text: ``parts`` of them (at most one per message),
    by default as many as keep each within about ``size`` (``PART_SIZE``)."""
    sizes = [sum(len(str(v)) for b in m.blocks for v in b.fields.values()) + 200 for m in session.messages]
    total = sum(sizes)
    parts = max(1, min(parts if parts is not None else -(-total // (size or PART_SIZE)), len(sizes)))
    bounds: list[tuple[int, int]] = []
    start = running = 0
    for index, size in enumerate(sizes):
        running += size
        if len(bounds) < parts - 1 and running >= total * (len(bounds) + 1) / parts and index + 1 < len(sizes):
            bounds.append((start, index + 1))
            start = index + 1
    bounds.append((start, len(sizes)))
    return bounds


def _render_part(session: Session, options: ExportOptions, index: int, chunks: list[tuple[int, int]]) -> bytes:
    from weasyprint import HTML

    start, end = chunks[index]
    part = replace(session, messages=session.messages[start:end])
    projector = PrintProjector(options)
    html = "".join(projector.session(part, first_index=start + 1, continuation=index > 0))
    # WeasyPrint warns about the screen-only rules of the shared stylesheet
    # (prefers-color-scheme); print is meant to ignore them.
    logger = logging.getLogger("weasyprint")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with _font_dates(_created(session)):
            return bytes(HTML(string=html, url_fetcher=_fetcher(), base_url="data:,").write_pdf())
    finally:
        logger.setLevel(level)


@contextmanager
def _font_dates(created: int) -> Iterator[None]:
    """fontTools dates a font it rewrites (an emoji or a variable font) with the
    current time unless ``SOURCE_DATE_EPOCH`` names one: the session's own date
    keeps the bytes the same from one second to the next."""
    previous = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(created // 1000)
    try:
        yield
    finally:
        if previous is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = previous


# The session a pool's forked workers render from: a frozen session holds
# read-only maps, which cannot be pickled, and a fork shares it for free.
_WORK: tuple[Session, ExportOptions, list[tuple[int, int]]] | None = None


def _render_shared_part(index: int) -> bytes:
    assert _WORK is not None
    return _render_part(*_WORK[:2], index, _WORK[2])


def _render_in_parallel(session: Session, options: ExportOptions, chunks: list[tuple[int, int]]) -> list[bytes]:
    global _WORK
    _WORK = (session, options, chunks)
    try:
        workers = min(len(chunks), cores(), MAX_WORKERS)
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
            return list(pool.map(_render_shared_part, range(len(chunks))))
    finally:
        _WORK = None


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


def _created(session: Session) -> int:
    """Milliseconds: the date every stamp in the PDF carries."""
    return SessionFacts.of(session).created or 0


def _metadata(session: Session, engine: str) -> dict[str, str]:
    stamp = datetime.fromtimestamp(_created(session) / 1000, tz=UTC).strftime("D:%Y%m%d%H%M%SZ")
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
