"""A reading room over sessions in a folder: through Starlette's test client
(in process) or as a real ``vis-export serve`` process on a free port."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from vis_export.serve.app import create_app
from vis_export.serve.renders import Renders
from vis_export.serve.server import LOCAL_NAMES, prepare

BASE = "http://127.0.0.1:8765"


def write_session(folder: Path, document: Any, name: str | None = None) -> Path:
    """A session (or an array of sessions) as a JSON file in ``folder``."""
    path = folder / f"{name or 'session'}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@contextmanager
def room(
    sources: Sequence[Path], reasoning: str = "visible", index: Any = "keep", renders: Renders | None = None
) -> Iterator[Any]:
    """A test client of the app over ``sources``; ``index="keep"``: serve's own
    index (built now, kept current on every request), else the one given;
    ``renders``: the bounds of downloads (else the server's)."""
    from starlette.testclient import TestClient

    problems: list[str] = []

    def report(results: list[Any]) -> list[Any]:
        problems.extend(str(p) for r in results for p in r.problems)
        return [r.session for r in results if r.session is not None]

    catalogue, keeper = prepare(
        [str(s) for s in sources],
        None if index == "keep" else index,
        reasoning,
        report,
        problems.append,  # type: ignore[arg-type]
    )
    catalogue.check_every = 0  # every request looks for changed sources
    catalogue.refresh()
    location = keeper.directory if keeper is not None else index
    app = create_app(catalogue, location, reasoning, LOCAL_NAMES, renders=renders)  # type: ignore[arg-type]
    try:
        with TestClient(_decoded_once(app), base_url=BASE) as client:
            client.problems = problems
            yield client
    finally:
        catalogue.close()


def _decoded_once(app: Any) -> Any:
    """The path decoded once from the bytes sent, as uvicorn does: Starlette's
    test client decodes it twice, so an id holding ``%2F`` would arrive as ``/``."""

    async def shim(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "path": unquote(scope["raw_path"].decode("ascii"))}
        await app(scope, receive, send)

    return shim


@contextmanager
def served(sources: Sequence[Path], *options: str) -> Iterator[str]:
    """A real ``vis-export serve`` process on a free port of 127.0.0.1; its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "vis_export", "serve", *map(str, sources), "--port", "0", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stderr is not None
        seen = []
        for line in process.stderr:
            seen.append(line)
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            if found:
                yield found.group(1)
                break
        else:
            raise AssertionError("vis-export serve did not start: " + "".join(seen))
    finally:
        process.terminate()
        process.communicate(timeout=30)  # and closes the pipe
