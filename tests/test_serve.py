"""`vis-export serve` through Starlette's test client: pages, API, downloads,
copy flavours, the policy, keeping current, and the guards (docs/serve.md).
The real server and a real browser are in test_serve_browser.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from htmldom import elements, parse, text_content
from hypothesis import given, strategies as st
from servedroom import room, write_session
from sessions import session_of
from strategies import PRIVATE_CANARY, session_documents, small_blocks
from test_rules_html import ACTIVE_TAGS, assert_inert, assert_inert_attributes
from timelimit import time_limit

from vis_export.cli import main
from vis_export.copying import clipboard
from vis_export.formats import FORMATS, get_format
from vis_export.formats.anchors import Anchors, anchor
from vis_export.formats.options import ExportOptions
from vis_export.model import CodeBlock
from vis_export.policy import is_private
from vis_export.searchindex import search
from vis_export.serve.pages import Room, anchored_part, session_page
from vis_export.serve.renders import Renders
from vis_export.sources import load

pytest.importorskip("starlette")
GOLDEN = Path(__file__).parent.parent / "golden" / "input"
# The golden session's code block a1b5, which has what a copy most easily loses.
CODE = json.loads((GOLDEN / "session.json").read_text())["messages"][1]["content"][4]["text"]
assert "\t" in CODE and "\r" in CODE and "   \n" in CODE


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("golden")
    for path in GOLDEN.iterdir():
        shutil.copy(path, folder / path.name)
    with room([folder]) as client:
        client.folder = folder
        yield client


def sessions_json(folder: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["sessions", "--json", str(folder)])
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_sessions_api_is_sessions_json_and_the_page_lists_newest_first(golden: Any) -> None:
    rows = golden.get("/api/sessions").json()
    expected = sessions_json(golden.folder)
    assert sorted(rows, key=lambda r: r["id"]) == sorted(expected, key=lambda r: r["id"])
    assert [r["last_at"] for r in rows] == sorted((r["last_at"] for r in expected), reverse=True)
    page = parse(golden.get("/").text)
    links = [a.get("href") for table in elements(page, "table") for a in elements(table, "a")]
    assert links == [f"/s/{quote(r['id'], safe='')}" for r in rows]


def test_sessions_filter_by_title_and_date_and_paginate(golden: Any) -> None:
    everything = golden.get("/api/sessions").json()
    assert [r["id"] for r in golden.get("/api/sessions?title=CONFIG").json()] == ["golden_session"]
    one_by_one = [golden.get(f"/api/sessions?per_page=1&page={n}").json() for n in range(1, len(everything) + 2)]
    assert [rows[0]["id"] for rows in one_by_one[:-1]] == [r["id"] for r in everything] and one_by_one[-1] == []
    day = "2026-08-10"  # the Lonis session's day only
    on_day = golden.get(f"/api/sessions?since={day}&until={day}").json()
    assert on_day and all(r["first_at"] <= 1786406399999 and r["last_at"] >= 1786320000000 for r in on_day)
    titled = golden.get("/api/sessions?sort=title").json()
    assert len(titled) == len(everything)
    html = golden.get("/?per_page=2").text
    assert 'rel="next" href="/?page=2"' in html.replace("&amp;", "&") or "page=2" in html
    for bad in ("page=0", "page=x", "per_page=100000", "sort=evil", "since=yesterday"):
        answer = golden.get(f"/api/sessions?{bad}")
        assert answer.status_code == 400 and answer.json()["error"], bad


def test_session_page_is_the_projector_document_with_an_anchor_on_every_message_and_block(golden: Any) -> None:
    session = next(s for s in load(GOLDEN / "session.json"))
    answer = golden.get("/s/golden_session")
    assert answer.status_code == 200
    dom = parse(answer.text)
    ids = {e.get("id") for e in elements(dom) if e.get("id")}
    visible = [b for m in session.messages for b in m.blocks if not is_private(b)]
    assert {anchor("m", m.id) for m in session.messages} <= ids
    assert {anchor("b", b.id) for b in visible} <= ids and anchor("b", "a1b1") not in ids  # private reasoning
    assert PRIVATE_CANARY not in answer.text
    scripts = list(elements(dom, "script"))
    assert [(s.get("src"), text_content(s)) for s in scripts] == [("/static/copy.js", "")]
    meta = next(m for m in elements(dom, "meta") if m.get("http-equiv"))
    # A <meta> ignores frame-ancestors (and says so in the console): only the header has it.
    assert answer.headers["content-security-policy"] == meta.get("content") + "; frame-ancestors 'none'"
    assert "frame-ancestors" not in meta.get("content")
    assert "script-src 'self';" in meta.get("content") and "unsafe-inline" not in meta.get("content")
    script = golden.get("/static/copy.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert golden.head("/s/golden_session").status_code == 200


def test_served_code_fenced_in_prose_is_highlighted_as_a_code_block(golden: Any) -> None:
    dom = parse(golden.get("/s/golden_session").text)
    prose = [div for div in elements(dom, "div") if "prose" in (div.get("class") or "")]
    prose_code = [code for div in prose for code in elements(div, "code")]
    fenced = next(c for c in prose_code if "swallow everything" in text_content(c))
    assert text_content(fenced) == "print('swallow everything after me')\n"
    assert [(s.get("class"), s.text) for s in elements(fenced, "span")] == [
        ("nb", "print"),
        ("s", "'swallow everything after me'"),
    ]


def test_downloads_in_every_format_are_the_exports(golden: Any) -> None:
    session = next(s for s in load(GOLDEN / "session.json"))
    page = parse(golden.get("/s/golden_session").text)
    links = [
        a.get("href")
        for nav in elements(page, "nav")
        if nav.get("class") == "room-downloads"
        for a in elements(nav, "a")
    ]
    for name in FORMATS:
        made = get_format(name)
        url = f"/s/golden_session.{made.extension}"
        assert url in links
        answer = golden.get(url)
        assert answer.status_code == 200 and "attachment" in answer.headers["content-disposition"]
        text = made.media_type is not None and made.media_type.startswith("text/")
        assert answer.headers["content-type"] == f"{made.media_type}{'; charset=utf-8' if text else ''}"
        if made.binary:
            assert answer.content.startswith(b"%PDF")
        else:
            assert answer.text == made.render(session, ExportOptions())
        assert PRIVATE_CANARY.encode() not in answer.content


def test_copy_flavours_come_from_the_clipboard_and_a_code_block_copies_exactly_its_code(golden: Any) -> None:
    code = golden.get(f"/api/copy?session=golden_session&anchor={anchor('b', 'a1b5')}").json()
    assert code["text/plain"] == CODE
    html = parse(code["text/html"])
    assert text_content(next(elements(html, "code"))) == CODE
    assert all(e.get("class") is None for e in elements(html, "span")) and any(
        "color:#" in (e.get("style") or "") for e in elements(html, "span")
    )  # highlighting carried inline, for a paste into a document or a chat
    message = golden.get(f"/api/copy?session=golden_session&anchor={anchor('m', 'msg_asst_1')}").json()
    assert set(message) == {"text/plain", "text/markdown", "text/html"}
    assert "```python" in message["text/markdown"] and PRIVATE_CANARY not in json.dumps(message)
    for missing in ("session=nope&anchor=m-x", f"session=golden_session&anchor={anchor('b', 'a1b1')}", ""):
        assert golden.get(f"/api/copy?{missing}").status_code == 404


def test_search_api_has_the_keys_of_search_json_and_hits_land_on_their_block(golden: Any, tmp_path: Path) -> None:
    answer = golden.get("/api/search?q=parse_config")
    hits = answer.json()
    assert hits
    cli = CliRunner().invoke(
        main, ["index", str(golden.folder), "--index", str(tmp_path / "idx"), "--reasoning", "visible"]
    )
    assert cli.exit_code == 0, cli.output
    assert hits == [h.to_json() for h in search("parse_config", tmp_path / "idx", limit=20)]
    page = parse(golden.get("/search?q=parse_config").text)
    links = [a.get("href") for a in elements(page, "a") if "room-hit-link" in (a.get("class") or "")]
    assert links == [f"/s/{quote(h['session_id'], safe='')}#{anchor('b', h['block_id'])}" for h in hits]
    for link in links:
        path, fragment = link.split("#")
        assert f'id="{fragment}"' in golden.get(path).text
    assert golden.get("/api/search?q=parse_config&type=code&language=python").json()[0]["block_id"] == "a1b5"
    assert golden.get("/api/search?q=PRIVATE").json() == []
    for bad in ("q=", "q=x&role=god", "q=x&type=script", "q=x&limit=0", "q=" + "+w" * 70):
        assert golden.get(f"/api/search?{bad}").status_code == 400, bad
    assert golden.get("/search?q=x&since=soon").status_code == 400


def test_guards_foreign_host_methods_and_paths(golden: Any) -> None:
    for host in ("evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "localhost.", "", "127.1"):
        refused = golden.get("/", headers={"host": host})
        assert refused.status_code == 400 and "default-src 'none'" in refused.headers["content-security-policy"]
    refused = golden.get("/", headers={"host": "evil.example", "x-forwarded-host": "localhost"})
    assert refused.status_code == 400
    for host in ("localhost:8765", "127.0.0.1:1234", "localhost"):
        assert golden.get("/", headers={"host": host}).status_code == 200
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        answer = golden.request(method, "/s/golden_session")
        assert answer.status_code == 405 and answer.headers["allow"] == "GET, HEAD"
    secret = golden.folder / "session.json"
    for path in (
        "/s/..%2F..%2F..%2Fetc%2Fpasswd",
        "/s/%2Fetc%2Fpasswd",
        f"/s/{quote(str(secret), safe='')}",
        "/s/session.json",
        "/static/..%2F..%2Fcli.py",
        "/static/app.py",
        "/session?id=../session.json",
    ):
        answer = golden.get(path)
        assert answer.status_code == 404 and "parse_config" not in answer.text, path
    for answer in (golden.get("/"), golden.get("/api/sessions"), golden.get("/nowhere")):
        assert "default-src 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"


@given(
    name=st.sampled_from(["/api/sessions?page", "/?per_page", "/api/search?q=config&limit"]),
    value=st.one_of(st.text(max_size=12), st.sampled_from(["\u00b2", "\u0663", "\uff11", "9" * 5000, "-1", " 1"])),
)
def test_a_number_of_any_text_is_read_or_refused_with_a_400(golden: Any, name: str, value: str) -> None:
    """Unicode digits ("²" passes ``str.isdigit``) and digits past Python's
    conversion limit are refused like any other bad number, never a 500."""
    answer = golden.get(f"{name}={quote(value, safe='')}")
    fine = value == "" or value.isascii() and value.isdigit() and len(value) < 9 and 1 <= int(value) <= 200
    expected = {200} if fine else {400}
    assert answer.status_code in expected, (value, answer.text[:200])


def test_the_policy_is_fixed_at_start_and_all_says_so_on_every_page(tmp_path: Path) -> None:
    shutil.copy(GOLDEN / "session.json", tmp_path / "session.json")
    private = f"anchor={anchor('b', 'a1b1')}"
    with room([tmp_path], reasoning="visible") as visible:
        for url in (
            "/s/golden_session?reasoning=all",
            "/s/golden_session.md?reasoning=all",
            "/search?q=user&reasoning=all",
        ):
            assert PRIVATE_CANARY not in visible.get(url).text
        assert visible.get(f"/api/copy?session=golden_session&{private}&reasoning=all").status_code == 404
        assert "Private reasoning is shown" not in visible.get("/").text
    with room([tmp_path], reasoning="none") as none:
        page = none.get("/s/golden_session").text
        assert "parse_config` first" not in page and "Read the file" not in page
        assert none.get("/api/search?q=parse_config&type=reasoning").json() == []
    with room([tmp_path], reasoning="all") as shown:
        for url in ("/", "/s/golden_session", "/search?q=parse", "/search", "/nowhere-session"):
            assert "Private reasoning is shown" in shown.get(url.replace("/nowhere", "/s/nowhere")).text, url
        assert PRIVATE_CANARY in shown.get("/s/golden_session").text
        assert PRIVATE_CANARY in shown.get(f"/api/copy?session=golden_session&{private}").json()["text/plain"]
        assert shown.get("/api/search?q=PRIVATE").json() == []  # never indexed, whatever the policy


def test_a_changed_source_shows_its_new_content_on_the_next_request(tmp_path: Path) -> None:
    document = json.loads((GOLDEN / "session.json").read_text())
    path = write_session(tmp_path, document)
    with room([tmp_path]) as client:
        assert client.get("/api/search?q=zanzibar").json() == []
        document["messages"][0]["content"][0]["markdown"] = "Now about zanzibar."
        document["title"] = "Renamed"
        path.write_text(json.dumps(document) + "\n", encoding="utf-8")
        assert "zanzibar" in client.get("/s/golden_session").text
        assert [h["block_id"] for h in client.get("/api/search?q=zanzibar").json()] == ["u1b1"]
        assert client.get("/api/sessions").json()[0]["title"] == "Renamed"
        write_session(tmp_path, {**document, "id": "second"}, "second")
        assert {r["id"] for r in client.get("/api/sessions").json()} == {"golden_session", "second"}
        path.unlink()
        assert client.get("/s/golden_session").status_code == 404
        assert [h["session_id"] for h in client.get("/api/search?q=zanzibar").json()] == ["second"]
        pair = write_session(tmp_path, [{**document, "id": "one"}, {**document, "id": "two"}], "pair")
        assert {h["session_id"] for h in client.get("/api/search?q=zanzibar").json()} == {"one", "two", "second"}
        pair.write_text(json.dumps([{**document, "id": "two", "title": "Only two"}]), encoding="utf-8")
        assert "Only two" in client.get("/s/two").text  # its page sees the change first: "one" left the file
        assert client.get("/s/one").status_code == 404
        assert {h["session_id"] for h in client.get("/api/search?q=zanzibar").json()} == {"two", "second"}


def test_a_source_rewritten_at_the_same_size_within_a_clock_tick_shows_its_new_content(tmp_path: Path) -> None:
    """Size and time stay as they were (a rewrite within one tick of the file
    system's clock): a file changed a moment ago is read again at each look."""
    document = json.loads((GOLDEN / "session.json").read_text())
    path = write_session(tmp_path, document)
    with room([tmp_path]) as client:
        assert "Parse the config" in client.get("/s/golden_session").text
        before = path.stat()
        path.write_text(path.read_text().replace("Parse the config", "Parse the zebra!"), encoding="utf-8")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size
        assert "Parse the zebra!" in client.get("/s/golden_session").text
        assert [h["block_id"] for h in client.get("/api/search?q=zebra").json()] == ["u1b1"]


def test_a_given_index_is_searched_and_not_written(golden: Any, tmp_path: Path) -> None:
    index = tmp_path / "idx"
    assert CliRunner().invoke(main, ["index", str(golden.folder), "--index", str(index)]).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in index.rglob("*")}
    with room([golden.folder], index=index) as client:
        assert client.get("/api/search?q=deploy").json()
        assert "parse_config" in client.get("/s/golden_session").text
    assert {p: p.stat().st_mtime_ns for p in index.rglob("*")} == before


