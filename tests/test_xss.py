"""An XSS corpus in every string field of a session: inert in the HTML structure,
in a real headless Chromium (no script runs, no dialog, no request), and in the
PDF renderer (no request, no file read)."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from htmldom import classes, elements, parse, text_content
from test_rules_html import assert_inert

from vis_export.formats.html import to_html
from vis_export.formats.tool_inputs import tool_summary
from vis_export.sources.messages import session_document

pytestmark = pytest.mark.slow  # a real browser or renderer

CORPUS = [
    "<script>fetch('{beacon}/script')</script>",
    "<SCRIPT SRC={beacon}/src.js></SCRIPT>",
    "<img src=x onerror=\"fetch('{beacon}/onerror')\">",
    "<svg onload=\"fetch('{beacon}/svg')\"><script>fetch('{beacon}/svg2')</script></svg>",
    '<iframe src="{beacon}/iframe"></iframe><iframe srcdoc="<script>fetch(\'{beacon}/srcdoc\')</script>">',
    '<object data="{beacon}/object"></object><embed src="{beacon}/embed">',
    '<link rel=stylesheet href="{beacon}/link.css"><style>@import url({beacon}/import.css);</style>',
    '<div style="background:url({beacon}/style)">styled</div>',
    '<meta http-equiv=refresh content="0;url={beacon}/refresh"><base href="{beacon}/base/">',
    '<form action="{beacon}/form"><button formaction="{beacon}/b">go</button></form>',
    '<a href="javascript:fetch(\'{beacon}/js\')">js</a> <a href="JaVaScRiPt:fetch(1)">J</a>',
    '<a href="&#106;avascript:alert(1)">entity</a> <a href="java\tscript:alert(1)">tab</a>',
    "[md link](javascript:alert(1)) [md upper](JAVASCRIPT:alert(1)) [md vb](vbscript:msgbox(1))",
    "[enc](javas&#99;ript:alert(1)) [pct](%6Aavascript:alert(1)) [data](data:text/html;base64,PHNjcmlwdD4=)",
    "![remote image]({beacon}/md-image.png) ![svg](data:image/svg+xml;base64,PHN2Zz4=)",
    '![file](file:///etc/passwd) <img src="file:///etc/passwd">',
    "<math><mtext><table><mglyph><style><img src=x onerror=fetch('{beacon}/mxss')>",
    "{{ 7*7 }} {% raw %}{{ config }}{% endraw %} ${{7*7}} #{7*7} <%= 7*7 %>",
    '" onmouseover="fetch(\'{beacon}/attr\')" x="',
    "</code></pre><script>fetch('{beacon}/break')</script>",
    "<!--<script>fetch('{beacon}/comment')</script>-->",
    "<body onload=\"fetch('{beacon}/body')\"><details open ontoggle=\"fetch('{beacon}/toggle')\">",
    "<video src=x onerror=fetch('{beacon}/video')></video><audio src={beacon}/audio autoplay></audio>",
    '<a href="{beacon}/plain-link" ping="{beacon}/ping">a plain link is fine if not followed</a>',
    "www.example.com http://{host}/autolink <{beacon}/angle>",
    "\u2069\u202e<b>overridden</b> \u2067isolated",  # a label closing its <bdi>, then reordering what follows
]


def hostile(beacon: str) -> str:
    host = beacon.split("//")[1]
    return "\n\n".join(p.replace("{beacon}", beacon).replace("{host}", host) for p in CORPUS)


def document(beacon: str) -> dict[str, Any]:
    evil = hostile(beacon)
    one_line = evil.replace("\n", " ")
    breakout = next(line for line in evil.splitlines() if line.startswith('" on'))
    return {
        "id": "xss",
        "title": one_line,
        "created_at": 1740000000000,
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "status": "completed",
                "created_at": 1740000000000,
                "author": {"display_name": one_line},
                "content": [
                    {"id": "p", "type": "prose", "markdown": evil},
                    {
                        "id": "a",
                        "type": "attachment",
                        "attachment_id": "../../etc/passwd",
                        "name": one_line,
                        "media_type": "image/svg+xml",
                    },
                    {
                        "id": "a2",
                        "type": "attachment",
                        "attachment_id": "att",
                        "name": one_line,
                        "media_type": one_line,
                    },
                ],
            },
            {
                "id": "m2",
                "role": "assistant",
                "status": "failed",
                "created_at": 1740000000001,
                "model": one_line,
                "provider": one_line,
                "content": [
                    {"id": "r", "type": "reasoning", "text": evil, "visibility": "visible"},
                    {"id": "c", "type": "code", "text": evil, "language": one_line},
                    {"id": "c2", "type": "code", "text": evil, "language": "html"},
                    {
                        "id": "t",
                        "type": "tool",
                        "tool": one_line,
                        "status": "failed",
                        "input": {"html": evil, "nested": [{"deep": evil}]},
                        "output": evil,
                        "error": {"message": evil},
                    },
                    # What a call did, in its heading (the text and a title attribute).
                    {"id": "t2", "type": "tool", "tool": "Bash", "status": "completed", "input": {"command": evil}},
                    {"id": "t3", "type": "tool", "tool": "Read", "status": "failed", "input": {"path": breakout}},
                    {"id": "t4", "type": "tool", "tool": "WebFetch", "status": "completed", "input": {"url": one_line}},
                    {"id": "e", "type": "error", "code": "x", "message": evil},
                    {"id": "n", "type": "notice", "code": "y", "message": evil},
                    {"id": "s", "type": "speech", "text": evil},
                    {"id": "u", "type": one_line[:200], "field": evil, "nested_field": {"inner": evil}},
                ],
            },
        ],
    }


def session_for(beacon: str):
    result = session_document(document(beacon), "xss.json", "xss")
    assert result.ok, result.problems
    return result.session


@pytest.fixture
def beacon() -> Iterator[tuple[str, list[str]]]:
    """A server on the loopback address that records every request it gets."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_corpus_is_inert_in_the_structure(beacon: tuple[str, list[str]]) -> None:
    url, _ = beacon
    for options in ({}, {"no_highlight": True}, {"theme": "dark", "timestamps": True}):
        html = to_html(session_for(url), **options)
        assert_inert(html)
        dom = parse(html)
        assert "{{ 7*7 }}" in text_content(dom) and "<script>" in text_content(dom)
        said = [(e.get("title"), text_content(e)) for e in elements(dom, "bdi") if "tool-summary" in classes(e)]
        evil = hostile(url)
        breakout = f'" onmouseover="fetch(\'{url}/attr\')" x="'
        fetched = tool_summary("WebFetch", {"url": evil.replace("\n", " ")})
        assert said == [(evil.split("\n")[0] + " …",) * 2, (breakout,) * 2, (fetched,) * 2]  # as text, whole
        labels = [text_content(e) for e in elements(dom, "bdi")]  # title, author, model, names: each isolated
        assert sum("overridden" in label for label in labels) >= 6
        assert not [label for label in labels if {"\u2069", "\u202e", "\u2067"} & set(label)]
        assert not [a for a in elements(dom, "a") if (a.get("href") or "").startswith(url) and a.get("ping")]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(chromium() is None and not os.environ.get("CI"), reason="chromium is not installed here")
