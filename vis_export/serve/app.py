"""The reading room as an ASGI application (Starlette): routes over a catalogue.

Safety lives at the edge, in one place each: ``TrustedHostMiddleware`` refuses
a foreign ``Host`` (DNS rebinding), ``Guard`` answers 405 to every method but
GET and HEAD and puts the Content-Security-Policy and its companions on every
response. Requests name sessions by id, looked up in the catalogue; the only
files served are the package's own two, read at start.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from vis_export.contract import MESSAGE_ROLES
from vis_export.copying import clipboard
from vis_export.extras import MissingExtra
from vis_export.formats import FORMATS, Format, get_format
from vis_export.formats.html import HtmlProjector
from vis_export.model import Session
from vis_export.output import encode
from vis_export.policy import Reasoning, SessionView, index_level, visible_session
from vis_export.searchindex import Hit, IndexFailure, search
from vis_export.searchindex.documents import INDEXED_TYPES
from vis_export.serve import pages
from vis_export.serve.catalogue import SORTS, Catalogue
from vis_export.serve.renders import Busy, Renders
from vis_export.timefmt import millis

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

PER_PAGE = 50
MAX_PER_PAGE = 1000
SEARCH_LIMIT = 10  # as `vis-export search`
MAX_SEARCH_LIMIT = 200
KEPT_PAGES = 8  # rendered session pages kept for the next request
RETRY_AFTER = 10  # seconds a busy server asks a download to wait before it is asked for again
# What a browser says of where a request comes from (Sec-Fetch-Site) that a session's page, a search or a
# download is answered for: a link of the room's own pages, or one the person typed or opened from outside a
# page (a bookmark).
OWN_REQUEST = frozenset({"same-origin", "none"})
OTHER_SITE = "A session, its downloads and searches are given to this server's own pages only: open it here."


class Guard:
    """GET and HEAD only (else 405), and the security headers on every answer."""

    def __init__(self, app: ASGIApp, csp: str):
        self.app = app
        self.headers = [
            (b"content-security-policy", csp.encode("ascii")),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"x-frame-options", b"DENY"),
            (b"cross-origin-resource-policy", b"same-origin"),
        ]

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started: list[bool] = []  # whether the answer has begun
        sending = self._sending(send, started)
        if scope["method"] not in ("GET", "HEAD"):
            await Response("Only GET and HEAD: this server is read-only.\n", 405, {"allow": "GET, HEAD"})(
                scope, receive, sending
            )
            return
        try:
            await self.app(scope, receive, sending)
        except Exception:
            # Starlette's own 500 is sent from outside every middleware, without
            # these headers: this one is sent here, and the error goes on to the log.
            if not started:
                await Response("Internal server error: see the server's log.\n", 500)(scope, receive, sending)
            raise

    def _sending(self, send: Any, started: list[bool]) -> Any:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.headers]
                started.append(True)
            await send(message)

        return sending


class BadRequest(ValueError):
    """A query parameter that cannot be read: a 400 saying which."""


def _offered() -> dict[str, Format]:
    """The downloads on offer by extension: every built-in format whose extra is installed."""
    offered = {}
    for name in FORMATS:
        try:
            made = get_format(name)
        except MissingExtra:
            continue
        offered[made.extension] = made
    return offered


def _static(name: str) -> bytes:
    return (files("vis_export.serve") / "static" / name).read_bytes()


def _download_name(session_id: str, extension: str) -> str:
    return (re.sub(r"[^A-Za-z0-9_.-]", "_", session_id).strip(".")[:100] or "session") + f".{extension}"


def cross_site(request: Request) -> bool:
    """Whether a browser made the request for another site's page: any web page
    can make a browser ask 127.0.0.1 for a session's page, a search or a download
    (a link, an image, a form), each a render of what a session holds. A request
    without the headers (not from a browser, or an old one) is not. A browser that
    sends no Sec-Fetch-Site (Safari before 16.4) still names the page a link or an
    image is on in ``Referer``, which the room's own pages never send (no-referrer)."""
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    fetched_from = request.headers.get("sec-fetch-site")
    if fetched_from is not None:
        if fetched_from not in OWN_REQUEST:
            return True
    elif (referer := request.headers.get("referer")) is not None and _origin_of(referer) != own:
        return True
    origin = request.headers.get("origin")
    return origin is not None and origin != own


def _origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, as ``Origin`` writes it (a URL that cannot be read: none)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.scheme and parts.netloc else ""