def test_ids_of_any_kind_link_to_their_session(tmp_path: Path) -> None:
    odd = ["a/b", "..", ".", "x.md", "x", "50%", "?q#f", "sp ace", "ünï", "%2F", "%"]
    for n, session_id in enumerate(odd):
        write_session(tmp_path, {"id": session_id, "title": f"title {n}", "messages": []}, f"s{n}")
    with room([tmp_path]) as client:
        page = parse(client.get("/?per_page=100").text)
        links = {text_content(a): a.get("href") for table in elements(page, "table") for a in elements(table, "a")}
        for n in range(len(odd)):
            answer = client.get(links[f"title {n}"])
            assert answer.status_code == 200 and f"title {n}" in answer.text, odd[n]
        assert "title 4" in client.get("/s/x").text and "title 3" in client.get(links["title 3"]).text
        assert client.get("/s/x.txt").headers["content-disposition"] == 'attachment; filename="x.txt"'


def test_every_download_link_gives_its_own_session(tmp_path: Path) -> None:
    """``/s/<id>.md`` is the download of session ``<id>`` even when a session
    ``<id>.md`` exists; that one's page is linked where its id cannot be read
    as a download."""
    ids = ["x", "x.md", "x.md.md", "y.json", "z.pdf.txt", "."]
    for n, session_id in enumerate(ids):
        write_session(tmp_path, {"id": session_id, "title": f"title {n}", "messages": []}, f"s{n}")
    with room([tmp_path]) as client:
        page = parse(client.get("/?per_page=100").text)
        links = {text_content(a): a.get("href") for table in elements(page, "table") for a in elements(table, "a")}
        for n, session_id in enumerate(ids):
            own = parse(client.get(links[f"title {n}"]).text)
            assert f"title {n}" in text_content(own), session_id
            hrefs = [a.get("href", "") for a in elements(own, "a")]
            downloads = [href for href in hrefs if href.startswith(("/s/", "/session?"))]
            assert len(downloads) >= 5
            for link in downloads:
                answer = client.get(link)
                assert answer.headers.get("content-disposition", "").startswith("attachment"), (session_id, link)
                if "json" in answer.headers["content-type"] and link.endswith("json"):
                    assert answer.json()["id"] == session_id, link


