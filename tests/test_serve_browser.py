"""`vis-export serve` as a real process, read by a real headless Chromium
(Selenium on Debian's chromium-driver): a search hit lands on its block, a
code block's copy button puts exactly the code on the clipboard, the XSS
corpus in every field runs no script on any page, a foreign Host is refused."""

from __future__ import annotations

import http.client
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import pytest
from browser import browser, console, viewport  # noqa: F401 - the fixture
from servedroom import served, write_session
from test_serve import CODE, GOLDEN, hostile_document
from test_xss import beacon  # noqa: F401 - the fixture

from vis_export.formats.anchors import anchor

pytestmark = pytest.mark.slow  # a real server and a real browser
pytest.importorskip("starlette")


def wait_for(condition: Callable[[], Any], seconds: float = 10) -> Any:
    end = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > end:
            return value
        time.sleep(0.05)


@pytest.fixture(scope="module")
def golden_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("golden")
    shutil.copy(GOLDEN / "session.json", folder / "session.json")
    write_session(folder, {"id": "%2F", "title": "slash", "messages": []}, "odd")
    code = {"id": "c", "type": "code", "language": "c", "text": "\tint x;  \r\n"}
    prose = {"id": "p", "type": "prose", "markdown": "Run:\n\n```sh\nmake\t-j2  \n```\n"}
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 0, "content": [code, prose]}
    write_session(folder, {"id": "..", "title": "dots", "messages": [message]}, "dots")
    with served([folder]) as url:
        yield url


# Blocks whose first line runs the full width: where a button over the block's
# corner would cover words. CJK prose breaks anywhere, so its lines are full.
CJK = "日本語の文章は単語の間に空白がないので、行はどこでも折り返され、右端まで文字で埋まります。" * 6
FULL = "A first line that runs the whole width of the column before it wraps, " * 8
LAYOUT_BLOCKS = [
    {"id": "cjk", "type": "prose", "markdown": CJK + "\n\n" + CJK},
    {"id": "full", "type": "prose", "markdown": FULL},
    {"id": "word", "type": "prose", "markdown": "W" * 400},
    {"id": "heading", "type": "prose", "markdown": "# " + FULL + "\n\n" + CJK},
    {"id": "list", "type": "prose", "markdown": f"- {CJK}\n- {FULL}\n\n```python\n{'x = 1; ' * 40}\n```\n\n{CJK}"},
    {"id": "quote", "type": "prose", "markdown": f"> {FULL}\n\n| a | b |\n|---|---|\n| {CJK} | {FULL} |"},
    {"id": "code", "type": "code", "language": "python", "text": "print('" + "wide " * 60 + "')\n" + CJK + "\n"},
    {"id": "bare", "type": "code", "text": CJK + "\n"},
    {"id": "tool", "type": "tool", "tool": "run", "status": "completed", "input": {"q": CJK}, "output": FULL},
    {"id": "reason", "type": "reasoning", "text": CJK, "visibility": "visible"},
    {"id": "error", "type": "error", "code": "e", "message": CJK, "retryable": False},
    {"id": "notice", "type": "notice", "code": "n", "message": FULL},
    {"id": "speech", "type": "speech", "text": CJK},
]
LAYOUT = {
    "id": "layout",
    "title": CJK,
    "messages": [
        {"id": f"m{n}", "role": role, "status": "completed", "created_at": 0, "content": LAYOUT_BLOCKS}
        for n, role in enumerate(("user", "assistant"))
    ],
}


@pytest.fixture(scope="module")
def layout_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("layout")
    write_session(folder, LAYOUT)
    with served([folder]) as url:
        yield url


# Every word on the page (a Range over each text node gives its lines' boxes) and
# every other button that a copy button's box overlaps, and every button that
# leaves the viewport's width.
COVERED = """
const buttons = [...document.querySelectorAll(".copy-button")];
const boxes = buttons.map((b) => b.getBoundingClientRect());
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const covered = [];
for (let node; (node = walker.nextNode()); ) {
  if (!node.data.trim() || node.parentElement.closest(".copy-button")) continue;
  const range = document.createRange();
  range.selectNodeContents(node);
  for (const line of range.getClientRects()) {
    boxes.forEach((box, i) => {
      if (line.left < box.right && box.left < line.right && line.top < box.bottom && box.top < line.bottom)
        covered.push([buttons[i].textContent, buttons[i].closest("[id]").id, node.data.slice(0, 30)]);
    });
  }
}
boxes.forEach((box, i) => boxes.slice(i + 1).forEach((other, j) => {
  if (box.left < other.right && other.left < box.right && box.top < other.bottom && other.top < box.bottom)
    covered.push([buttons[i].textContent, buttons[i].closest("[id]").id, buttons[i + 1 + j].textContent]);
}));
const outside = boxes.filter((box) => box.left < 0 || box.right > innerWidth).length;
return [buttons.length, boxes.filter((box) => box.width && box.height).length, covered, outside];
"""


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (375, 812)])
def test_copy_buttons_cover_no_words_on_a_desktop_or_a_phone(
    browser: Any,  # noqa: F811
    layout_server: str,
    width: int,
    height: int,
) -> None:
    from selenium.webdriver.common.by import By

    viewport(browser, width, height)
    try:
        browser.get(layout_server + "s/layout")
        assert wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".copy-button"))
        for closed in browser.find_elements(By.CSS_SELECTOR, "details:not([open]) > summary"):
            browser.execute_script("arguments[0].parentElement.open = true", closed)
        made, shown, covered, outside = browser.execute_script(COVERED)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert made == shown > 2 * len(LAYOUT_BLOCKS)  # every block's buttons, all laid out
    assert covered == []
    assert outside == 0