def create_app(
    catalogue: Catalogue,
    index: str | os.PathLike[str] | None,
    reasoning: Reasoning,
    hosts: Sequence[str],
    *,
    renders: Renders | None = None,
    redaction: Redaction | None = None,
) -> Starlette:
    """The application over ``catalogue``, searching the index at ``index``
    (none: no search); ``reasoning`` and ``redaction`` are the policy of every
    page, fixed here; ``hosts``: the names a request's ``Host`` may give;
    ``renders``: how many downloads render at once and what is kept of them (see
    ``Renders``)."""
    renders = renders if renders is not None else Renders()
    formats = _offered()
    room = pages.Room(reasoning, [(f.name, ext) for ext, f in formats.items()], redaction)
    csp = pages.header_policy(HtmlProjector(room.options).stylesheet())
    rendered: OrderedDict[tuple[str, str], bytes] = OrderedDict()
    kept = threading.Lock()
    statics = {name: _static(name) for name in ("copy.js", "serve.css")}

    def html(text: str, status: int = 200) -> Response:
        return Response(encode(text), status, media_type="text/html; charset=utf-8")

    def as_json(value: Any, status: int = 200) -> Response:
        return Response(encode(json.dumps(value, ensure_ascii=False)), status, media_type="application/json")

    def problem(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/"):
            return as_json({"error": message}, status)
        return html(pages.problem_page(room, status, message), status)

    def number(request: Request, name: str, default: int, most: int) -> int:
        value = request.query_params.get(name) or str(default)
        # ASCII digits only, and few: str.isdigit takes "²", and int() refuses 5,000 digits.
        if not re.fullmatch(r"[0-9]{1,18}", value) or not 1 <= int(value) <= most:
            raise BadRequest(f"{name} must be a whole number from 1 to {most}, not {value[:40]!r}")
        return int(value)

    def moment(request: Request, name: str, end_of_day: bool = False) -> int | None:
        value = request.query_params.get(name)
        if not value:
            return None
        try:
            ms = millis(value)
        except ValueError as error:
            raise BadRequest(f"{name}: {error}") from None
        # A date alone means the whole day for an upper bound.
        return ms + 86_399_999 if end_of_day and re.fullmatch(r"\d{4}-\d\d-\d\d", value) else ms

    def choice(request: Request, name: str, allowed: Sequence[str]) -> str | None:
        value = request.query_params.get(name) or None
        if value is not None and value not in allowed:
            raise BadRequest(f"{name} must be one of {', '.join(allowed)}")
        return value

    def handled(
        endpoint: Callable[[Request], Response], own: Callable[[Request], bool] = lambda request: True
    ) -> Callable[[Request], Response]:
        """``endpoint`` with a bad parameter answered 400; ``own``: whether the request is for
        what a session holds, so that another site's is refused (403) before anything is read."""

        def answer(request: Request) -> Response:
            if own(request) and cross_site(request):
                return problem(request, 403, OTHER_SITE)
            try:
                return endpoint(request)
            except BadRequest as error:
                return problem(request, 400, str(error))

        return answer

    # --- sessions ------------------------------------------------------------------------

    def listed(request: Request) -> tuple[list[Any], int, dict[str, str], int, int]:
        per_page = number(request, "per_page", PER_PAGE, MAX_PER_PAGE)
        offset = (number(request, "page", 1, 10**9) - 1) * per_page
        form = {name: request.query_params.get(name, "") for name in ("title", "since", "until", "sort")}
        sort = choice(request, "sort", SORTS) or SORTS[0]
        rows, total = catalogue.page(
            form["title"], moment(request, "since"), moment(request, "until", True), sort, offset, per_page
        )
        return rows, total, form, offset, per_page

    def sessions_list(request: Request) -> Response:
        rows, total, form, offset, per_page = listed(request)
        return html(pages.sessions_page(room, rows, total, form, offset, per_page))

    def sessions_api(request: Request) -> Response:
        rows = listed(request)[0]
        return as_json([row.row() for row in rows])

    def found(session_id: str) -> tuple[Session, Any] | None:
        return catalogue.session(session_id)

    def view_of(session: Session) -> SessionView:
        """The policy's view of a session (R2): all a page, download or copy of it
        receives. Made when one is made, not for a page already rendered."""
        return visible_session(session, room.reasoning, room.redaction)

    def session_page(session_id: str) -> Response | None:
        hit = found(session_id)
        if hit is None:
            return None
        session, stamp = hit
        key = (session_id, repr(stamp))
        with kept:
            page = rendered.get(key)
        if page is None:
            page = encode(pages.session_page(room, view_of(session)))
        with kept:  # requests run in a thread pool
            rendered[key] = page
            rendered.move_to_end(key)
            while len(rendered) > KEPT_PAGES:
                rendered.popitem(last=False)
        return Response(page, media_type="text/html; charset=utf-8")

    def download(request: Request, session_id: str, extension: str) -> Response | None:
        """A session's file; rendered at most a few at a time, kept while its source is unchanged."""
        made = formats.get(extension)
        if made is None:
            return None
        hit = found(session_id)
        if hit is None:
            return None
        session, stamp = hit

        def render() -> bytes:
            body = made.render(view_of(session), room.options)
            return body if isinstance(body, bytes) else encode(body)

        try:
            # The options are the server's, fixed at start: the key needs only the source's stamp and the format.
            body = renders.get((session_id, repr(stamp), extension), render, heavy=made.binary)
        except Busy:
            answer = problem(request, 503, "Busy rendering other downloads: try again in a few seconds.")
            answer.headers["retry-after"] = str(RETRY_AFTER)
            return answer
        headers = {"content-disposition": f'attachment; filename="{_download_name(session_id, extension)}"'}
        # The format's own media type; Starlette adds "; charset=utf-8" to a text one, as the body is encoded.
        return Response(body, media_type=made.media_type, headers=headers)

    def session_path(request: Request) -> Response:
        # /s/<id>.md is the download of <id> first, as the page links it (pages.session_url).
        rest = request.path_params["rest"]
        stem, dot, extension = rest.rpartition(".")
        answer = (download(request, stem, extension) if dot else None) or session_page(rest)
        return answer or problem(request, 404, "No session with this id.")

    def session_query(request: Request) -> Response:
        session_id, extension = request.query_params.get("id", ""), request.query_params.get("as")
        answer = download(request, session_id, extension) if extension else session_page(session_id)
        return answer or problem(request, 404, "No session with this id.")

    def copy(request: Request) -> Response:
        hit = found(request.query_params.get("session", ""))
        part = pages.anchored_part(room, view_of(hit[0]), request.query_params.get("anchor", "")) if hit else None
        if part is None:
            return problem(request, 404, "No message or block with this anchor.")
        return as_json(clipboard(part, reasoning=room.reasoning, redact=room.redaction))  # markers styled in HTML

    # --- search --------------------------------------------------------------------------

    def hits(request: Request) -> list[Hit]:
        query = request.query_params.get("q", "")
        if index is None:
            raise BadRequest("this server has no search index")
        try:
            found_hits = search(
                query,
                index,
                limit=number(request, "limit", SEARCH_LIMIT, MAX_SEARCH_LIMIT),
                role=choice(request, "role", MESSAGE_ROLES),
                type=choice(request, "type", INDEXED_TYPES),
                language=request.query_params.get("language") or None,
                session=request.query_params.get("session") or None,
                since=moment(request, "since"),
                until=moment(request, "until", True),
            )
        except (IndexFailure, ValueError) as error:  # ValueError: too many words
            raise BadRequest(str(error)) from None
        # An index given with --index may hold visible reasoning that the server's own, at its policy, would not.
        reasoning_found = index_level(room.reasoning) == "visible"
        return [hit for hit in found_hits if reasoning_found or hit.block_type != "reasoning"]

    def search_page(request: Request) -> Response:
        form = {
            name: request.query_params.get(name, "") for name in ("q", "role", "type", "language", "since", "until")
        }
        choices = {"role": MESSAGE_ROLES, "type": INDEXED_TYPES}
        catalogue.current()
        if not form["q"].strip():
            return html(pages.search_page(room, None, form, choices, None))
        try:
            return html(pages.search_page(room, hits(request), form, choices, None))
        except BadRequest as error:
            return html(pages.search_page(room, None, form, choices, str(error)), 400)

    def search_api(request: Request) -> Response:
        if not request.query_params.get("q", "").strip():
            raise BadRequest("q (the words to search for) is required")
        catalogue.current()
        return as_json([hit.to_json() for hit in hits(request)])

    def static(name: str, media_type: str) -> Callable[[Request], Response]:
        return lambda request: Response(statics[name], media_type=media_type, headers={"cache-control": "no-cache"})

    routes = [
        # The list is open to a link from anywhere; filtered, it answers whether a title holds
        # a word, which another site could learn by timing it (as a search), so it is the room's.
        Route("/", handled(sessions_list, own=lambda request: bool(request.query_params))),
        Route("/s/{rest:path}", handled(session_path)),
        Route("/session", handled(session_query)),
        Route("/search", handled(search_page)),
        Route("/api/sessions", handled(sessions_api)),
        Route("/api/search", handled(search_api)),
        Route("/api/copy", handled(copy)),
        Route(pages.SCRIPT, static("copy.js", "text/javascript; charset=utf-8")),
        Route(pages.STYLESHEET, static("serve.css", "text/css; charset=utf-8")),
    ]
    middleware = [  # the Guard outermost: a refused Host gets the headers too
        Middleware(Guard, csp=csp),
        Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts), www_redirect=False),
    ]
    return Starlette(routes=routes, middleware=middleware)