@given(st.lists(st.text(min_size=1, max_size=8), max_size=12))
def test_anchors_are_unique_and_safe_and_a_link_names_the_first(ids: list[str]) -> None:
    anchors = Anchors()
    taken = [anchors.take("b", i) for i in ids]
    assert len(set(taken)) == len(taken)
    assert all(re.fullmatch(r"b-[A-Za-z0-9_.~-]*", a) for a in taken)
    for i in set(ids):
        assert taken[ids.index(i)] == anchor("b", i)


@given(session_documents(small_blocks), st.sampled_from(["none", "visible", "all"]))
def test_every_anchor_of_a_page_copies_its_own_part(document: dict[str, Any], reasoning: str) -> None:
    session = session_of(document)
    served = Room(reasoning, [])
    dom = parse(session_page(served, session))
    frames = [e.get("id") for e in elements(dom) if e.get("id", "").startswith(("m-", "b-"))]
    first = {}
    for message in session.messages:
        first.setdefault(anchor("m", message.id), message)
        for block in message.blocks:
            first.setdefault(anchor("b", block.id), block)
    for made in frames:
        part = anchored_part(served, session, made)
        assert part is not None
        if made in first and made == anchor(made[0], first[made].id):
            assert part.id == first[made].id
        copied = clipboard(part, reasoning=reasoning)
        if isinstance(part, CodeBlock):
            assert copied["text/plain"] == part.text  # R1
        if reasoning != "all":
            assert PRIVATE_CANARY not in json.dumps(copied)  # R2: what a copy button gives too
    if reasoning != "all":
        assert PRIVATE_CANARY not in text_content(dom)


