"""The reading room's pages, rendered from the templates in ``templates/serve/``.

The session page is the HTML projector's own document (same templates, same
sanitising) extended with the room's bar, download links and the copy
script; the other pages share a layout. All markup is in the templates; here
are only the values they receive and the URLs, built from ids by quoting.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from vis_export.formats.anchors import anchor
from vis_export.formats.html import HtmlProjector, environment, pasted_styles, style_source
from vis_export.formats.options import ExportOptions
from vis_export.listing import SessionSummary
from vis_export.model import Block, Message, Session
from vis_export.policy import Reasoning, SessionView, visible_session
from vis_export.searchindex import Hit
from vis_export.strings import data_label, surrogates_replaced
from vis_export.timefmt import utc

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

# The room's own files, served from the package: a stylesheet and the copy script.
STYLESHEET = "/static/serve.css"
SCRIPT = "/static/copy.js"
# A browser resolves these path segments instead of sending them: such ids go in a query.
_DOT_SEGMENTS = frozenset({".", ".."})


def session_url(session_id: str, suffix: str = "", downloads: Collection[str] = ()) -> str:
    """Where a session's page (or, with ``.md`` and the like, a download) is.
    ``/s/<id>.<extension>`` is the download of ``<id>`` when ``extension`` is
    among ``downloads``, so the page of an id that ends so is in a query."""
    if session_id in _DOT_SEGMENTS or (not suffix and session_id.rpartition(".")[2] in downloads):
        return "/session?" + urlencode({"id": session_id, **({"as": suffix.lstrip(".")} if suffix else {})})
    return f"/s/{quote(surrogates_replaced(session_id), safe='')}{suffix}"


def hit_url(room: Room, hit: Hit) -> str:
    """A hit's block in its session, the page opened there (``#b-<block_id>``)."""
    return f"{room.url(hit.session_id)}#{anchor('b', hit.block_id)}"


def policy(style: str) -> str:
    """The Content-Security-Policy of a session page's ``<meta>``: the package's
    own stylesheet and script, the session document's inline stylesheet by hash,
    the style attributes of what a copy button puts on the clipboard by hash
    (``pasted_styles``: the browser checks them when the script writes them),
    ``data:`` images, requests only back to this server; nothing else."""
    attributes = " ".join(style_source(value) for value in pasted_styles())
    return (
        f"default-src 'none'; script-src 'self'; style-src 'self' {style_source(style)}; "
        f"style-src-attr 'unsafe-hashes' {attributes}; img-src data:; "
        "connect-src 'self'; font-src 'none'; base-uri 'none'; form-action 'self'"
    )


def header_policy(style: str) -> str:
    """The Content-Security-Policy header of every response: the page's policy
    and ``frame-ancestors``, which only a header can carry (a ``<meta>`` ignores
    it, with a warning in the console)."""
    return f"{policy(style)}; frame-ancestors 'none'"


@dataclass(frozen=True)
class Room:
    """What every page says about the server: its policy, fixed at start."""

    reasoning: Reasoning
    downloads: Sequence[tuple[str, str]]  # (label, extension) of every format on offer
    redaction: Redaction | None = None

    @property
    def options(self) -> ExportOptions:
        return ExportOptions(reasoning=self.reasoning, redact=self.redaction)

    def url(self, session_id: str, extension: str = "") -> str:
        """A session's page, or its download as ``extension``."""
        suffix = f".{extension}" if extension else ""
        return session_url(session_id, suffix, [extension for _, extension in self.downloads])

    def context(self) -> dict[str, Any]:
        return {"reasoning_shown": self.reasoning == "all", "stylesheet": STYLESHEET, "script": SCRIPT}


class ServedProjector(HtmlProjector):
    """The HTML document with the room around it (``serve/session.html.j2``)."""

    document_template = "serve/session.html.j2"

    def __init__(self, room: Room):
        super().__init__(room.options)
        self.room = room

    def page_context(self, session: Session) -> dict[str, Any]:
        downloads = [(label, self.room.url(session.id, extension)) for label, extension in self.room.downloads]
        return {**self.room.context(), "csp": policy(self.stylesheet()), "downloads": downloads}


def session_page(room: Room, session: SessionView) -> str:
    return ServedProjector(room).render(session)


def sessions_page(
    room: Room, rows: list[SessionSummary], total: int, form: dict[str, str], offset: int, limit: int
) -> str:
    def page_link(start: int) -> str:
        return "/?" + urlencode({**{k: v for k, v in form.items() if v}, "page": str(start // limit + 1)})

    values = {
        "rows": [
            {
                "title": data_label(row.heading),
                "id": row.id,
                "url": room.url(row.id),
                "first": utc(row.first_at),
                "last": utc(row.last_at),
                "messages": row.messages,
                "models": ", ".join(row.models),
            }
            for row in rows
        ],
        "total": total,
        "first": offset + 1 if rows else 0,
        "last": offset + len(rows),
        "previous": page_link(offset - limit) if offset > 0 else None,
        "next": page_link(offset + limit) if offset + limit < total else None,
        "form": form,
    }
    return _render("serve/sessions.html.j2", room, values)


def search_page(
    room: Room, hits: list[Hit] | None, form: dict[str, str], choices: Mapping[str, Sequence[str]], problem: str | None
) -> str:
    from markupsafe import Markup

    values = {
        "hits": [
            {
                "url": hit_url(room, hit),
                "title": data_label(hit.session_title) or f"Session {data_label(hit.session_id)}",
                "role": hit.role,
                "type": hit.block_type,
                "language": hit.language,
                "time": utc(hit.created_at),
                "snippet": Markup(hit.snippet_html),  # escaped by the snippet maker, matches in <mark>
            }
            for hit in hits or []
        ],
        "searched": hits is not None,
        "form": form,
        "choices": choices,
        "problem": problem,
    }
    return _render("serve/search.html.j2", room, values)


def problem_page(room: Room, status: int, message: str) -> str:
    return _render("serve/problem.html.j2", room, {"status": status, "message": message})


def _render(name: str, room: Room, values: dict[str, Any]) -> str:
    return str(environment(None).get_template(name).render(**room.context(), **values))


def anchored_part(room: Room, session: SessionView, wanted: str) -> Message | Block | None:
    """The message or block a page's anchor names, anchors handed out as the
    page hands them out (``HtmlProjector.anchored``): only what the policy shows."""
    projector = HtmlProjector(room.options)
    for message in visible_session(session, room.reasoning, room.redaction).messages:
        anchor_of_message, blocks = projector.anchored(message)
        if anchor_of_message == wanted:
            return message
        for anchor_of_block, block in blocks:
            if anchor_of_block == wanted:
                return block
    return None