def test_search_then_click_a_hit_lands_on_the_marked_block(browser: Any, golden_server: str) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.get(golden_server + "search?" + urlencode({"q": "parse_config", "type": "code"}))
    browser.find_element(By.CSS_SELECTOR, "a.room-hit-link").click()
    wanted = anchor("b", "a1b5")
    assert wait_for(lambda: browser.execute_script("return location.hash") == f"#{wanted}")
    target = browser.execute_script("return document.querySelector(':target')")
    assert target.get_attribute("id") == wanted and "block-frame" in target.get_attribute("class")
    assert browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", target) == "solid"
    top, height = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.top, innerHeight]", target
    )
    assert 0 <= top < height  # scrolled to it


def read_clipboard(driver: Any, kind: str) -> str:
    script = (
        "const done = arguments[arguments.length - 1];"
        "navigator.clipboard.read().then(async (items) => {"
        f"  const item = items.find((i) => i.types.includes({json.dumps(kind)}));"
        f"  done(item ? await (await item.getType({json.dumps(kind)})).text() : 'MISSING');"
        "}, (error) => done('ERROR ' + error));"
    )
    return driver.execute_async_script(script)  # type: ignore[no-any-return]


def test_a_code_blocks_copy_button_copies_exactly_its_code(browser: Any, golden_server: str) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    origin = golden_server.rstrip("/")
    browser.execute_cdp_cmd(
        "Browser.grantPermissions", {"origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}
    )
    browser.set_script_timeout(20)
    browser.get(golden_server + "s/golden_session")
    frame = browser.find_element(By.ID, anchor("b", "a1b5"))
    button = frame.find_element(By.CSS_SELECTOR, ".copy-button")
    assert button.text == "Copy code"
    browser.execute_script("arguments[0].scrollIntoView()", button)
    button.click()
    assert wait_for(lambda: button.get_attribute("data-state")) == "copied"
    assert read_clipboard(browser, "text/plain") == CODE  # tabs, the CR and trailing spaces included
    pasted = read_clipboard(browser, "text/html")
    assert "style=" in pasted and "parse_config" in pasted  # highlighting carried inline
    message = browser.find_element(By.ID, anchor("m", "msg_asst_1"))
    markdown = [
        b for b in message.find_elements(By.CSS_SELECTOR, ".message-heading .copy-button") if b.text == "Copy Markdown"
    ]
    markdown[0].click()
    assert wait_for(lambda: markdown[0].get_attribute("data-state")) == "copied"
    assert "```python\n" + CODE in read_clipboard(browser, "text/plain")
    browser.get(golden_server)  # a session whose id a path cannot hold is named in the query
    browser.find_element(By.LINK_TEXT, "dots").click()
    button = browser.find_element(By.ID, anchor("b", "c")).find_element(By.CSS_SELECTOR, ".copy-button")
    button.click()
    assert wait_for(lambda: button.get_attribute("data-state")) == "copied"
    assert read_clipboard(browser, "text/plain") == "\tint x;  \r\n"
    (button,) = [
        b
        for b in browser.find_element(By.ID, anchor("b", "p")).find_elements(By.CSS_SELECTOR, ".copy-button")
        if b.text == "Copy code"
    ]
    button.click()
    assert wait_for(lambda: button.get_attribute("data-state")) == "copied"
    assert read_clipboard(browser, "text/plain").rstrip("\n") == "make\t-j2  "  # code in prose: its element's text


def test_the_console_stays_clean_on_load_and_after_every_copy(browser: Any, golden_server: str) -> None:  # noqa: F811
    """No CSP violation (Chromium parses a copied text/html fragment in the page,
    style attributes and all) and no warning that a <meta> ignores frame-ancestors."""
    from selenium.webdriver.common.by import By

    browser.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": golden_server.rstrip("/"), "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    console(browser)  # what earlier tests left
    browser.get(golden_server + "s/golden_session")
    assert wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
    assert console(browser) == []
    clicked = []
    for button in browser.find_elements(By.CSS_SELECTOR, ".copy-button"):
        if not button.is_displayed():  # a code block's inside a closed tool call
            continue
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
        button.click()
        clicked.append(wait_for(lambda b=button: b.get_attribute("data-state")))
    assert len(clicked) > 30 and set(clicked) == {"copied"}
    assert console(browser) == []


def ask(server: str, method: str, path: str, host: str | None = None) -> tuple[int, bytes]:
    address = urlsplit(server)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=10)
    try:
        connection.request(method, path, headers={"Host": host} if host else {})
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def test_a_foreign_host_is_refused_and_only_get_and_head_are_answered(golden_server: str) -> None:
    address = urlsplit(golden_server)
    for host, status in (
        ("evil.example", 400),
        (f"evil.example:{address.port}", 400),
        ("localhost", 200),
        (address.netloc, 200),
    ):
        assert ask(golden_server, "GET", "/", host)[0] == status, host
    assert ask(golden_server, "POST", "/")[0] == 405
    status, body = ask(golden_server, "GET", "/s/" + quote("%2F", safe=""))  # an id a path could not name unquoted
    assert status == 200 and b"slash" in body