def hostile_document(beacon: str) -> dict[str, Any]:
    """The XSS corpus (test_xss.py) in every field, ids included."""
    from test_xss import document

    made = document(beacon)
    evil = made["title"]
    made["id"] = evil
    for m, message in enumerate(made["messages"]):
        message["id"] = f"{evil}{m}"
        for b, block in enumerate(message["content"]):
            block["id"] = f"{evil}{m}.{b}"
    return made


def assert_served_inert(html: str) -> None:
    """Nothing on a served page can run, load or navigate but the room's own
    script, stylesheet and forms (the structure; test_serve_browser.py runs it)."""
    dom = parse(html)
    for element in elements(dom):
        tag = element.tag.split("}")[-1]
        attributes = dict(element.attrib)
        if tag == "script":
            assert attributes == {"src": "/static/copy.js", "defer": ""} and not text_content(element)
            continue
        if tag == "link":
            assert attributes == {"rel": "stylesheet", "href": "/static/serve.css"}
            continue
        if tag == "form":
            assert attributes.get("action") in ("/", "/search") and attributes.get("method") == "get"
            continue
        if tag in ("button", "select"):  # the forms' own controls
            assert attributes in ({"type": "submit"}, {"name": "sort"}, {"name": "role"}, {"name": "type"}), attributes
            continue
        if tag == "input":
            assert attributes.get("type") in ("search", "text", "date") or (
                attributes.get("type") == "checkbox" and "disabled" in attributes
            )
            attributes.pop("type")
        assert tag not in ACTIVE_TAGS, tag
        assert_inert_attributes(tag, attributes)
        if tag == "a" and not attributes.get("href", "#").startswith("#"):  # the room's own links, or the data's
            assert attributes["href"].startswith(("/", "http:", "https:", "mailto:")), attributes["href"]


