"""PDF (``--to pdf``): WeasyPrint from the same templates, with the print stylesheet.

Nothing is fetched while rendering: the URL fetcher serves ``data:`` URIs only
(the document holds nothing else), so no file is read and no request is made,
whatever the content says. The bytes are deterministic: the creation date is
the session's, and the file identifier is derived from the content.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from vis_export.formats.html import HtmlProjector
from vis_export.formats.options import ExportOptions
from vis_export.model import Session
from vis_export.output import encode


class PrintProjector(HtmlProjector):
    """The HTML projector with the print stylesheet's page rules and every time shown."""

    print_mode = True


def _fetcher() -> Any:
    from weasyprint.urls import URLFetcher

    class DataOnly(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            if url.startswith("data:"):
                return super().fetch(url, headers)
            raise ValueError(f"vis-export loads nothing but data: URIs ({url[:40]!r} refused)")

    return DataOnly()


def to_pdf(session: Session, **options: object) -> bytes:
    """The session as PDF bytes (options as in ``ExportOptions``)."""
    return render_pdf(session, ExportOptions(**options))  # type: ignore[arg-type]


def render_pdf(session: Session, options: ExportOptions) -> bytes:
    from weasyprint import HTML

    html = PrintProjector(options).render(session)
    identifier = hashlib.sha256(encode(html)).hexdigest()[:32].encode("ascii")
    # WeasyPrint warns about the screen-only rules of the shared stylesheet
    # (prefers-color-scheme); they are meant to be ignored in print.
    logger = logging.getLogger("weasyprint")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        document = HTML(string=html, url_fetcher=_fetcher(), base_url="data:,")
        return document.write_pdf(pdf_identifier=identifier)
    finally:
        logger.setLevel(level)
