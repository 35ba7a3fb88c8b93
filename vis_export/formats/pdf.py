"""PDF (``--to pdf``): WeasyPrint from the same templates, with the print stylesheet.

Long transcripts are laid out in parts of about ``PART_SIZE`` characters of
message text as printed (long tool output cut, see ``tool_lines``), each in a
process of its own, one after the other (a part's layout overlapping only the
writing of the one before it), and joined with pypdf (outline
entries kept, in order). A part ends where the message boundaries of its last
pages leave a page fullest and the next starts there (``pdf_seams``), so the
parts do not show. The size of a part, not the number of cores, decides where
parts begin, so every machine writes the same bytes; and it bounds memory:
WeasyPrint holds about 0.8 KB per character while it lays a part out (a part
peaks near 200 MB). 10,000 short messages peaked at 1.9 GB over two halves of
1 GB each; in parts of this size, at 0.5 GB for every process together
(``python -m benchmarks.pdf_memory``).

Page numbers ``N / M`` are stamped on the joined pages, since no part knows
``M`` while it is laid out. Nothing is fetched while rendering: the URL
fetcher serves ``data:`` URIs only (the document holds nothing else), so no
file is read and no request is made, whatever the content says. The bytes are
deterministic: dates come from the session, the identifier from the content.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing import current_process, get_context
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from vis_export.collector import young_threshold
from vis_export.formats import pdf_pages
from vis_export.formats.html import HtmlProjector
from vis_export.formats.long_runs import breakable
from vis_export.formats.options import ExportOptions, Folder, Paper, PdfEngine, ToolOutputLimit, options_given
from vis_export.formats.projector import ToolPart
from vis_export.formats.prose_bounds import LayoutBudget
from vis_export.formats.tool_lines import paper_part
from vis_export.model import Message, Session, ToolBlock
from vis_export.policy import DEFAULT_REASONING, Reasoning, visible_session

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from vis_export.redaction import Redaction

PART_SIZE = 150_000  # below this much message text a second process costs more than it saves


PAGE_SIZES = {"A4": "A4", "Letter": "letter"}
# A framed block this short (``html.rows``) moves to the next page whole rather
# than break: at most about a fifth of a page (57 rows of code) is left empty so.
# Kept whole up to 24 rows (as HTML still is), a tool block left the golden
# session's first page 38% empty.
KEEP_ROWS = 12


class PrintProjector(HtmlProjector):
    """The HTML projector with the print stylesheet's page rules and every time shown."""

    def page_size(self) -> str | None:
        return PAGE_SIZES[self.options.paper]

    def shows_times(self) -> bool:
        return True

    def page_context(self, session: Session) -> dict[str, Any]:
        return {"keep_rows": KEEP_ROWS}

    def tool_summary(self, block: ToolBlock) -> str | None:
        """None: on paper every tool block is open, its input right below the heading."""
        return None

    def output_part(self, part: ToolPart) -> ToolPart:
        return paper_part(part, self.options.tool_output_limit)

    def code_html(self, text: str, language: str | None) -> Markup:
        """A code block's or fenced code's: long runs without white space get break opportunities (``long_runs``)."""
        return breakable(super().code_html(text, language))

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
    obj: Session | Message | list[Message] | tuple[Message, ...],
    engine: PdfEngine | None = None,
    *,
    reasoning: Reasoning = DEFAULT_REASONING,
    no_tools: bool = False,
    tool_output_limit: ToolOutputLimit = None,
    attachments: Folder = None,
    template_dir: Folder = None,
    no_highlight: bool = False,
    paper: Paper = "A4",
    pdf_engine: PdfEngine = "weasyprint",
    redact: Redaction | bool | None = None,
) -> bytes:
    """A session, a message or a list of messages as PDF bytes; messages are
    laid out as a session of their own. The options are those of ``vis-export
    convert --to pdf`` (see ``ExportOptions``; times are always shown);
    ``engine``, when given, is ``pdf_engine``: ``weasyprint`` or ``typst``."""
    options = options_given({**locals(), "pdf_engine": engine or pdf_engine})
    if isinstance(obj, Message):
        obj = [obj]
    if isinstance(obj, (list, tuple)):
        first = obj[0].id if obj else "messages"
        obj = Session(id=first, messages=tuple(obj))
    if not isinstance(obj, Session):
        raise TypeError(f"to_pdf takes a Session, a Message or a list of messages, not a {type(obj).__name__}")
    return render_pdf(obj, options)


def check_engine(options: ExportOptions) -> None:
    """``MissingExtra`` naming the extra to install when the engine ``options``
    choose is not installed (without importing it: WeasyPrint takes a second)."""
    from vis_export.extras import require_installed

    if options.pdf_engine == "typst":
        require_installed("typst", "PDF with the Typst engine")
        return
    require_installed("weasyprint", "PDF")
    require_installed("pypdf", "PDF")


def render_pdf(session: Session, options: ExportOptions, parts: int | None = None) -> bytes:
    """``parts`` (default: one per ``PART_SIZE`` of text) forces the split (WeasyPrint);
    ``options.pdf_engine`` ``typst`` hands the session to ``pdf_typst`` instead."""
    check_engine(options)
    if options.pdf_engine == "typst":
        from vis_export.formats.pdf_typst import render_typst

        return render_typst(session, options)
    session = visible_session(session, options.reasoning, options.redaction)  # R2: the parts are made of this view
    chunks = split(session, parts, options=options)
    return pdf_pages.join(session, _lay_out(session, options, chunks))