def test_the_xss_corpus_in_every_field_is_inert_on_every_page(tmp_path: Path) -> None:
    document = hostile_document("http://127.0.0.1:9")
    write_session(tmp_path, document)
    evil = document["id"]
    with room([tmp_path], reasoning="all") as client:
        session_url, missing = "/s/" + quote(evil, safe=""), "/s/" + quote(evil + "x", safe="")
        pages = [
            "/",
            "/?title=" + quote(evil),
            session_url,
            session_url + ".html",
            missing,
            "/search?q=script",
            "/search?q=fetch+onerror&type=code",
            "/search?q=" + quote(evil[:200]) + "&language=" + quote(evil[:50]),
        ]
        for page in pages:
            answer = client.get(page)
            assert answer.status_code == (404 if page == missing else 200), page
            assert answer.headers["content-type"].startswith("text/html"), page
            assert_served_inert(answer.text) if not page.endswith(".html") else assert_inert(answer.text)
        hits = client.get("/api/search?q=script").json()
        assert hits and all("<script" not in h["snippet_html"] for h in hits)
        for anchor_id in re.findall(r'id="([mb]-[^"]+)"', client.get(session_url).text):
            assert client.get("/api/copy", params={"session": evil, "anchor": anchor_id}).status_code == 200


def test_a_slow_look_at_the_sources_runs_in_the_background(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vis_export.serve import catalogue

    monkeypatch.setattr(catalogue, "SLOW_WALK", 0.0)  # every walk counts as slow
    write_session(tmp_path, {"id": "first", "messages": []}, "first")
    with room([tmp_path]) as client:
        write_session(tmp_path, {"id": "later", "messages": []}, "later")
        assert [r["id"] for r in client.get("/api/sessions").json()] == ["first"]  # answered from what is known
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(client.get("/api/sessions").json()) < 2:
            time.sleep(0.05)
        assert {r["id"] for r in client.get("/api/sessions").json()} == {"first", "later"}


def test_closing_waits_for_a_look_in_the_background_and_removes_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look in the background still indexing when the server stops failed the
    index's removal ("Directory not empty": it failed a CI run), or would make
    its folder again; a look after the stop does nothing."""
    from vis_export.serve import catalogue as module
    from vis_export.serve.server import prepare

    monkeypatch.setattr(module, "SLOW_WALK", 0.0)  # every look runs in the background
    document = json.loads((GOLDEN / "session.json").read_text())
    write_session(tmp_path, document, "first")
    catalogue, keeper = prepare([str(tmp_path)], None, "visible", lambda results: [r.session for r in results], print)
    assert keeper is not None
    catalogue.refresh()
    for n in range(20):  # changed sources: the next look indexes them, in the background
        write_session(tmp_path, {**document, "id": f"s{n}"}, f"s{n}")
    catalogue.check_every = 0
    catalogue.current()
    assert catalogue.looking is not None
    catalogue.close()
    assert not catalogue.looking.is_alive() and not keeper.directory.parent.exists()
    catalogue.refresh()
    assert not keeper.directory.parent.exists()


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_the_index_serve_keeps_is_removed_however_it_is_stopped(tmp_path: Path, number: int) -> None:
    """Ctrl-C, a kill, or the terminal closing (SIGHUP): no index left in the temporary folder."""
    shutil.copy(GOLDEN / "session.json", tmp_path / "session.json")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "vis_export", "serve", str(tmp_path / "session.json"), "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(temporary)},
    )
    assert process.stderr is not None
    with time_limit(60):
        while "Serving" not in process.stderr.readline():
            assert process.poll() is None, "vis-export serve did not start"
        assert list(temporary.iterdir())  # the index it keeps
        process.send_signal(number)
        process.communicate()
    assert list(temporary.iterdir()) == []


def test_an_unexpected_error_is_a_500_with_the_security_headers() -> None:
    """Starlette answers an uncaught error from outside every middleware; the
    guard answers it first, with the Content-Security-Policy."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from vis_export.serve.app import Guard

    def broken(request: Any) -> Any:
        raise RuntimeError("a bug")

    app = Starlette(routes=[Route("/", broken)], middleware=[Middleware(Guard, csp="default-src 'none'")])
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.get("/")
    assert answer.status_code == 500 and "a bug" not in answer.text
    assert answer.headers["content-security-policy"] == "default-src 'none'"
    assert answer.headers["x-frame-options"] == "DENY"


class Counted(Renders):
    """The server's bounds, with a count around the real render of each
    download: how many run at once (at most; PDFs apart), how many ran; each
    waits for ``gate`` first, so a test can hold renders running."""

    def __init__(self, *arguments: Any, **bounds: Any) -> None:
        super().__init__(*arguments, **bounds)
        self.gate = threading.Event()
        self.gate.set()
        self.count = threading.Lock()
        self.now = self.peak = self.calls = self.pdfs = self.most_pdfs = 0

    def get(self, key: Any, render: Any, heavy: bool = False) -> bytes:
        def counted() -> bytes:
            with self.count:
                self.now += 1
                self.calls += 1
                self.peak = max(self.peak, self.now)
                self.pdfs += heavy
                self.most_pdfs = max(self.most_pdfs, self.pdfs)
            try:
                self.gate.wait(60)
                return render()  # type: ignore[no-any-return]
            finally:
                with self.count:
                    self.now -= 1
                    self.pdfs -= heavy

        return super().get(key, counted, heavy)


def sessions_in(folder: Path, count: int) -> list[str]:
    """``count`` sessions, each in a file last changed a minute ago (a stamp that stays)."""
    document = json.loads((GOLDEN / "session.json").read_text())
    for k in range(count):
        path = write_session(folder, {**document, "id": f"s{k}"}, f"s{k}")
        os.utime(path, (time.time() - 60, time.time() - 60))
    return [f"s{k}" for k in range(count)]


def test_downloads_render_at_most_a_few_at_once_and_the_rest_wait_their_turn_or_come_back(tmp_path: Path) -> None:
    ids = sessions_in(tmp_path, 6)
    renders = Counted(most=2, waiting=2, patience=60)
    renders.gate.clear()
    with room([tmp_path], renders=renders) as client, ThreadPoolExecutor(6) as pool:
        asked = [pool.submit(client.get, f"/s/{i}.{extension}") for i in ids for extension in ("md", "pdf")][:6]
        deadline = time.monotonic() + 30
        while (sum(f.done() for f in asked) < 2 or renders.now < 2) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # (time for one more to end, were the bounds not kept)
        told = [f for f in asked if f.done()]  # beyond the 2 rendering and the 2 waiting: at once
        assert [f.result().status_code for f in told] == [503, 503]
        assert all(f.result().headers["retry-after"] == "10" for f in told)
        assert renders.now == 2 and renders.queued == 2
        renders.gate.set()
        answers = [f.result(timeout=120) for f in asked if f not in told]
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 200]
    assert renders.peak == 2 and renders.most_pdfs == 1 and renders.calls == 4