def test_corpus_is_inert_in_a_real_chromium(beacon: tuple[str, list[str]], tmp_path: Path) -> None:
    url, hits = beacon
    page = tmp_path / "xss.html"
    html = to_html(session_for(url), timestamps=True)
    # A control beside the page: a script Chromium is allowed to run must reach
    # the beacon, or the test could pass with scripts disabled.
    control = tmp_path / "control.html"
    control.write_text(f"<script>fetch('{url}/control')</script>")
    page.write_text(html, encoding="utf-8")
    browser = chromium()
    assert browser is not None, "chromium is required in CI (.ci/run installs it)"
    for target in (control, page):
        with tempfile.TemporaryDirectory() as profile:
            result = subprocess.run(
                [
                    browser,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    f"--user-data-dir={profile}",
                    "--virtual-time-budget=3000",
                    "--dump-dom",
                    target.as_uri(),
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert result.returncode == 0, result.stderr[-2000:]
        if target is control:
            assert hits == ["/control"], "Chromium ran no script at all: the test would prove nothing"
            hits.clear()
        else:
            dumped = result.stdout
    assert hits == [], f"the page made requests: {hits}"
    assert "<script" not in dumped.lower().replace("&lt;script", "")
    assert json.dumps("PRIVATE") not in dumped


def test_pdf_loads_nothing(beacon: tuple[str, list[str]]) -> None:
    from vis_export.formats.pdf import to_pdf

    url, hits = beacon
    pdf = to_pdf(session_for(url))
    assert pdf.startswith(b"%PDF")
    assert hits == []