def split(session: Session, parts: int | None = None, options: ExportOptions | None = None) -> list[tuple[int, int]]:
    """WeasyPrint's parts (``pdf_pages.split``): by default one per ``PART_SIZE`` of text."""
    return pdf_pages.split(session, PART_SIZE, parts, options)


def _render_part(
    session: Session, options: ExportOptions, index: int, bounds: tuple[int, int], last: bool
) -> tuple[bytes, int]:
    """The PDF of the messages in ``bounds``; unless ``last``, cut at the message
    boundary that leaves its last page fullest (``pdf_seams``), and where the next
    part starts."""
    from weasyprint import HTML

    from vis_export.formats.pdf_seams import cut_page, cut_point, message_starts

    start, end = bounds
    part = replace(session, messages=session.messages[start:end])
    projector = PrintProjector(options)
    html = "".join(projector.session(part, first_index=start + 1, continuation=index > 0, whole=session))
    # WeasyPrint warns about the screen-only rules of the shared stylesheet
    # (prefers-color-scheme); print is meant to ignore them.
    logger = logging.getLogger("weasyprint")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with _font_dates(pdf_pages.created(session)), young_threshold(YOUNG_OBJECTS):
            document = HTML(string=html, url_fetcher=_fetcher(), base_url="data:,").render()
            starts = message_starts(document.pages)
            if last or len(starts) != end - start:  # a template of its own may not mark messages
                return bytes(document.write_pdf()), end
            kept, following = cut_point(document.pages, starts)
            pages = document.pages[:kept]
            if following is not None and starts[following].page == kept - 1:
                pages[-1] = cut_page(pages[-1], starts[following])
            after = end if following is None else start + following
            if _SEAM is not None:  # the next part may start while this one is drawn and written
                _SEAM.send(after)
            return bytes(document.copy(pages).write_pdf()), after
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


# Objects a young generation of the cyclic collector holds before it is walked while
# WeasyPrint lays a part out (Python's default: 700). WeasyPrint makes boxes, styles
# and Pango layouts by the hundred thousand, most of them kept to the end of the part,
# so at 700 the collector walked them again and again: about 1,060 collections and a
# seventh of a highlighted part's CPU time (spans make more boxes: a fourteenth of a
# plain one's); at this size 34 collections, a thirtieth, and the same peak memory.
YOUNG_OBJECTS = 20_000


# The session a forked process renders from: a frozen session holds read-only
# maps, which cannot be pickled, and a fork shares it for free. ``_SEAM``: where
# a forked part says which message the next part starts with, as soon as it knows.
_WORK: tuple[Session, ExportOptions] | None = None
_SEAM: Connection | None = None
# Held while the globals above are a render's: a second thread's render (a library caller's,
# a worker's with threads) set them to its own session under the first one's later parts.
_FORKING = threading.Lock()


def _render_shared_part(index: int, bounds: tuple[int, int], last: bool) -> tuple[bytes, int]:
    assert _WORK is not None
    return _render_part(*_WORK, index, bounds, last)


def _lay_out(session: Session, options: ExportOptions, chunks: list[tuple[int, int]]) -> list[bytes]:
    """The parts' PDFs, each part in a process of its own when there are several
    (whose memory goes with it), except in a daemonic process (a Dask or
    multiprocessing pool's worker), which may start none: the same parts, laid out
    here one after the other. A part's layout waits for the one before it (where it
    starts is where that one ends, ``pdf_seams``), but not for its drawing and
    writing, a fifth of a part's time: while one part is written the next is laid
    out, so two processes at most."""
    pdfs: list[bytes] = []
    start = 0
    if len(chunks) == 1 or current_process().daemon:
        for index, (_, end) in enumerate(chunks):
            pdf, start = _render_part(session, options, index, (start, end), index == len(chunks) - 1)
            pdfs.append(pdf)
        return pdfs
    with _FORKING:
        return _lay_out_forked(session, options, chunks)


def _lay_out_forked(session: Session, options: ExportOptions, chunks: list[tuple[int, int]]) -> list[bytes]:
    """``_lay_out`` in processes forked from this one, each part's layout beside the writing of the one before."""
    global _WORK, _SEAM
    pdfs: list[bytes] = []
    start = 0
    _WORK = (session, options)
    pools: list[ProcessPoolExecutor] = []  # the live ones: the part laid out, and the one before it written
    try:
        futures: list[Future[tuple[bytes, int]]] = []
        for index, (_, end) in enumerate(chunks):
            receiver, _SEAM = get_context("fork").Pipe(duplex=False)
            pools.append(ProcessPoolExecutor(max_workers=1, mp_context=get_context("fork")))
            futures.append(pools[-1].submit(_render_shared_part, index, (start, end), index == len(chunks) - 1))
            _SEAM.close()  # the part's process holds its own end
            if len(pools) == 2:  # the part before, written while this one is laid out: its process ends
                pdfs.append(futures[-2].result()[0])
                pools.pop(0).shutdown()
            if index < len(chunks) - 1:
                start = _next_start(receiver, futures[-1])
            receiver.close()
        pdfs.append(futures[-1].result()[0])
        pools.pop().shutdown()
        return pdfs
    except BaseException:
        # A stop (SIGTERM, Ctrl-C) unwinds here while a part is still being laid out:
        # the pool would wait for it, minutes on a large part, so it ends too.
        for pool in pools:
            for process in list(pool._processes.values()):
                process.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        _WORK = _SEAM = None


def _next_start(receiver: Connection, future: Future[tuple[bytes, int]]) -> int:
    """Where the next part starts, as soon as the part of ``future`` has said it
    (or its result, if it failed first: its error is raised)."""
    while not receiver.poll(0.05):
        if future.done():
            return future.result()[1]
    return int(receiver.recv())