def test_one_pdf_renders_at_a_time_beside_another_download(tmp_path: Path) -> None:
    ids = sessions_in(tmp_path, 3)
    renders = Counted()  # the server's bounds
    renders.gate.clear()
    with room([tmp_path], renders=renders) as client, ThreadPoolExecutor(3) as pool:
        asked = [pool.submit(client.get, f"/s/{i}.pdf") for i in ids[:2]]
        while renders.now + renders.queued < 2:
            time.sleep(0.01)
        asked.append(pool.submit(client.get, f"/s/{ids[2]}.md"))
        while renders.now < 2:
            time.sleep(0.01)
        assert renders.pdfs == 1 and renders.queued == 1
        renders.gate.set()
        assert [f.result(timeout=120).status_code for f in asked] == [200, 200, 200]
    assert renders.most_pdfs == 1 and renders.calls == 3


def test_a_download_waits_a_bounded_time_for_its_turn(tmp_path: Path) -> None:
    ids = sessions_in(tmp_path, 2)
    renders = Counted(most=1, waiting=5, patience=0.5)
    renders.gate.clear()
    with room([tmp_path], renders=renders) as client, ThreadPoolExecutor(1) as pool:
        held = pool.submit(client.get, f"/s/{ids[0]}.md")
        while renders.now == 0:
            time.sleep(0.01)
        started = time.monotonic()
        assert client.get(f"/s/{ids[1]}.md").status_code == 503
        assert 0.4 < time.monotonic() - started < 10
        renders.gate.set()
        assert held.result(timeout=60).status_code == 200