def test_the_xss_corpus_in_every_field_runs_no_script_on_any_page(
    browser: Any,  # noqa: F811
    beacon: tuple[str, list[str]],  # noqa: F811
    tmp_path: Path,
) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    url, hits = beacon
    document = hostile_document(url)
    write_session(tmp_path, document)
    evil = document["id"]
    with served([tmp_path], "--reasoning", "all") as server:
        pages = [
            "",
            "?" + urlencode({"title": evil}),
            "s/" + quote(evil, safe=""),
            "s/" + quote(evil + "-missing", safe=""),
            "search?" + urlencode({"q": "script"}),
            "search?" + urlencode({"q": "fetch onerror"}),
            "search?" + urlencode({"q": evil[:300], "language": evil[:100]}),
        ]
        for page in pages:
            browser.get(server + page)
            wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
            time.sleep(0.3)
            with pytest.raises(NoAlertPresentException):
                browser.switch_to.alert.text  # noqa: B018 - asking is the check
        browser.get(server + "s/" + quote(evil, safe=""))
        # The page's own script runs (the copy buttons exist), so a script of the data could have run too.
        assert wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".copy-button"))
        browser.find_elements(By.CSS_SELECTOR, "details")[0].click()
        time.sleep(0.5)
    assert hits == [], f"a served page made requests: {hits}"


def test_a_download_is_given_to_the_rooms_own_pages_not_to_another_sites(
    browser: Any,  # noqa: F811
    golden_server: str,
    tmp_path: Path,
) -> None:
    """Chromium's own Sec-Fetch-Site: a fetch from the room's page gets the
    download, a link of the room's list opens the session's page; a link on
    another server's page (another port of 127.0.0.1, "same-site" to a browser)
    to either gets the 403 page, nothing rendered."""
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from selenium.webdriver.common.by import By

    browser.get(golden_server)
    browser.find_element(By.CSS_SELECTOR, 'a[href$="/s/golden_session"]').click()  # same-origin navigation
    assert wait_for(lambda: "Parse the config" in browser.page_source), browser.page_source[:400]
    script = (
        "const done = arguments[arguments.length - 1];"
        "fetch('/s/golden_session.md').then(async (r) => done([r.status, (await r.text()).slice(0, 40)]),"
        " (e) => done(['ERROR', String(e)]));"
    )
    status, start = browser.execute_async_script(script)
    assert status == 200 and start.startswith("#"), start
    download = golden_server + "s/golden_session.md"
    page = golden_server + "s/golden_session"
    (tmp_path / "index.html").write_text(
        f'<a id="go" href="{download}">a download</a> <a id="page" href="{page}">a page</a>', encoding="utf-8"
    )
    other = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{other.server_address[1]}/index.html")
        browser.find_element(By.ID, "go").click()
        assert wait_for(lambda: "own pages only" in browser.page_source), browser.page_source[:400]
        browser.get(f"http://127.0.0.1:{other.server_address[1]}/index.html")
        browser.find_element(By.ID, "page").click()  # a session's page, asked for by another site
        assert wait_for(lambda: "own pages only" in browser.page_source), browser.page_source[:400]
    finally:
        other.shutdown()
        other.server_close()
