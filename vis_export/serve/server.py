"""Running the reading room: a socket bound first (so ``--port 0`` works and
the address is known before the first request), then uvicorn on it."""

from __future__ import annotations

import os
import socket
import threading
import webbrowser
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from vis_export.policy import Reasoning
from vis_export.serve.catalogue import Catalogue, Report
from vis_export.serve.keeper import IndexKeeper

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")  # as a Host header writes them


def prepare(
    sources: Sequence[str],
    index: str | os.PathLike[str] | None,
    reasoning: Reasoning,
    report: Report,
    warn: Callable[[str], None],
    redaction: Redaction | None = None,
) -> tuple[Catalogue, IndexKeeper | None]:
    """The catalogue of ``sources``, and the keeper of their index when no
    ``index`` is given; a given one is opened now, so that a missing or
    unreadable index stops the start (``IndexFailure``), not every search."""
    if index is not None:
        from vis_export.searchindex import search

        search("", index, limit=1)
    keeper = IndexKeeper(reasoning, warn, redaction) if index is None else None
    return Catalogue(sources, report, keeper, redaction=redaction), keeper


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def run(
    catalogue: Catalogue,
    index: str | os.PathLike[str] | None,
    reasoning: Reasoning,
    sock: socket.socket,
    open_browser: bool = False,
    redaction: Redaction | None = None,
) -> None:
    """Serve until interrupted. Only the bound address and the loopback names
    are accepted in ``Host``."""
    import uvicorn

    from vis_export.serve.app import create_app

    bound = sock.getsockname()[0]
    hosts = sorted({bound, *LOCAL_NAMES} | ({f"[{bound}]"} if ":" in bound else set()))
    app = create_app(catalogue, index, reasoning, hosts, redaction=redaction)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, server_header=False))
    if open_browser:
        threading.Timer(0.5, webbrowser.open, [url_of(sock)]).start()
    server.run(sockets=[sock])