def test_a_download_is_kept_until_its_source_changes_and_rendered_once_when_asked_at_once(tmp_path: Path) -> None:
    (session_id,) = sessions_in(tmp_path, 1)
    renders = Counted(most=2)
    renders.gate.clear()
    with room([tmp_path], renders=renders) as client, ThreadPoolExecutor(4) as pool:
        asked = [pool.submit(client.get, f"/s/{session_id}.pdf") for _ in range(4)]
        while renders.now == 0:
            time.sleep(0.01)
        time.sleep(0.3)  # the others asked meanwhile, and wait for this render
        renders.gate.set()
        pdfs = {f.result(timeout=120).content for f in asked}
        assert len(pdfs) == 1 and next(iter(pdfs)).startswith(b"%PDF") and renders.calls == 1
        assert client.get(f"/s/{session_id}.pdf").content in pdfs and renders.calls == 1
        markdown = client.get(f"/s/{session_id}.md").text
        assert client.get(f"/s/{session_id}.md").text == markdown and renders.calls == 2
        path = tmp_path / f"{session_id}.json"
        path.write_text(path.read_text().replace("Parse the config", "Parse the zebra!"), encoding="utf-8")
        os.utime(path, (time.time() - 30, time.time() - 30))
        changed = client.get(f"/s/{session_id}.md").text
        assert "Parse the zebra!" in changed and "Parse the zebra!" not in markdown and renders.calls == 3


def test_a_kept_download_is_bounded_in_bytes_oldest_out_first() -> None:
    renders = Renders(budget=400)
    for key in range(5):
        renders.get(key, lambda: b"x" * 100)
    assert list(renders.kept) == [1, 2, 3, 4] and renders.size == 400
    renders.get(1, lambda: b"never")  # kept: used again, so last out
    renders.get(5, lambda: b"y" * 100)
    renders.get(6, lambda: b"z" * 101)  # more than a quarter of the budget: served, not kept
    assert list(renders.kept) == [3, 4, 1, 5] and renders.size == 400


# What a browser says of where a request comes from, and whether a session's page or download is given for it.
SITES = [
    ({"sec-fetch-site": "cross-site"}, 403),
    ({"sec-fetch-site": "same-site"}, 403),  # another port of 127.0.0.1 is another server
    ({"sec-fetch-site": "none", "origin": "null"}, 403),
    ({"origin": "http://evil.example"}, 403),
    ({"origin": "http://127.0.0.1:8766"}, 403),
    ({"sec-fetch-site": "same-origin", "origin": "http://127.0.0.1:8765"}, 200),
    ({"sec-fetch-site": "none"}, 200),  # typed, or a bookmark
    ({}, 200),  # not a browser
    # A browser without Sec-Fetch-Site (Safari before 16.4): the page a link or an image is on.
    ({"referer": "http://evil.example/page"}, 403),
    ({"referer": "http://127.0.0.1:8766/"}, 403),
    ({"referer": "http://127.0.0.1:8765/s/x"}, 200),  # the room's own page, were the referrer policy ignored
    ({"sec-fetch-site": "same-origin", "referer": "http://127.0.0.1:8765/"}, 200),
]


@pytest.mark.parametrize(("headers", "status"), SITES)
def test_a_download_another_site_asks_for_is_refused_unrendered(
    tmp_path: Path, headers: dict[str, str], status: int
) -> None:
    (session_id,) = sessions_in(tmp_path, 1)
    renders = Counted()
    with room([tmp_path], renders=renders) as client:
        for url in (f"/s/{session_id}.pdf", f"/session?id={session_id}&as=md"):
            assert client.get(url, headers=headers).status_code == status
        assert renders.calls == (2 if status == 200 else 0)


@pytest.mark.parametrize(("headers", "status"), SITES)
def test_a_sessions_page_search_or_copy_another_site_asks_for_is_refused(
    tmp_path: Path, headers: dict[str, str], status: int
) -> None:
    """The same policy as downloads for everything that shows what a session holds;
    the list of sessions stays open to a link from anywhere."""
    (session_id,) = sessions_in(tmp_path, 1)
    with room([tmp_path]) as client:
        for url in (
            f"/s/{session_id}",
            f"/session?id={session_id}",
            "/search?q=config",
            "/api/search?q=config",
            f"/api/copy?session={session_id}&anchor={anchor('m', 'msg_asst_1')}",
        ):
            for method in (client.get, client.head):
                answer = method(url, headers=headers)
                assert answer.status_code == status, (url, method, answer.status_code)
        refused = client.get(f"/s/{session_id}", headers=headers)
        assert ("own pages only" in refused.text) == (status == 403)
        assert ("Parse the config" in refused.text) == (status == 200)
        assert client.get("/", headers=headers).status_code == 200
        # A filtered list (a title's words) and the list's API are a search of what sessions hold.
        for url in ("/?title=config", "/?since=2020-01-01", "/api/sessions", "/api/sessions?title=config"):
            assert client.get(url, headers=headers).status_code == status, url
