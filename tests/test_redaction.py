"""R8: with ``--redact`` secrets and personal data reach no output byte, index term or served page.

Generated secrets of every kind ``redact.md`` names are planted in every field a
session has (prose, code, tool input and output at any depth, errors, notices,
attachment names, titles, model and provider names, unknown blocks, Lonis data,
session and message fields) and looked for in every registered format (both
PDF engines), the clipboard, provider messages, the index (its documents and a
search for the value) and ``serve`` (pages, downloads, copies, search, the
list). Each secret carries a random core of letters and digits that no
escaping changes, and it is that core that must be gone.
"""

from __future__ import annotations

import base64
import json
import keyword
import os
import re
import string
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import examples
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st
from postgres import Server, new_database, postgres_server_fixture  # noqa: F401 - fixtures
from timelimit import cpu_limit, time_limit

from vis_export.copying import clipboard
from vis_export.formats import format_names, get_format
from vis_export.formats.options import ExportOptions
from vis_export.formats.provider import to_provider
from vis_export.model import LonisBlock, Session, session_from_json
from vis_export.policy import visible_session
from vis_export.redaction import Redaction, findings
from vis_export.redaction.rules import SHARED_HOMES, TRIGGERS
from vis_export.searchindex.documents import documents

ALNUM = string.ascii_letters + string.digits
MARKER = re.compile(r"\[redacted: [a-z0-9-]+ \d+\]")


def _core(size: int, alphabet: str = ALNUM, tail: str = "q7Z") -> st.SearchStrategy[str]:
    """Random characters ending in a digit, a capital and a small letter (a generated secret's look)."""
    return st.text(alphabet, min_size=size - len(tail), max_size=size - len(tail)).map(lambda s: s + tail)


def _b64url(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


# kind -> (the text holding the secret, the core that must not survive)
Secret = tuple[str, str]
_lower = string.ascii_lowercase + string.digits
KINDS: dict[str, st.SearchStrategy[Secret]] = {
    "openai-key": _core(40).map(lambda c: (f"sk-proj-{c}", c)),
    "anthropic-key": _core(40).map(lambda c: (f"sk-ant-api03-{c}", c)),
    "aws-access-key": _core(16, string.ascii_uppercase + string.digits, "7Q").map(lambda c: (f"AKIA{c}", c)),
    "github-token": _core(36).map(lambda c: (f"ghp_{c}", c)),
    "gitlab-token": _core(20).map(lambda c: (f"glpat-{c}", c)),
    "slack-token": _core(24).map(lambda c: (f"xoxb-1234567890-{c}", c)),
    "google-api-key": _core(35).map(lambda c: (f"AIza{c}", c)),
    "stripe-key": _core(24).map(lambda c: (f"sk_live_{c}", c)),
    "private-key": _core(48, ALNUM + "+/").map(
        lambda c: (f"-----BEGIN RSA PRIVATE KEY-----\nMIIE{c}\n{c[::-1]}==\n-----END RSA PRIVATE KEY-----", c)
    ),
    "jwt": _core(24).map(lambda c: (f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': c})}.{c}", c)),
    "uri-credentials": _core(14).map(lambda c: (f"postgres://admin:{c}@db.internal:5432/app", c)),
    "secret": _core(14).map(lambda c: (f"DB_PASSWORD={c}", c)),
    "authorization": _core(32).map(lambda c: (f"Authorization: Bearer {c}", c)),
    "email": _core(10, _lower, "q7z").map(lambda c: (f"{c}.person@example.org", c)),
    "home-user": st.text(string.ascii_lowercase, min_size=6, max_size=6).map(
        lambda c: (f"/home/{c}7q/project/main.py", f"{c}7q")
    ),
}

Planter = Callable[[dict[str, Any], str], None]


def _message(document: dict[str, Any], role: str = "assistant") -> dict[str, Any]:
    return next(m for m in document["messages"] if m["role"] == role)


def _blocks(document: dict[str, Any]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = _message(document)["content"]
    return content


def _add(block: dict[str, Any]) -> Callable[[dict[str, Any], str], None]:
    def plant(document: dict[str, Any], text: str) -> None:
        blocks = _blocks(document)
        blocks.append({"id": f"planted{len(blocks)}", **json.loads(json.dumps(block).replace("SECRET", _json(text)))})

    return plant


def _json(text: str) -> str:
    return json.dumps(text)[1:-1]


LONIS = {
    "schema_version": "lonis.block/v1",
    "attribution": {"identity": "lonis:test:golden", "provenance": {"when": "2026-08-10T00:00:00Z", "producer": "p"}},
    "payload": {"kind": "answer", "data": {"question": "proceed?", "text": "SECRET", "confidence": 0.9}},
}


# Every field a session has; a planter puts the text where it says.
def _append(holder: dict[str, Any], key: str, text: str) -> None:
    """Add ``text`` to a string field, keeping what earlier plants put there."""
    holder[key] = f"{holder.get(key, '')} {text}".strip()


PLACES: dict[str, Planter] = {
    "title": lambda d, t: _append(d, "title", t),
    "session field": lambda d, t: d.setdefault("summary", {"notes": []})["notes"].append(f"see {t}"),
    "model": lambda d, t: _append(_message(d), "model", t),
    "provider": lambda d, t: _append(_message(d), "provider", t),
    "message field": lambda d, t: _append(_message(d).setdefault("author", {}), "name", t),
    "prose": _add({"type": "prose", "markdown": "Here: SECRET, and *more* text."}),
    "code": _add({"type": "code", "language": "bash", "text": "line one\n  x = 1; SECRET # end\nlast\n"}),
    "tool input": _add(
        {"type": "tool", "tool": "shell", "status": "completed", "input": {"steps": [{"cmd": {"arg": "SECRET"}}]}}
    ),
    "tool output": _add(
        {"type": "tool", "tool": "shell", "status": "completed", "input": {}, "output": "out: SECRET\n"}
    ),
    "tool error": _add({"type": "tool", "tool": "shell", "status": "failed", "input": {}, "error": {"m": "SECRET"}}),
    "error": _add({"type": "error", "code": "failed", "message": "it said SECRET"}),
    "notice": _add({"type": "notice", "code": "note", "message": "SECRET"}),
    "attachment name": _add(
        {"type": "attachment", "attachment_id": "a1", "name": "SECRET.txt", "media_type": "text/plain"}
    ),
    "unknown block": _add({"type": "future_thing", "payload": {"deep": ["SECRET"]}}),
    # Markdown shows ``ghp\_…`` as ``ghp_…``: the signs around the secret's core escaped with a backslash.
    "prose, escaped": lambda d, t: _add({"type": "prose", "markdown": "See SECRET."})(
        d, re.sub(r"([_:@.-])", r"\\\1", t)
    ),
    # A field named like a message's structure is a block's data: a block's own content, an unknown block's status.
    "block content": _add({"type": "future_thing", "content": "SECRET"}),
    "tool content": _add({"type": "tool", "tool": "shell", "status": "completed", "input": {}, "content": "SECRET"}),
    "unknown status": _add({"type": "future_thing", "status": "SECRET"}),
    "lonis data": _add({"type": "lonis", "envelope": LONIS}),
    "speech": _add({"type": "speech", "text": "I heard SECRET"}),
}


def _base() -> dict[str, Any]:
    return {
        "id": "redaction_session",
        "title": "a session",
        "created_at": 1,
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "status": "completed",
                "created_at": 1,
                "content": [{"id": "u1", "type": "prose", "markdown": "help"}],
            },
            {
                "id": "m2",
                "role": "assistant",
                "status": "completed",
                "created_at": 2,
                "model": "gpt-5",
                "content": [{"id": "a1", "type": "prose", "markdown": "sure"}],
            },
        ],
    }


@st.composite
def planted(draw: st.DrawFn, kinds: list[str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """A session document with a secret of each kind (or of ``kinds``) in a drawn place; the cores."""
    document = _base()
    cores = []
    for kind in kinds or list(KINDS):
        text, core = draw(KINDS[kind])
        place = draw(st.sampled_from(list(PLACES)))
        PLACES[place](document, text)
        cores.append(core)
    return document, cores


@st.composite
def everywhere(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """A session document with a secret (of a drawn kind) in every place."""
    document = _base()
    cores = []
    for place in PLACES:
        text, core = draw(st.sampled_from(list(KINDS)).flatmap(KINDS.__getitem__))
        PLACES[place](document, text)
        cores.append(core)
    return document, cores


def _load(document: dict[str, Any]) -> Session:
    session = session_from_json(json.loads(json.dumps(document)), "x")
    assert any(isinstance(b, LonisBlock) for m in session.messages for b in m.blocks) == (
        '"lonis"' in json.dumps(document)
    )
    return session


def _bytes(output: Any) -> bytes:
    if isinstance(output, bytes):
        return output
    if isinstance(output, str):
        return output.encode("utf-8", "surrogatepass")
    return "".join(output).encode("utf-8", "surrogatepass")


def _pdf_text(data: bytes) -> str:
    from io import BytesIO

    from pypdf import PdfReader

    return "".join(page.extract_text() or "" for page in PdfReader(BytesIO(data)).pages)


def _absent(cores: list[str], data: bytes, where: str) -> None:
    for core in cores:
        at = data.find(core.encode())
        assert at < 0, f"{where}: a planted secret survived: {data[max(0, at - 80) : at + 80]!r}"


def _text_outputs(session: Session, options: ExportOptions) -> dict[str, bytes]:
    out = {}
    for name in format_names():
        fmt = get_format(name)
        if fmt.binary:
            continue
        out[name] = _bytes(fmt.render(session, options))  # type: ignore[arg-type]  # a loaded session, on purpose
        if fmt.pieces is not None:
            out[f"{name} pieces"] = _bytes(fmt.pieces(session, options))  # type: ignore[arg-type]
        if fmt.render_many is not None:
            out[f"{name} many"] = _bytes(fmt.render_many([session, session], options))  # type: ignore[list-item]
    return out


REDACT = ExportOptions(redact=True)


@settings(
    max_examples=examples(25), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None
)
@given(st.one_of(planted(), everywhere()))
def test_no_text_output_clipboard_provider_or_index_document_holds_a_planted_secret(
    case: tuple[dict[str, Any], list[str]],
) -> None:
    document, cores = case
    session = _load(document)
    with time_limit(60):
        plain = _bytes(get_format("json").render(session, ExportOptions()))  # type: ignore[arg-type]
        for core in cores:
            assert core.encode() in plain  # planted where an output shows it
        for where, data in _text_outputs(session, REDACT).items():
            _absent(cores, data, where)
        _absent(cores, json.dumps(clipboard(session, redact=True)).encode(), "clipboard")
        for message in session.messages:
            _absent(cores, json.dumps(clipboard(message, redact=True)).encode(), "clipboard of a message")
            for block in message.blocks:
                _absent(cores, json.dumps(clipboard(block, redact=True)).encode(), "clipboard of a block")
        for flavour in ("openai", "anthropic"):
            provided = to_provider(session, provider_format=flavour, redact=True)
            _absent(cores, json.dumps(provided).encode(), f"provider {flavour}")
        view = visible_session(session, "visible", Redaction())
        assert (
            list(findings(view, Redaction())) == []
        )  # markers hold nothing to redact: a view redacted twice is the same
        docs = list(documents(session, "visible", Redaction()))
        _absent(cores, json.dumps(docs, ensure_ascii=False).encode(), "index documents")


@pytest.mark.slow
@settings(max_examples=3, deadline=None)
@given(everywhere())
def test_both_pdf_engines_hold_no_planted_secret(case: tuple[dict[str, Any], list[str]]) -> None:
    document, cores = case
    session = _load(document)
    fmt = get_format("pdf")
    with time_limit(120):
        for engine in ("weasyprint", "typst"):
            data = fmt.render(session, ExportOptions(redact=True, pdf_engine=engine))  # type: ignore[arg-type]
            _absent(cores, _pdf_text(data).encode(), f"pdf {engine} text")
            _absent(cores, data, f"pdf {engine} bytes")
            assert "redacted:" in _pdf_text(data)


@settings(max_examples=4, deadline=None)
@given(everywhere())
def test_a_redacted_value_is_not_found_in_the_index(
    tmp_path_factory: Any, case: tuple[dict[str, Any], list[str]]
) -> None:
    pytest.importorskip("tantivy")
    from vis_export.jobs.indexing import index
    from vis_export.searchindex import search

    document, cores = case
    session = _load(document)
    folder = tmp_path_factory.mktemp("index")
    with time_limit(60):
        index([session], folder / "redacted", reasoning="visible", redact=True)
        index([session], folder / "plain", reasoning="visible")
        for core in cores:
            assert not search(f'"{core}"', folder / "redacted"), "a redacted value was found"
        assert any(search(f'"{core}"', folder / "plain") for core in cores)  # the search would find it otherwise
        for path in (folder / "redacted").rglob("*"):
            if path.is_file():
                _absent(cores, path.read_bytes(), f"index file {path.name}")


def test_a_changed_redaction_indexes_an_unchanged_file_again(tmp_path: Path) -> None:
    """A file indexed without --redact is read again with it: its stamp alone says nothing of the rules."""
    pytest.importorskip("tantivy")
    from vis_export.jobs.indexing import index_sources
    from vis_export.searchindex import search

    document = _base()
    PLACES["prose"](document, "mail jane.q.public@example.org")
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    os.utime(source, (1_700_000_000, 1_700_000_000))  # not racy: its stamp alone would let the job skip it
    where = tmp_path / "idx"
    index_sources([source], where, reasoning="visible")
    assert search("jane", where)
    index_sources([source], where, reasoning="visible", redact=Redaction())
    assert not search("jane", where)


@pytest.mark.parametrize("runs", [(False, True), (False, True, True)])
def test_a_redacted_rerun_drops_the_plain_path_a_run_without_redact_left_in_the_manifest(
    tmp_path: Path, runs: tuple[bool, ...]
) -> None:
    """A file indexed without --redact and then with it: the manifest names it redacted only (its plain
    path, with the home folder's user, stayed beside the redacted one), and a rerun is still a no-op."""
    pytest.importorskip("tantivy")
    from vis_export.index_marker import MANIFEST
    from vis_export.jobs.indexing import index_sources

    folder = tmp_path / "home" / "alicezq7"
    folder.mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(_base()))
    where = tmp_path / "idx"
    for redact in runs:
        outcome = index_sources([folder], where, reasoning="visible", redact=Redaction() if redact else None)
    manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    assert "alicezq7" not in json.dumps(manifest), manifest["files"]
    assert len(manifest["files"]) == 1 and outcome.unchanged == (len(runs) == 3)


def test_an_index_folder_names_no_home_folder_user_and_a_rerun_is_a_no_op(tmp_path: Path) -> None:
    """The index folder is an output: its manifest keeps source paths (so that a rerun
    knows an unchanged file), but under --redact with the home folder's user as its marker."""
    pytest.importorskip("tantivy")
    from click.testing import CliRunner

    from vis_export.cli import main

    home = tmp_path / "machine+" / "home" / "alicezq7"  # "+": the folder reads as a home (/home/<user>/)
    (home / "project").mkdir(parents=True)
    for name in ("one", "two"):
        document = _base()
        document["id"] = f"session_{name}"
        PLACES["prose"](document, f"see {home}/project/{name}.py")
        (home / "project" / f"{name}.json").write_text(json.dumps(document))
    where = tmp_path / "idx"
    for run in range(2):
        argv = ["index", str(home), "--index", str(where), "--redact", "--reasoning", "visible"]
        result = CliRunner().invoke(main, argv, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert ("0 added, 0 updated, 2 unchanged" if run else "2 added") in result.output
    for path in where.rglob("*"):
        if path.is_file():
            assert b"alicezq7" not in path.read_bytes(), path


_KEY_BODY = "MIIEowIBAAKCAQEA7yXb9qLr3mZkP0sTn4WcQ1vJ8aH2uE6yG5tR0pL9xN3bV7cD"


@pytest.mark.parametrize(
    "path",
    [
        "/var/home/alicezq7/project",  # where a linked /home leads: Fedora Silverblue
        "/usr/home/alicezq7/project",  # FreeBSD
        "/System/Volumes/Data/Users/alicezq7/project",  # macOS's data volume
        "/Volumes/Macintosh HD/Users/alicezq7/project",  # macOS's start-up disk by its name
        "%2FVolumes%2FMacintosh%20HD%2FUsers%2Falicezq7%2Fproject",
        "/c/Users/alicezq7/project",  # Git Bash (Claude Code's shell on Windows), MSYS2
        "/cygdrive/c/Users/alicezq7/project",  # Cygwin
        "vscode://file/home/alicezq7/project/a.py:3:1",  # VS Code's link to a file
        "c:\\users\\alicezq7\\project",
        "C:\\USERS\\alicezq7\\project",
    ],
)
def test_a_home_folder_where_a_linked_home_leads_names_no_user_in_text(path: str) -> None:
    document = _base()
    PLACES["tool output"](document, f"cwd: {path}")
    shown = _bytes(get_format("json").render(_load(document), REDACT))  # type: ignore[arg-type]
    assert b"zq7" not in shown and b"[redacted: home-user 1]" in shown


_PROMPT_TEXT = st.text(st.sampled_from("ab_.-@:~/$#%[]() \t\nMINGW64UCRTCLANGMSYS"), max_size=40)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.one_of(_PROMPT_TEXT, st.sampled_from(["alice@host", ":~/src$ ", "[bob@box src]$ ", " % ", " MINGW64 "])),
        max_size=8,
    )
)
def test_every_prompt_the_rule_finds_holds_one_of_its_hints(pieces: list[str]) -> None:
    """The shell prompt's rule runs only on a text holding one of its hints (what follows a prompt's host, so that
    every e-mail address does not run it): a prompt found in a text that held none would be a prompt missed."""
    from vis_export.redaction.rules import _PROMPT, BUILT_IN

    (rule,) = [rule for rule in BUILT_IN if rule.regex.pattern == _PROMPT]
    for match in rule.regex.finditer("".join(pieces)):
        assert any(hint in match.group(0) for hint in rule.hints), match.group(0)


@pytest.mark.parametrize(
    "prompt",
    [
        "alicezq7@web-01:~/src$ ls\n",  # bash (Debian, Ubuntu)
        "(venv) alicezq7@host:/srv/app$ python\n",
        "[alicezq7@fedora src]$ pwd\n",  # bash (Fedora, RHEL)
        "alicezq7@MacBook-Pro src % ls\n",  # zsh (macOS)
        "alicezq7@DESKTOP-1 MINGW64 ~/src (main)\n$ ls\n",  # Git Bash
        "alicezq7@host:~$ cd /home/alicezq7/src\n",  # and its home folder: one user, one marker
    ],
)
@pytest.mark.parametrize("place", ["tool output", "tool input"])
def test_a_shell_prompt_names_no_user(prompt: str, place: str) -> None:
    """A prompt names its user where no home folder is written (found by the attack helper)."""
    document = _base()
    PLACES[place](document, f"done\n{prompt}")
    shown = _bytes(get_format("json").render(_load(document), REDACT))  # type: ignore[arg-type]
    assert b"zq7" not in shown and b"[redacted: home-user 1]" in shown and b"home-user 2" not in shown


@pytest.mark.parametrize(
    "text",
    [
        "root@host:~# ls",
        "user@host:~$ ls",
        "send it to bob@work: the report",
        "5% off at bob@shop today",
        "@Override public void run()",
        "git clone git@github.com:bob/repo.git",
    ],
)
def test_what_is_no_shell_prompt_names_no_user(text: str) -> None:
    from vis_export.redaction.detect import Detector

    assert not [span for span in Detector(Redaction()).spans(text) if span[2] == "home-user"]


_BODY = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.mark.parametrize(
    "text",
    [f"tokenghp_{_BODY}", f"令牌ghp_{_BODY}", f"xglcbt-ab_{_BODY[:30]}", f"idglpat-{_BODY[:20]}x", f"gho_{_BODY}"],
)
def test_a_token_found_only_by_a_detect_secrets_expression_is_redacted_whole(text: str) -> None:
    """Glued to a word (no boundary for the built-in rule), a token was found by detect-secrets'
    expression alone, whose group is its prefix: ``ghp`` was redacted and the body shown."""
    from vis_export.redaction.redact import redacted_line

    assert "J0k1" not in redacted_line(text, Redaction())


def test_a_secret_found_as_markdown_shows_it_leaves_no_backslash_before_its_marker() -> None:
    """``\\-\\-\\-\\-\\-BEGIN …`` was redacted from the first dash on: the backslash left
    before the marker made it an escaped ``[`` (Markdown), so the PDF's prose did not draw it
    as a marker (found by test_markers_are_styled_in_the_typst_pdf)."""
    from vis_export.redaction.redact import redacted_line

    dashes = "\\-" * 5
    key = f"{dashes}BEGIN RSA PRIVATE KEY{dashes}\nMIIE{_KEY_BODY}\n{dashes}END RSA PRIVATE KEY{dashes}"
    assert redacted_line(f"See {key}.", Redaction()) == "See [redacted: private-key 1]."


# Characters no one sees: a token cut by one reads, and is copied by eye, whole.
INVISIBLE = "\u200b\u200c\u200d\u2060\u00ad\ufeff\u200e\u202e\u2066"


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from(list(KINDS)).flatmap(KINDS.__getitem__), st.sampled_from(INVISIBLE), st.data())
def test_a_secret_cut_by_an_invisible_character_is_redacted(secret: Secret, invisible: str, data: Any) -> None:
    """What a reader sees (the invisible characters taken out) holds no secret, in any
    place, ASCII around it or not."""
    text, core = secret
    at = text.index(core) + data.draw(st.integers(1, len(core) - 1))
    cut = text[:at] + invisible + text[at:]
    place = data.draw(st.sampled_from(["prose", "code", "tool output", "title", "unknown block"]))
    document = _base()
    PLACES[place](document, data.draw(st.sampled_from(["", "é "])) + cut)
    with time_limit(60):
        shown = get_format("json").render(_load(document), REDACT)  # type: ignore[arg-type]
    seen = json.loads(shown) if isinstance(shown, str) else json.loads(_bytes(shown))
    assert core not in re.sub(f"[{INVISIBLE}]", "", json.dumps(seen, ensure_ascii=False))


@pytest.mark.parametrize(
    ("text", "redaction", "kept"),
    [
        (f"-----BEGIN RSA PRIVATE KEY-----\n{_KEY_BODY}\n[redacted: e 1]\n-----END RSA PRIVATE KEY-----", (), "KCA"),
        (f"-----BEGIN PRIVATE KEY-----\n[redacted: x 9]{_KEY_BODY}\n-----END PRIVATE KEY-----", (), "KCAQ"),
        ("Project Falcon [redacted: x 1] launch", (r"Project \w+ \S+",), "Falcon"),
        ("Project Falcon[redacted: x 1]", (r"Project \w+\S+",), "Falcon"),
    ],
)
def test_a_marker_like_text_inside_a_secret_leaves_the_rest_of_it_a_secret(
    text: str, redaction: tuple[str, ...], kept: str
) -> None:
    """A marker is never taken for a secret, but a find it stands in (a private key with a
    marker-like line, a custom pattern's words) was dropped whole: the key was shown."""
    from vis_export.redaction.redact import redacted_line

    rules = Redaction(patterns=redaction)
    once = redacted_line(text, rules)
    assert kept not in once and "[redacted: " in once
    assert redacted_line(once, rules) == once


@pytest.mark.parametrize("value", ["[redacted: secret 1]Tr0ub4dor&3xq", "[redacted: secret 1] Tr0ub4dor&3xq"])
def test_a_value_under_a_secret_key_that_starts_like_a_marker_is_a_secret(value: str) -> None:
    """Only markers alone are what redacting left: a password that starts like one was kept."""
    from vis_export.redaction.redact import Redactor

    once = Redactor(Redaction()).value({"password": value}, ())
    assert "Tr0ub" not in json.dumps(once, default=dict)
    assert Redactor(Redaction()).value(once, ()) == once


_SECRET_KEYS = st.sampled_from(["password", "api_key", "db_password", "client_secret", "AUTH_TOKEN", "credentials"])
# A secret's value in the shapes a placeholder takes (a leading ``$``, braces, angle brackets, stars),
# with a core no reference holds (a small letter beside ``!``): a bcrypt hash, ``$ecr3t!``, ``{SSHA}…``.
_SHAPED_SECRETS = st.tuples(
    st.sampled_from(["", "$", "$2b$12$", "${", "{", "{{ ", "{SSHA}", "<", "***", "$$", "%"]),
    _core(12, ALNUM + "!#%&+/=^~.$", "q7!Z"),
    st.sampled_from(["", "}", " }}", ">", "***", "$", "!"]),
).map(lambda parts: ("".join(parts), parts[1]))
# A generated token (8 or more letters and digits, mixed) in a reference's form: a secret still.
_TOKEN_REFERENCES = st.one_of(
    _core(16, string.ascii_uppercase + string.digits, "Q7Z").map(lambda core: (f"${core}", core)),
    _core(16, string.ascii_uppercase + string.digits, "Q7Z").map(lambda core: (f"$GHP_{core}", core)),
    _core(12).map(lambda core: (f"${{{core}}}", core)),
    _core(12).map(lambda core: (f"{{{{ {core} }}}}", core)),
    _core(12).map(lambda core: (f"<{core}>", core)),
    _core(12).map(lambda core: (f"<sk-proj-{core}>", core)),
)
# Names made of words: letters, or short runs that mix in digits (``OAUTH2``, ``SHA256``), never a token.
_WORDS = r"(_[A-Za-z]{1,14}|_[A-Za-z0-9]{1,7}){0,2}"
_NAMES = st.from_regex(rf"(_|[A-Za-z]{{1,14}}){_WORDS}(\.[a-z_][a-z0-9_]{{0,6}})?", fullmatch=True)
# Whole values that are clearly references to a secret, never one.
_REFERENCES = st.one_of(
    _NAMES.map(lambda name: f"${{{name}}}"),
    st.from_regex(rf"(_|[A-Z]{{1,14}}){_WORDS}", fullmatch=True).map(lambda name: f"${name.upper()}"),
    _NAMES.map(lambda name: f"{{{{ {name} }}}}"),
    st.from_regex(r"[A-Za-z]{1,10}([ _.-]([A-Za-z]{1,10}|[A-Za-z0-9]{1,7})){0,3}", fullmatch=True).map(
        lambda words: f"<{words}>"
    ),
    st.integers(3, 12).map(lambda n: "*" * n),
    st.just(""),
)


@settings(max_examples=examples(200), deadline=None)
@given(_SECRET_KEYS, _SHAPED_SECRETS | _TOKEN_REFERENCES, st.sampled_from(["tool input", "unknown block"]))
@example("api_key", ("$X7K9Q2M4P8R3T6W1Z5N", "X7K9Q2M4P8R3T6W1Z5N"), "tool input")
def test_a_value_under_a_secret_key_is_redacted_unless_it_is_a_reference(
    key: str, secret: tuple[str, str], place: str
) -> None:
    """R8: under a secret's key, a value that starts with ``$`` or stands in braces may be a
    secret (a bcrypt hash, ``$ecr3t!``): only a whole reference (``${NAME}``, ``$NAME``,
    ``{{ name }}``, ``<placeholder>``, stars, nothing) is shown, and a generated token in one of
    those forms (``$X7K9Q2M4P8R3T6W1``, ``<sk-proj-…>``) is a secret still. And the same value
    assigned in text."""
    value, core = secret
    document = _base()
    holder = {"cmd": "login", key: value}
    _blocks(document).append(
        {"id": "k", "type": "tool", "tool": "shell", "status": "completed", "input": holder}
        if place == "tool input"
        else {"id": "k", "type": "future_thing", "payload": {"deep": [holder]}}
    )
    if " " not in value:  # an assigned value in quotes ends at a blank (redact.md)
        PLACES["code"](document, f'{key} = "{value}"')
    session = _load(document)
    assert core.encode() in _bytes(get_format("json").render(session, ExportOptions()))  # type: ignore[arg-type]
    assert core.encode() not in _bytes(get_format("json").render(session, REDACT))  # type: ignore[arg-type]


@settings(max_examples=examples(200), deadline=None)
@given(_SECRET_KEYS, _REFERENCES)
def test_a_reference_under_a_secret_key_is_shown_as_it_is(key: str, value: str) -> None:
    document = _base()
    _blocks(document).append({"id": "k", "type": "tool", "tool": "shell", "status": "completed", "input": {key: value}})
    assert list(findings(_load(document), Redaction())) == []


def test_a_redactor_looks_at_every_string_after_a_message_it_searched_first() -> None:
    """Only the strings of the messages a search ran over may be passed on unsearched: a
    string redacted after a message (a part, a line) is looked at in full."""
    from vis_export.redaction.redact import Redactor

    redactor = Redactor(Redaction())
    redactor.message(_load(_base()).messages[0], 0)
    assert redactor.value({"to": "mail jo.q@example.org"}, ()) == {"to": "mail [redacted: email 1]"}


@pytest.fixture
def own_home(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Sets the running user's home folder (``HOME``) for what ``home_spans`` knows of it."""
    from vis_export.redaction.redact import _own_names

    def set_home(home: Path) -> None:
        monkeypatch.setenv("HOME", str(home))
        _own_names.cache_clear()

    yield set_home
    monkeypatch.undo()
    _own_names.cache_clear()


@pytest.mark.parametrize("shape", ["var/home/alice zq7", "usr/HOME/user.alicezq7", "Users/guest-alicezq7", "alicezq7"])
def test_a_manifest_names_no_home_user_wherever_a_linked_home_leads(tmp_path: Path, shape: str, own_home: Any) -> None:
    """The manifest keeps real paths, and a linked home's real path is where it leads
    (/home -> /var/home, /usr/home, or a folder of any name): its user stays a marker,
    however the name is spelled, and a rerun still knows the file."""
    pytest.importorskip("tantivy")
    from vis_export.index_marker import MANIFEST
    from vis_export.jobs.indexing import index_sources

    real = tmp_path / "disk" / shape
    (real / "project").mkdir(parents=True)
    (tmp_path / "home").symlink_to(real)
    own_home(tmp_path / "home")
    (real / "project" / "one.json").write_text(json.dumps(_base()))
    where = tmp_path / "idx"
    for _ in range(2):
        outcome = index_sources([tmp_path / "home" / "project"], where, reasoning="visible", redact=Redaction())
    assert outcome.unchanged == 1
    manifest = (where / MANIFEST).read_text(encoding="utf-8")
    assert "zq7" not in manifest and "[redacted: home-user 1]" in manifest


def test_a_served_source_path_names_no_user_of_a_home_anywhere() -> None:
    from vis_export.serve.catalogue import _entry

    for source in ("/var/home/alice7q/s.json", "C:\\Users\\Alice 7q\\s.json", "c:\\users\\alice7q\\s.json"):
        row = _entry(Session("s", (), source=source), "key", 0, Redaction()).summary.row()
        assert "7q" not in json.dumps(row), row


def _served_app(folder: Path, redaction: Redaction) -> Any:
    from servedroom import _decoded_once
    from starlette.testclient import TestClient

    from vis_export.serve.app import create_app
    from vis_export.serve.server import LOCAL_NAMES, prepare

    def report(results: list[Any]) -> list[Any]:
        return [r.session for r in results if r.session is not None]

    catalogue, keeper = prepare([str(folder)], None, "visible", report, lambda line: None, redaction)
    catalogue.check_every = 0
    catalogue.refresh()
    assert keeper is not None
    app = create_app(catalogue, keeper.directory, "visible", LOCAL_NAMES, redaction=redaction)
    return catalogue, TestClient(_decoded_once(app), base_url="http://127.0.0.1:8765")


@settings(max_examples=3, deadline=None)
@given(everywhere())
def test_serve_pages_downloads_copies_search_and_list(
    tmp_path_factory: Any, case: tuple[dict[str, Any], list[str]]
) -> None:
    pytest.importorskip("starlette")
    from htmldom import parse

    document, cores = case
    folder = tmp_path_factory.mktemp("served")
    (folder / "chat.json").write_text(json.dumps(document), encoding="utf-8")
    catalogue, client = _served_app(folder, Redaction())
    try:
        with time_limit(120), client:
            listed = client.get("/api/sessions")
            _absent(cores, listed.content, "session list")
            _absent(cores, client.get("/").content, "sessions page")
            path = f"/s/{document['id']}"
            page = client.get(path)
            assert page.status_code == 200
            _absent(cores, page.content, "session page")
            for extension in ("json", "md", "txt", "html", "jsonl", "pdf"):
                answer = client.get(f"{path}.{extension}")
                assert answer.status_code == 200, extension
                _absent(cores, answer.content, f"download {extension}")
            anchors = [element.get("id") for element in parse(page.text).iter() if element.get("id")]
            for anchor in anchors:
                _absent(cores, client.get(f"/api/copy?session={document['id']}&anchor={anchor}").content, "copy")
            for core in cores:
                found = client.get("/api/search", params={"q": f'"{core}"'})
                assert found.status_code == 200 and found.json() == [], "a redacted value was found"
            _absent(cores, client.get("/api/search", params={"q": "redacted"}).content, "search hits")
    finally:
        catalogue.close()


@settings(max_examples=examples(25), deadline=None)
@given(planted(), st.sampled_from(list(KINDS)))
def test_what_the_allowlist_matches_stays(case: tuple[dict[str, Any], list[str]], allowed_kind: str) -> None:
    document, cores = case
    allowed = cores[list(KINDS).index(allowed_kind)]
    session = _load(document)
    options = ExportOptions(redact=Redaction(allow=(re.escape(allowed),)))
    data = _bytes(get_format("json").render(session, options))  # type: ignore[arg-type]
    assert allowed.encode() in data
    _absent([core for core in cores if core not in allowed and allowed not in core], data, "json")


def test_markers_are_numbered_per_kind_the_same_value_the_same_marker_and_the_output_deterministic() -> None:
    document = _base()
    for text in ("a@example.org", "b@example.org", "a@example.org", "AKIAABCDEFGH12345678"):
        PLACES["prose"](document, text)
    PLACES["title"](document, "b@example.org")
    session = _load(document)
    once = get_format("json").render(session, REDACT)  # type: ignore[arg-type]
    assert once == get_format("json").render(_load(document), REDACT)  # type: ignore[arg-type]
    # The title comes first: its address is number 1 everywhere.
    assert once.count("[redacted: email 1]") == 2 and once.count("[redacted: email 2]") == 2
    assert "[redacted: aws-access-key 1]" in once and "example.org" not in once


def test_code_stays_literal_but_for_the_secret_span() -> None:
    text = "\tkey = 'x'\r\n  url = \"postgres://me:Pa55w0rdXyZ@db/app\"  \n\n   tail\t\n"
    document = _base()
    _blocks(document).append({"id": "c", "type": "code", "language": "python", "text": text})
    view = visible_session(_load(document), "visible", Redaction())
    (code,) = [b for b in view.messages[1].blocks if b.id == "c"]
    assert code.fields["text"] == text.replace("Pa55w0rdXyZ", "[redacted: uri-credentials 1]")


def test_a_lone_surrogate_beside_a_secret_is_kept_and_the_secret_redacted() -> None:
    """The loader keeps a lone surrogate escape as a string no UTF-8 holds; RE2 reads
    UTF-8, and --redact stopped with a traceback on such a session."""
    document = _base()
    PLACES["prose"](document, "a \ud800 token=Zq7Lp2Xw9Rt4 postgres://u\ud800:Wq7Lp2Xw9Rt5@db/app")
    view = visible_session(_load(document), "visible", Redaction())
    (prose,) = [b for b in view.messages[1].blocks if b.id == "planted1"]
    text = prose.fields["markdown"]
    assert "\ud800" in text and "Zq7Lp2Xw9Rt4" not in text and "Wq7Lp2Xw9Rt5" not in text


_ASCII_FILLER = st.text(string.printable, max_size=40)
# Shapes that are no secret (a find inside one is dropped), beside which a secret may stand.
_SHAPES = st.sampled_from(
    ["3f2a9c0d1e4b", "123e4567-e89b-12d3-a456-426614174000", "sha256:", "data:image/png;base64,", "\x0b", "\x1c"]
)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.one_of(_ASCII_FILLER, _SHAPES, st.sampled_from(list(KINDS)).flatmap(KINDS.__getitem__).map(lambda s: s[0]))
    )
)
@example(pieces=["data:image/;base64,", "AKIA0000000000000000"])  # an image's mask, found in bytes either way
@example(pieces=["data:image/;base64,", "\x1c", "AKIA0000000000000000"])  # \x1c is whitespace to Python's \s on text
def test_rules_run_by_re2_on_ascii_text_find_what_python_finds(pieces: list[str]) -> None:
    """The speed-ups of ``detect`` (RE2 twins of the rules, one RE2 set for their hints and
    the not-a-secret shapes in RE2, on ASCII text) change no find: the same spans as
    Python's expressions and hint checks."""
    from vis_export.redaction.detect import Detector

    text = "".join(pieces)
    detector = Detector(Redaction())
    fast = detector.spans(text)
    with _python_only():
        assert fast == detector.spans(text)


@contextmanager
def _python_only() -> Iterator[None]:
    """``detect`` without its speed-ups: Python's expressions and hint checks, not RE2's."""
    import vis_export.redaction.detect as detect

    twins, hint_set, shapes = detect._TWINS, detect._HINT_SET, detect._NOT_SECRET_ASCII

    class Hints:
        def Match(self, data: bytes) -> list[int]:
            return [index for index, hint in enumerate(detect._HINTS) if hint in data.decode("utf-8")]

    class Found:  # a match of Python's expression on the text, its groups bytes, as RE2's are
        def __init__(self, match: re.Match[str]) -> None:
            self.match = match

        def span(self) -> tuple[int, int]:
            return self.match.span()

        def __getitem__(self, group: int) -> bytes:
            return self.match[group].encode("ascii")

    class Shapes:  # Python's expression on the text itself: a bytes twin's \s lacks \x1c-\x1f
        def finditer(self, data: bytes) -> Any:
            return map(Found, detect._NOT_SECRET.finditer(data.decode("ascii")))

    detect._TWINS, detect._HINT_SET, detect._NOT_SECRET_ASCII = dict.fromkeys(twins), Hints(), Shapes()
    try:
        yield
    finally:
        detect._TWINS, detect._HINT_SET, detect._NOT_SECRET_ASCII = twins, hint_set, shapes


_UPPER = string.ascii_uppercase + string.digits
# Provider tokens by every prefix that names one: the kinds above, and each provider's other prefixes.
PROVIDER_TOKENS: dict[str, st.SearchStrategy[Secret]] = {
    **{
        kind: KINDS[kind]
        for kind in ("openai-key", "anthropic-key", "aws-access-key", "github-token", "gitlab-token", "slack-token")
        + ("google-api-key", "stripe-key", "jwt")
    },
    "github_pat_": _core(82).map(lambda c: (f"github_pat_{c}", c)),
    "gho_": _core(36).map(lambda c: (f"gho_{c}", c)),
    "ASIA": _core(16, _UPPER, "7Q").map(lambda c: (f"ASIA{c}", c)),
    "xoxp-": _core(40).map(lambda c: (f"xoxp-{c}", c)),
    "sk_test_": _core(24).map(lambda c: (f"sk_test_{c}", c)),
    "rk_live_": _core(24).map(lambda c: (f"rk_live_{c}", c)),
    "npm_": _core(36).map(lambda c: (f"npm_{c}", c)),
    "pypi-": _core(70).map(lambda c: (f"pypi-AgEIcHlwaS5vcmc{c}", c)),
}


_AWS_ID, _OPENAI = "AKIAQ3EGW5ZB7N2XKDLR", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"


@pytest.mark.parametrize(
    ("shape", "core"),
    [
        ("https://a.example/?next=https%3A%2F%2Fb.s3.amazonaws.com%2Fo%3FX-Amz-Credential%3D{}%252F2024", _AWS_ID),
        ("AWSAccessKeyId%3D{}%26Expires%3D1700000000", _AWS_ID),
        ("s3://bucket%2F{}%2Fkey", _AWS_ID),
        ("aws_access_key_id\\u003d\\u0027{}\\u0027", _AWS_ID),  # Gson's escapes of = and '
        ("key=%27{}%27", _AWS_ID),
        ("https://a.example/?next=%2Fchat%3Fkey%3D{}", _OPENAI),
        ('{{"env": "OPENAI_API_KEY:\\n{}\\n"}}', _OPENAI),  # a literal \n: JSON text shown in a tool's output
        ("key\\t{}", _OPENAI),
        ("\\u0027{}\\u0027", _OPENAI),
    ],
)
def test_a_token_after_an_escape_that_ends_in_a_letter_or_digit_is_taken(shape: str, core: str) -> None:
    """A percent escape (``%3D``), a JSON one (``\\u0027``) or a literal ``\\n`` before an AWS key id or an
    OpenAI key ends in a letter or digit but glues it to no name (``_unglued``): the token is one.
    detect-secrets' unbounded AWS expression took such an id; the bounded one left it shown."""
    from vis_export.redaction.redact import redacted_line

    assert core[4:] not in redacted_line(shape.format(core), Redaction())


@pytest.mark.parametrize(
    "text", ["open file:///c%3A/Users/alicezq7/project/main.py", "GET /open?path%3D/home/alicezq7/notes.md"]
)
def test_a_home_folder_after_a_percent_escape_names_no_user(text: str) -> None:
    """VS Code writes a Windows drive's colon as ``%3A`` in its URIs: ``/Users/`` after it starts the path
    (the escape's last digit is no name's end), and its user was shown."""
    from vis_export.redaction.redact import redacted_line

    assert "alicezq7" not in redacted_line(text, Redaction())


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("see [/home/alicezq7](file:///home/alicezq7/notes.md)", "](file:///home/"),
        ("[C:\\Users\\alicezq7]", "]"),
        # dots are a name's only inside it: ``...`` is an ellipsis (``under /home/...``), no user
        ("cd /home/.. && ls /home/. /home/... /home/.a.", "/home/. /home/... /home/[redacted: home-user 1]."),
    ],
)
def test_a_home_folder_user_ends_before_a_bracket_and_dots_are_no_user(text: str, kept: str) -> None:
    """A Markdown link's bracket ran on into the user's name, so its marker took the rest of the
    link (``[/home/[redacted: home-user 1]``); ``..`` and ``.`` are folders, not users, nor is an ellipsis."""
    from vis_export.redaction.redact import redacted_line

    redacted = redacted_line(text, Redaction())
    assert "alicezq7" not in redacted and kept in redacted, redacted


# A name of several words where a path goes on after it (a folder's end, a prompt's ``>``, the quote that opened
# the path, the end of a line the path starts or of a Windows path's line): the whole name is the user.
_SPACED = "[redacted: home-user 1]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("C:\\Users\\John Smith\\project", f"C:\\Users\\{_SPACED}\\project"),
        ("/Users/John Smith/Documents", f"/Users/{_SPACED}/Documents"),
        ("echo C:\\\\Users\\\\John Smith\\\\", f"echo C:\\\\Users\\\\{_SPACED}\\\\"),  # JSON-escaped
        ("cd /Users/John\\ Smith/Documents", f"cd /Users/{_SPACED}/Documents"),  # escaped for a shell
        ('cd "C:\\Users\\Mary Ann Smith"', f'cd "C:\\Users\\{_SPACED}"'),
        ("C:\\Users\\John Smith", f"C:\\Users\\{_SPACED}"),  # a field holding the path
        ("PS C:\\Users\\John Smith> dir", f"PS C:\\Users\\{_SPACED}> dir"),
        ("    Directory: C:\\Users\\John Smith\n\nMode", f"    Directory: C:\\Users\\{_SPACED}\n\nMode"),
        ("\\\\srv\\Users\\John Smith\r\n", f"\\\\srv\\Users\\{_SPACED}\r\n"),
        ("open file:///c%3A/Users/John%20Smith/x", f"open file:///c%3A/Users/{_SPACED}/x"),
        ("C%253A%255CUsers%255CJohn%2520Smith%255Cx", f"C%253A%255CUsers%255C{_SPACED}%255Cx"),
        # prose goes on after a blank where no folder's end follows: the name is its first word
        ("in /Users/bob and then", f"in /Users/{_SPACED} and then"),
        ("in /home/bob and then\n", f"in /home/{_SPACED} and then\n"),
        ("it's in /home/bob and that's it", f"it's in /home/{_SPACED} and that's it"),
        ("ls /home/bob /home/bob/x", f"ls /home/{_SPACED} /home/{_SPACED}/x"),
        ("cp /home/bob/a b/c", f"cp /home/{_SPACED}/a b/c"),
        ("in /Users/bob and then cd src/app", f"in /Users/{_SPACED} and then cd src/app"),  # five words: prose
    ],
)
def test_a_home_folder_user_of_several_words_ends_where_the_path_goes_on(text: str, expected: str) -> None:
    """A name ended at its first blank, so ``C:\\Users\\John Smith\\`` showed ``Smith``: a name of up to four
    words is taken whole where a path goes on after it, and prose after a path's name is left as it is."""
    from vis_export.redaction.redact import redacted_line

    assert redacted_line(text, Redaction()) == expected


@pytest.mark.parametrize(
    "value", ["C:\\Users\\John Smith", "C:\\Users\\John Smith\\project", "\\\\wsl$\\Ubuntu\\home\\alicezq7"]
)
def test_a_home_folder_as_a_whole_field_is_its_user_s_marker_in_an_export(value: str) -> None:
    """A tool's input holding a path whole (``{"cwd": "C:\\\\Users\\\\John Smith"}``): the prefilter sends its
    message to the walk and the whole name is the marker."""
    document = _base()
    _blocks(document).append(
        {"id": "t", "type": "tool", "tool": "shell", "status": "completed", "input": {"cwd": value}}
    )
    shown = _bytes(get_format("json").render(_load(document), REDACT))  # type: ignore[arg-type]
    assert b"Smith" not in shown and b"zq7" not in shown
    assert b"[redacted: home-user 1]" in shown


@pytest.mark.parametrize(
    "shapes",
    [
        ["`/home/{}`", "(/home/{}),", "'/home/{}'", '"/home/{}"', "</home/{}>", "/home/{}.", "/home/{}!"],
        ["C:\\Users\\{}\\x;", "C:\\\\Users\\\\{}\\\\x", "file:///c%3A/Users/{}/x", "c%253A%255CUsers%255C{}%255Cx"],
        ["/Users/{}/x", "C:\\Users\\{}\\x", "//srv/Users/{}/x", "\\\\srv\\Users\\{}\\x", "smb://srv/s/Users/{}/x"],
    ],
    ids=["punctuation", "escapes", "shares"],
)
@pytest.mark.parametrize(
    "name",
    [
        ("alicezq7", "alicezq7", "alicezq7", "alicezq7"),
        ("John Smith", "John%20Smith", "John%2520Smith", "John\\ Smith"),
        ("jos\u00e9", "jos%C3%A9", "jos%25C3%25A9", "jos\\u00e9"),
        ("jo_s\u00e9", "jo%5Fs%C3%A9", "jo%255Fs%25C3%25A9", "jo\\_s\u00e9"),
    ],
    ids=["word", "words", "letter", "escaped"],
)
def test_a_home_folder_user_is_one_marker_however_the_path_writes_it(shapes: list[str], name: tuple[str, ...]) -> None:
    """A name ran on into the punctuation after it (``alicezq7)``, ``alicezq7.``, ``alicezq7```), which its
    marker took and which made it another value, another marker; a name escaped (``John%20Smith``,
    ``jos%C3%A9``, ``jos\\u00e9``) is the same name: one user, one marker, the punctuation kept."""
    from vis_export.redaction.redact import redacted_line

    plain, escaped, twice, written = name

    def form(shape: str) -> str:  # the name as the shape's path writes it: escaped twice, once, in JSON, or so
        return twice if "%25" in shape else escaped if "%" in shape else plain if "\\\\" in shape else written

    text = " ".join(shape.format(form(shape)) for shape in shapes)
    expected = " ".join(shape.format("[redacted: home-user 1]") for shape in shapes)
    assert redacted_line(text, Redaction()) == expected


# A home folder as tools write it beside ``/home/<user>`` and ``C:\\Users\\<user>``: a Windows path with forward
# slashes in any case (Node, VS Code, Git for Windows), in a file URI, percent-escaped whole (a query's value),
# after a remote URI's host (VS Code's remote URIs, ssh), after an scp or rsync host, seen from WSL.
HOME_SHAPES = [
    "c:/users/alicezq7/project/main.py",
    "C:/Users/alicezq7",
    "d:/USERS/alicezq7/x.txt",
    "file:///c:/users/alicezq7/project/main.py",
    "file:///c%3A/users/alicezq7/project/main.py",
    "c%3A%2Fusers%2Falicezq7%2Fproject",
    "C%3A%5CUsers%5Calicezq7%5Cproject",
    "?path=%2Fhome%2Falicezq7%2Fproject%2Fmain.py",
    "%2FUsers%2Falicezq7",
    "%2fhome%2falicezq7%2fnotes.md",
    "%2Fvar%2Fhome%2Falicezq7",
    "vscode-remote://ssh-remote+myhost/home/alicezq7/project/main.py",
    "vscode-remote://ssh-remote%2Bmyhost/home/alicezq7/project/main.py",
    "vscode-remote://wsl%2Bubuntu/mnt/c/Users/alicezq7/project",
    "ssh://git@myhost:2222/home/alicezq7/repo.git",
    "sftp://myhost/Users/alicezq7/notes.md",
    "file://myhost/home/alicezq7/share",
    "scp main.py myhost:/home/alicezq7/project/",
    "rsync -a bob@myhost:/Users/alicezq7/ .",
    "/mnt/c/Users/alicezq7/project",
    # a VS Code URI escaped whole (a query's value), slashes escaped twice (a URI in another's query)
    "vscode-remote%3A%2F%2Fssh-remote%2Bmyhost%2Fhome%2Falicezq7%2Fx",
    "file%3A%2F%2F%2Fc%253A%252FUsers%252Falicezq7%252Fx",
    "%252Fhome%252Falicezq7%252Fx",
    "C%253A%255CUsers%255Calicezq7%255Cx",
    # Windows shares and WSL's (UNC, also JSON-escaped and with its long form's prefix), smb URIs
    "\\\\server\\share\\Users\\alicezq7\\x",
    "\\\\\\\\server\\\\C$\\\\Users\\\\alicezq7\\\\x",
    "\\\\server\\Users\\alicezq7",
    "\\\\?\\UNC\\server\\share\\users\\alicezq7\\x",
    "\\\\wsl$\\Ubuntu\\home\\alicezq7\\x",
    "//wsl.localhost/Ubuntu-22.04/home/alicezq7/x",
    "//server/Users/alicezq7",
    "smb://server/share/Users/alicezq7/x",
    "smb://nas/home/alicezq7",
    # a path in punctuation; a slash JSON-escaped (PHP's ``\/``)
    "(/home/alicezq7), '/home/alicezq7' and \"/home/alicezq7\" <C:\\Users\\alicezq7> `/Users/alicezq7`.",
    "\\/home\\/alicezq7\\/x",
    # a local file in a URL: VS Code's own, a loopback server's, a web URL's query
    "vscode-file://vscode-app/c:/Users/alicezq7/AppData/x.js",
    "http://localhost:5500/C:/Users/alicezq7/x.html",
    "https://example.com/open?path=/home/alicezq7/x",
]


@pytest.mark.parametrize("place", ["prose", "tool output", "tool input"])
@pytest.mark.parametrize("shape", HOME_SHAPES)
def test_a_home_folder_in_any_shape_is_its_user_s_marker_in_an_export(shape: str, place: str) -> None:
    """A session whose only secret is a home folder in one of these shapes (so only the prefilter's
    JSON pass can send its message to the walk): exported with ``--redact``, the user is the marker
    where it was, as in ``/home/[redacted: home-user 1]/``, and the rest of the path stays."""
    document = _base()
    PLACES[place](document, f"cwd {shape}")
    shown = _bytes(get_format("json").render(_load(document), REDACT))  # type: ignore[arg-type]
    assert b"zq7" not in shown
    assert _json(shape.replace("alicezq7", "[redacted: home-user 1]")).encode() in shown


@st.composite
def _home_paths(draw: st.DrawFn) -> str:
    """A home folder's path in a drawn shape: each slash written or escaped in either case, a Windows
    folder in any case after a drive (its colon escaped or not) with either slash, after a remote host."""
    slash = st.sampled_from(["/", "%2F", "%2f"])
    if draw(st.booleans()):
        before = draw(st.sampled_from(["", "x=", "%3D", "file://", "file://h", "vscode-remote://wsl%2Bu", "h:"]))
        parents = draw(st.sampled_from([["home"], ["var", "home"], ["Users"], ["mnt", "c", "Users"]]))
        return before + "".join(draw(slash) + name for name in parents) + draw(slash) + "alicezq7" + draw(slash) + "x"
    users = "".join(draw(st.sampled_from([c, c.upper()])) for c in "users")
    windows = st.sampled_from(["\\", "\\\\", "/", "%5C", "%5c", "%2F"])
    drive = draw(st.sampled_from("cCdZ")) + draw(st.sampled_from([":", "%3A", "%3a"]))
    before = draw(st.sampled_from(["", "file:///", "at "]))
    return f"{before}{drive}{draw(windows)}{users}{draw(windows)}alicezq7{draw(windows)}x"


@settings(max_examples=examples(60), deadline=None)
@given(_home_paths())
def test_a_home_folder_in_a_drawn_shape_is_its_user_s_marker(path: str) -> None:
    """The shapes above drawn together: the session's only secret, its user is the marker (the
    prefilter's JSON pass sends its message to the walk, the rule takes the user and only it)."""
    document = _base()
    PLACES["tool output"](document, path)
    shown = _bytes(get_format("json").render(_load(document), REDACT))  # type: ignore[arg-type]
    assert b"zq7" not in shown
    assert _json(path.replace("alicezq7", "[redacted: home-user 1]")).encode() in shown


# A user's name as drawn for the attacks below: words of letters of any script and digits, with the signs names
# hold inside them (``jo.smith``, ``ann-marie``, ``JOHNSM~1``); a generic folder's name whole is none.
_NAME_PART = st.lists(
    st.one_of(st.characters(categories=["Lu", "Ll", "Lo", "Nd"]), st.sampled_from("._-~+")), min_size=1, max_size=8
).map("".join)
_USER_NAMES = (
    st.lists(_NAME_PART.filter(lambda part: part[0] not in "." and part[-1] not in "."), min_size=1, max_size=4)
    .map(" ".join)
    .filter(lambda name: name.split(" ")[0].rstrip(".").lower() not in {*SHARED_HOMES, "all"})
)


def _written_name(name: str, how: str) -> str:
    """``name`` as a path of that shape writes it: JSON-escaped (letters past ASCII as ``\\u00e9``), percent-escaped
    once or twice, its spaces escaped for a shell, or as it is."""
    if how == "json":
        return json.dumps(name)[1:-1]
    if how.startswith("%"):
        return quote(name if how == "%" else quote(name, safe=""), safe="")
    return name.replace(" ", "\\ ") if how == "shell" else name


# A home folder in each shape, a folder after it: ``{}`` the user, written as the second item says.
_DRAWN_HOMES = [
    ("/home/{}/x", ""),
    ("/Users/{}/x", ""),
    ("/Users/{}/x", "shell"),
    ("/mnt/c/Users/{}/x", ""),
    ("C:\\Users\\{}\\x", ""),
    ("d:/USERS/{}/x", ""),
    ("C:\\\\Users\\\\{}\\\\x", "json"),
    ("file:///c%3A/Users/{}/x", "%"),
    ("%252Fhome%252F{}%252Fx", "%%"),
    ("vscode-remote%3A%2F%2Fssh-remote%2Bh%2Fhome%2F{}%2Fx", "%"),
    ("\\\\srv\\share\\Users\\{}\\x", ""),
    ("\\\\wsl$\\Ubuntu\\home\\{}\\x", ""),
    ("smb://srv/s/Users/{}/x", "%"),
    ("//srv/Users/{}/x", ""),
]


@settings(max_examples=examples(200), deadline=None)
@given(
    _USER_NAMES,
    st.lists(st.sampled_from(_DRAWN_HOMES), min_size=1, max_size=3),
    st.sampled_from(["", " ", "cd ", "(", '"', "'", "`", "<", "=", "\n", "見", "\t"]),
    st.sampled_from(["", " ", ")", ",", ".", '"', "`", ">", "]", "\n", " and then", "!", ";", ":"]),
)
@example("\u00aa", [("C:\\\\Users\\\\{}\\\\x", "json")], "", "")  # a JSON escape after the folder's backslash
@example("0", [("\\\\srv\\share\\Users\\{}\\x", "")], "見", "")  # a share's path right after a CJK letter
def test_a_drawn_user_in_a_drawn_home_folder_is_one_marker_and_only_it(
    name: str, shapes: list[tuple[str, str]], before: str, after: str
) -> None:
    """Users of any script, of several words, in home folders of every shape (escaped, shared, remote) between
    punctuation and prose: each user is the marker, the same one in each shape, and nothing else is taken."""
    from vis_export.redaction.redact import redacted_line

    text = before + " ; ".join(shape.format(_written_name(name, how)) for shape, how in shapes) + after
    expected = before + " ; ".join(shape.format("[redacted: home-user 1]") for shape, _ in shapes) + after
    assert redacted_line(text, Redaction()) == expected


# Near misses of a home folder: a web page's address (its path, its ``#/`` route; escaped whole too), a folder
# named home inside another or in a home (``~/home``), a name like a home's, a generic folder, a variable.
_NEAR_HOMES = [
    "https://{h}/c:/Users/{n}/x",
    "https://{h}//home/{n}/x",
    "https://{h}/users/{n}",
    "wss://{h}/Users/{n}/x",
    "git+https://{h}/home/{n}/r.git",
    "https://{h}/x?q=1#/home/{n}",
    "/srv/home/{n}/x",
    "~/home/{n}",
    "/homes/{n}/x",
    "//cdn.{h}/home/{n}/x",
    "\\\\srv\\share\\x\\{n}\\y",
    "C:\\Program Files\\{n}\\x",
    "/home/$USER/{n}",
    "vscode://settings/home/{n}",  # an extension's link: only ``vscode://file/`` names a file
    "/Volumes/{n}/Users",
]


@settings(max_examples=examples(200), deadline=None)
@given(
    st.sampled_from(_NEAR_HOMES),
    st.text(string.ascii_letters + string.digits + "é見._-", min_size=1, max_size=8),
    st.sampled_from(["x.com", "example.org", "x.com:8080", "user@x.com"]),
    st.booleans(),
)
@example("~/home/{n}", "0", "x.com", False)
@example("https://{h}/x?q=1#/home/{n}", "0", "x.com", False)
@example("https://{h}/x?q=1#/home/{n}", "0", "x.com", True)
def test_a_near_miss_of_a_home_folder_gets_no_marker(near: str, name: str, host: str, escaped: bool) -> None:
    """``~/home/<name>`` (a folder in a home) and a web page's ``#/home/`` route, escaped or not, were taken."""
    from vis_export.redaction.detect import Detector

    text = near.format(n=name, h=host)
    text = quote(text, safe="") if escaped else text
    assert not [span for span in Detector(Redaction()).spans(text) if span[2] == "home-user"], text


def test_an_index_holds_no_user_of_a_home_folder_in_any_shape(tmp_path: Path) -> None:
    """Each shape the only secret of its session: no index document holds its user, and an index built
    with ``--redact`` finds none (one built without it finds the shapes its words part)."""
    pytest.importorskip("tantivy")
    from vis_export.jobs.indexing import index
    from vis_export.searchindex import search

    sessions = []
    for number, shape in enumerate(HOME_SHAPES):
        document = _base()
        document["id"] = f"home_{number}"
        PLACES["tool output"](document, f"cwd {shape}")
        sessions.append(_load(document))
    docs = [doc for session in sessions for doc in documents(session, "visible", Redaction())]
    assert "zq7" not in json.dumps(docs, ensure_ascii=False)
    index(sessions, tmp_path / "redacted", reasoning="visible", redact=True)
    index(sessions, tmp_path / "plain", reasoning="visible")
    assert not search("alicezq7", tmp_path / "redacted")
    assert search("alicezq7", tmp_path / "plain")


@pytest.mark.parametrize(
    "text", ["https://a.example/login?email=alice.q%40corp7.com&next=/", "mailto:alice.q%40corp7.com"]
)
def test_an_email_address_with_its_at_sign_escaped_is_taken(text: str) -> None:
    """A query writes an address's ``@`` as ``%40``: it was shown (no hint of it, no rule's)."""
    from vis_export.redaction.redact import redacted_line

    assert "corp7" not in redacted_line(text, Redaction())


def _kept_glued(kind: str, glue: str) -> bool:
    """Where a token glued to a name is kept by design (docs/redact.md): OpenAI's generic ``sk-`` after a
    letter or digit (``task-PROJ-1234-…``; its own keys are found there by the ``T3BlbkFJ`` they hold), and
    an AWS key id after a capital or digit (a longer run of them: DNA, base64, an upper-case digest)."""
    if kind == "openai-key":
        return glue.isalnum()
    return kind in ("aws-access-key", "ASIA") and (glue.isupper() or glue.isdigit())


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(list(PROVIDER_TOKENS)).flatmap(lambda kind: st.tuples(st.just(kind), PROVIDER_TOKENS[kind])),
    st.text(ALNUM, max_size=6),
    st.sampled_from(["_", "-", *string.ascii_letters, *string.digits]),
    st.booleans(),
)
@example(("google-api-key", ("AIza" + _BODY[:35], _BODY[:35])), "DB", "_", False)
@example(("anthropic-key", ("sk-ant-api03-" + _BODY, _BODY)), "client", "_", True)
@example(("github-token", ("ghp_" + _BODY, _BODY)), "MY", "_", False)
@example(("aws-access-key", ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE")), "", "x", True)
def test_a_provider_s_token_glued_to_a_name_is_taken(
    token: tuple[str, Secret], name: str, glue: str, reference: bool
) -> None:
    """A token right after a name (``DB_AIza…``, ``client_sk-ant-…``, ``MY_ghp_…``, ``xAKIA…``) is taken
    whole, by RE2's twins and by Python's expressions alike, but where ``_kept_glued`` says."""
    from vis_export.redaction.detect import Detector

    kind, (secret, core) = token
    text = f"{name}{glue}{secret} end"
    with _python_only() if reference else nullcontext():
        spans = Detector(Redaction()).spans(text)
    at = text.rindex(core)  # in the token, not in the name before it
    taken = any(start <= at and at + len(core) <= end for start, end, _ in spans)
    assert taken != _kept_glued(kind, glue), (text, spans)


# Pieces of text a joined search could mistake: the separator, escapes and invisible characters
# that hide a hint, the start or end of a hint (cut where two texts meet), a wide character.
_JOIN_PIECES = st.sampled_from(
    ["\f", "\n", "\\", "\u200b", "ghp\\_", "Bearer", " x", "password", "=", "sk-", "é", "@a.", "pin"]
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(
                _ASCII_FILLER, _JOIN_PIECES, st.sampled_from(list(KINDS)).flatmap(KINDS.__getitem__).map(lambda s: s[0])
            )
        ).map("".join),
        max_size=12,
    ),
    st.integers(1, 5),
)
@example(["a\\b", "x ghp\\_", "a\fb", "x sk-", "\u200b", "ghp\u200b_"], 6)  # two hide, one holds the separator
@example(["help", "pin=4821"], 2)  # ``pin``'s non-word character before it: the separator, the text after it
def test_one_search_over_joined_texts_misses_no_text_a_search_of_each_finds(texts: list[str], batch: int) -> None:
    """Strings are searched joined, many at once, each hit placed in its string by its offset:
    every string that a search of its own finds something in is found so (a string that holds
    the separator too, as shown by Markdown, hidden by an invisible character; a ``pin=`` that
    starts it, whose hit starts at the separator before it). Only a hint
    that may end in a blank, ``Bearer``'s, may take in the separator and be found more."""
    from vis_export.redaction.detect import triggered, triggered_among

    found = triggered_among(texts, batch)
    alone = {index for index, text in enumerate(texts) if triggered(text)}
    assert alone <= found
    assert all(texts[index].endswith("Bearer") for index in found - alone)


NOT_SECRETS = [
    "commit 3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f901 fixed it (3f2a9c0)",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "image sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    "![plot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "def get_password(self, password: str) -> str:\n    token = self.tokenizer.next_token()\n    return password",
    "max_tokens=4096, api_key=os.environ['OPENAI_API_KEY'], secret_key=settings.SECRET_KEY",
    "version 1.5.0-rc.2+build.20250101 and python3.11",
    "self.assertEqual(result, expected_value_for_this_particular_test_case)",
    'password = "<your password>"  # or ${DB_PASSWORD}',
    "/home/user/project and /Users/Shared/x and /home/default/x",
    "see https://sites.example.com/site/someone/home/benchmark",
    # a web page's /home/ and a REST API's /users/, escaped or not; a folder named home inside another
    "see https://www.example.com/home/index.html and GET /api/v1/users/42/profile",
    "curl https://api.github.com/users/octocat/repos",
    "next=https%3A%2F%2Fexample.com%2Fhome%2Fabout",
    "%2Fsrv%2Fhome%2Fbenchmark and ssh://host/srv/home/x",
    "C:/Users/Public/Documents and c:\\users\\default\\x and %2Fhome%2Fuser%2Fx",
    # a web address's path is a site's, never a folder here, written or escaped; so is a protocol-relative one's /home/
    "https://x.com/c:/Users/bob and https://x.com/c%3A/Users/bob and https://x.com//home/bob",
    "next=https%3A%2F%2Fx.com%2Fc%3A%2FUsers%2Fbob and wss://x.com/C:/users/bob",
    '<a href="//cdn.example.com/home/about">',
    # a generic folder whole, in any writing; an ellipsis; a variable
    "C:\\Users\\Default User\\x and C%3A%5CUsers%5CAll%20Users and /home/public. and /home/... and /home/$USER/x",
    "pwd = (self.password.encode('utf-8') if isinstance(self.password, str) else self.password)",
    # ``AKIA``, ``ACCA`` by chance in a longer run of capitals and digits: DNA, base64, an upper-case digest
    "seq = 'TATCGTCGAAATCTACGGACCGGAATCTTCCGGTAAAACCACGCTGACGCTGCAGGTGATCGCCGCA'",
    "wasm = 'HI2AhgLIANB+IMLKAIAKAKIASIAIAFBASAAKAIAEQMANgIAIAN'",
    "SHA256 3F2A9C0D1E4BACCA0123456789ABCDEF5A6978C0D1E2F3A4B5C6D7E8F901AB",
    "git checkout -b task-PROJ-1234-fix-login-page",  # ``sk-`` where a word ends
    # ``rk_test_``, ``sk_live_`` where a word ends, before a name of words (a test's, a flag's)
    "def benchmark_test_SerializationPerformance(self):",
    "TEST_F(network_test_ConnectionTimeout, RetriesTwice)",
    "if flags.mask_live_previewRendering:",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_what_is_not_a_secret_gets_no_marker(text: str) -> None:
    document = _base()
    PLACES["prose"](document, text)
    assert list(findings(_load(document), Redaction())) == []


GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "input"


@pytest.mark.parametrize("name", sorted(path.name for path in GOLDEN.iterdir()))
def test_a_golden_session_holds_no_secret_and_gets_no_marker(name: str) -> None:
    """The goal of redact.md's false-positive measure, on the sessions the suite knows
    by heart: nothing found, at any reasoning level, and no text output holds a marker."""
    from vis_export.sources import read

    sessions = [result.session for result in read([str(GOLDEN / name)]) if result.session is not None]
    assert sessions
    for session in sessions:
        for reasoning in ("none", "visible", "all"):
            assert list(findings(visible_session(session, reasoning), Redaction())) == []
        options = ExportOptions(redact=True, reasoning="all")
        for where, data in _text_outputs(session, options).items():
            assert b"[redacted: " not in data, where


def test_custom_patterns_and_a_rules_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('allow = ["@example\\\\.org$"]\n[[pattern]]\nkind = "employee-id"\nregex = "EMP-[0-9]{6}"\n')
    document = _base()
    PLACES["prose"](document, "EMP-123456 and jo@example.org and jo@corp.test and REF-42 ok")
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    command = [sys.executable, "-m", "vis_export", "convert", str(source), "--to", "json", "--redact-rules", str(rules)]
    done = subprocess.run([*command, "--redact-pattern", r"REF-(?P<secret>\d+)"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "[redacted: employee-id 1]" in done.stdout and "jo@example.org" in done.stdout
    assert "jo@corp.test" not in done.stdout and "REF-[redacted: custom 1]" in done.stdout
    bad = subprocess.run([*command, "--redact-pattern", "("], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a regular expression" in bad.stderr and "Traceback" not in bad.stderr


def test_scan_says_where_and_what_never_the_value(tmp_path: Path) -> None:
    document = _base()
    PLACES["tool input"](document, "ghp_Abcdefghijklmnopqrstuvwxyz0123456789")
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(_base()))
    run = [sys.executable, "-m", "vis_export", "scan"]
    found = subprocess.run([*run, str(source)], capture_output=True, text=True)
    assert found.returncode == 1
    assert f"{source}: session redaction_session: messages[1].content[1].input.steps[0].cmd.arg: github-token" in (
        found.stdout
    )
    assert "github-token: 1" in found.stdout and "Abcdefghijklmnop" not in found.stdout
    as_json = json.loads(subprocess.run([*run, str(source), "--json"], capture_output=True, text=True).stdout)
    assert as_json["counts"] == {"github-token": 1} and "Abcdefghij" not in json.dumps(as_json)
    nothing = subprocess.run([*run, str(clean)], capture_output=True, text=True)
    assert nothing.returncode == 0 and nothing.stdout == ""
    report = tmp_path / "report.json"
    out = tmp_path / "out.md"
    convert = [sys.executable, "-m", "vis_export", "convert", str(source), "--to", "md", "-o", str(out)]
    done = subprocess.run([*convert, "--redact-report", str(report)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(report.read_text())["counts"] == {"github-token": 1}
    assert "Abcdefghij" not in out.read_text() and "[redacted: github-token 1]" in out.read_text()


def test_private_reasoning_is_hidden_before_numbering() -> None:
    """Numbers count only what is shown: a gap would tell that hidden reasoning held a secret."""
    document = _base()
    _blocks(document).append({"id": "r", "type": "reasoning", "text": "mail x1@example.org"})
    PLACES["prose"](document, "mail x2@example.org")
    shown = get_format("markdown").render(_load(document), REDACT)  # type: ignore[arg-type]
    assert "[redacted: email 1]" in shown and "email 2" not in shown


@pytest.mark.slow
def test_dask_workers_write_and_index_only_the_redacted_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every unit goes to a local cluster's workers (the job waits for them, ``all_on_workers``):
    the options they are handed carry the rules, and what they write and index is the same redacted view."""
    pytest.importorskip("distributed")
    from all_on_workers import waiting

    from vis_export.distributed.local import ClusterProcess
    from vis_export.jobs.conversion import convert
    from vis_export.jobs.indexing import index_sources
    from vis_export.searchindex import search

    folder = tmp_path / "in"
    folder.mkdir()
    cores = []
    for n in range(3):
        document = _base()
        document["id"] = f"s{n}"
        for place, kind in zip(PLACES, [*KINDS] * 2, strict=False):
            text, core = _FIXED[kind](f"{n}Qz8Xw3Lk9Mv2Np7Rt5Bd")
            PLACES[place](document, text)
            cores.append(core)
        (folder / f"s{n}.json").write_text(json.dumps(document))
    monkeypatch.setattr(ClusterProcess, "answered", waiting)
    options = ExportOptions(redact=True)
    here = convert([str(folder)], "markdown", tmp_path / "here", options)
    dask = convert([str(folder)], "markdown", tmp_path / "dask", options, dask="local:1")
    assert not dask.failed
    written = {path.name: path.read_bytes() for path in (tmp_path / "dask").iterdir()}
    assert written == {path.name: path.read_bytes() for path in (tmp_path / "here").iterdir()} and len(written) == 3
    _absent(cores, b"".join(written.values()), "dask markdown")
    index_sources([str(folder)], tmp_path / "idx", reasoning="visible", dask="local:1", redact=Redaction())
    for core in cores:
        assert not search(f'"{core}"', tmp_path / "idx")
    assert search("redacted", tmp_path / "idx")
    assert not here.failed


_FIXED: dict[str, Callable[[str], Secret]] = {
    "openai-key": lambda c: (f"sk-proj-{c}{c}", f"{c}{c}"),
    "anthropic-key": lambda c: (f"sk-ant-api03-{c}{c}", f"{c}{c}"),
    "aws-access-key": lambda c: (f"AKIA{c.upper()[:16]}", c.upper()[:16]),
    "github-token": lambda c: (f"ghp_{c}{c[:15]}", f"{c}{c[:15]}"),
    "gitlab-token": lambda c: (f"glpat-{c}", c),
    "slack-token": lambda c: (f"xoxb-1234567890-{c}", c),
    "google-api-key": lambda c: (f"AIza{c}{c[:14]}", f"{c}{c[:14]}"),
    "stripe-key": lambda c: (f"sk_live_{c}", c),
    "private-key": lambda c: (f"-----BEGIN PRIVATE KEY-----\nMIIE{c}{c}\n-----END PRIVATE KEY-----", f"{c}{c}"),
    "jwt": lambda c: (f"{_b64url({'alg': 'HS256'})}.{_b64url({'sub': 'x'})}.{c}", c),
    "uri-credentials": lambda c: (f"mysql://root:{c}@db/app", c),
    "secret": lambda c: (f"API_TOKEN={c}", c),
    "authorization": lambda c: (f"Authorization: Bearer {c}{c}", f"{c}{c}"),
    "email": lambda c: (f"{c.lower()}@example.net", c.lower()),
    "home-user": lambda c: (f"/Users/{c.lower()[:8]}/x", c.lower()[:8]),
}


@pytest.mark.parametrize("letters", ["令牌", "ключ", "κλειδί", "é"])
@pytest.mark.parametrize("kind", list(_FIXED))
def test_a_secret_beside_a_letter_of_another_script_is_redacted(kind: str, letters: str) -> None:
    """CJK is written without spaces: a token right after (or before) a CJK, Cyrillic or
    Greek letter, which Unicode counts as a word's, is a token all the same."""
    text, core = _FIXED[kind]("1Qz8Xw3Lk9Mv2Np7Rt5Bd")  # as long as the kinds take
    document = _base()
    PLACES["prose"](document, f"{letters}{text}{letters}")
    shown = _bytes(get_format("json").render(_load(document), REDACT))  # type: ignore[arg-type]
    _absent([core], shown, "json")


def test_serves_list_names_no_home_folder_of_a_source() -> None:
    from vis_export.serve.catalogue import _entry

    session = Session("s", (), title="for bob@example.org", source="/home/alice7q/chats/s.json")
    row = _entry(session, "key", 0, Redaction()).summary.row()
    assert "alice7q" not in json.dumps(row) and "bob@" not in json.dumps(row)
    assert row["source"] == "/home/[redacted: home-user 1]/chats/s.json"


@settings(max_examples=examples(15), deadline=None)
@given(everywhere())
def test_markers_are_styled_in_html_text_and_nowhere_else(case: tuple[dict[str, Any], list[str]]) -> None:
    """Each marker in text is a ``span.redacted``; styling changes no text a browser reads
    (code's included, R1), no attribute, and nothing in the title."""
    from htmldom import NS, parse, text_content

    import vis_export.formats.marked as marked
    from vis_export.formats.highlight import TOKEN_STYLES

    session = _load(_document_with_links(case[0]))
    with time_limit(60):
        html = get_format("html").render(session, REDACT)  # type: ignore[arg-type]
        real = marked.styled
        marked.styled = lambda html: html
        try:
            plain = get_format("html").render(session, REDACT)  # type: ignore[arg-type]
        finally:
            marked.styled = real
    styled, unstyled = parse(html), parse(plain)
    spans = [e for e in styled.iter() if e.tag == NS + "span" and e.get("class") == "redacted"]
    assert spans and all(MARKER.fullmatch(text_content(span)) for span in spans)
    assert text_content(styled) == text_content(unstyled)

    def token(element: Any) -> bool:  # a highlighter's span: one a marker cut is moved out of it, or goes
        return bool(element.tag == NS + "span" and element.get("class") in TOKEN_STYLES)

    def attributes(root: Any) -> list[dict[str, str]]:
        return [dict(e.attrib) for e in root.iter() if isinstance(e.tag, str) and e not in spans and not token(e)]

    assert attributes(styled) == attributes(unstyled)
    assert Counter(e.get("class") for e in styled.iter() if token(e)) <= Counter(
        e.get("class") for e in unstyled.iter() if token(e)
    )
    assert not any(e.tag == NS + "span" for title in styled.iter(NS + "title") for e in title)


def _drawn(data: bytes) -> tuple[str, list[bool], int]:
    """A PDF's text as drawn (line breaks left out), whether each of its characters is
    set in an italic face, and how many grey grounds (a marker's) are filled."""
    from io import BytesIO

    from pypdf import PdfReader

    text: list[str] = []
    italic: list[bool] = []
    grounds = 0
    for page in PdfReader(BytesIO(data)).pages:
        fill: tuple[float, ...] = ()

        def operator(op: bytes, args: list[Any], *_: Any) -> None:
            nonlocal fill, grounds
            if op in (b"scn", b"sc", b"rg"):
                fill = tuple(round(float(arg), 3) for arg in args)
            elif op in (b"f", b"f*") and fill == (0.498, 0.498, 0.498):
                grounds += 1

        def shown(piece: str, _cm: Any, _tm: Any, font: Any, _size: Any) -> None:
            face = str(font.get("/BaseFont", "")) if font else ""
            piece = piece.replace("\n", "")
            text.append(piece)
            italic.extend([("Italic" in face or "Oblique" in face)] * len(piece))

        page.extract_text(visitor_operand_before=operator, visitor_text=shown)
    return "".join(text), italic, grounds


# Markers in code a line wraps, in a long word, under a long custom kind, in a code span and in fenced code.
TYPST_MARKERS = [
    {"type": "code", "language": "python", "text": "x = '" + "a" * 70 + " sk-proj-" + "Zq7Lp2Xw9Rt4" * 4 + "' # end\n"},
    {"type": "prose", "markdown": "see postgres://me:Zq7Lp2Xw9Rt4@db.example.org/path/that/is/long"},
    {"type": "prose", "markdown": "a code span `key=ab.person@example.org` and ticket-ID-Tq4Wm8Yr2Kd6-and-more-words"},
    {"type": "prose", "markdown": "```python\nconnect('mysql://admin:Wq7Lp2Xw9Rt5@db/app')\n```"},
]


@settings(max_examples=3, deadline=None)
@given(everywhere())
def test_markers_are_styled_in_the_typst_pdf(case: tuple[dict[str, Any], list[str]]) -> None:
    """In prose, code, tool blocks and every field the template draws, a marker is set in
    italic on a grey ground, as in HTML; the rest of the text is what it was (R1)."""
    document, cores = case
    for number, block in enumerate(TYPST_MARKERS):
        _blocks(document).append({"id": f"typst{number}", **block})
    session = _load(document)
    options = ExportOptions(
        redact=Redaction(patterns=(("long-custom-kind-of-ticket-number", r"ticket-ID-(\w+)"),)), pdf_engine="typst"
    )
    with time_limit(120):
        data = get_format("pdf").render(session, options)  # type: ignore[arg-type]
    text, italic, grounds = _drawn(data)
    _absent([*cores, "Zq7Lp2Xw9Rt4", "Tq4Wm8Yr2Kd6", "Wq7Lp2Xw9Rt5"], data + text.encode(), "typst pdf")
    markers = list(MARKER.finditer(text))
    assert len(markers) >= len(PLACES) + len(TYPST_MARKERS)
    assert "[redacted: long-custom-kind-of-ticket-number 1]" in text
    for marker in markers:
        assert all(italic[marker.start() : marker.end()]), marker.group()
    assert grounds >= len(markers)
    unstyled = get_format("pdf").render(session, replace(options, redact=None))  # type: ignore[arg-type]
    assert "redacted:" not in _drawn(unstyled)[0]


def test_a_marker_written_in_an_unredacted_session_is_plain_text_in_the_typst_pdf() -> None:
    """Without --redact nothing is styled: text that reads like a marker is data."""
    document = _base()
    PLACES["prose"](document, "[redacted: email 1]")
    PLACES["code"](document, "[redacted: email 1]")
    data = get_format("pdf").render(_load(document), ExportOptions(pdf_engine="typst"))  # type: ignore[arg-type]
    text, italic, grounds = _drawn(data)
    markers = list(MARKER.finditer(text))
    assert len(markers) == 2 and grounds == 0
    assert not any(any(italic[m.start() : m.end()]) for m in markers)


@given(st.lists(st.one_of(st.text(max_size=30), st.sampled_from(["[redacted: email 1]", "[redacted: x-y 12]"]))))
def test_typst_code_runs_keep_the_text_and_make_each_marker_one_run(pieces: list[str]) -> None:
    """R1 in the Typst tree: the runs hold the code's text exactly (the lexer's classes
    cut at markers), and each marker is one run of the marker class."""
    from vis_export.formats.lexing import HighlightBudget
    from vis_export.formats.typst_tree import MARKER as MARKER_CLASS, code

    text = "".join(pieces) + "."
    node = code(text, "python", 10**6, HighlightBudget(), marked=True)
    runs = [run for chunk in node["chunks"] for run in chunk]
    assert "\n".join("".join(run[1] for run in chunk) for chunk in node["chunks"]) == text
    assert [run[1] for run in runs if run[0] == MARKER_CLASS] == MARKER.findall(text)


def _document_with_links(document: dict[str, Any]) -> dict[str, Any]:
    """Markers inside link targets and image sources too (attributes a marker must not break)."""
    _blocks(document).append(
        {
            "id": "links",
            "type": "prose",
            "markdown": "[db](postgres://me:Zq7Lp2Xw9Rt4@db/x) ![i](https://me:Zq7Lp2Xw9Rt4@h/i.png) <b>a@b.co</b>",
        }
    )
    return document


def test_show_index_and_serve_take_redact_on_the_command_line(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    document = _base()
    PLACES["tool output"](document, "token at glpat-Zq7Lp2Xw9Rt4Vb6Nm3Kj")
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    cli = [sys.executable, "-m", "vis_export"]
    shown = subprocess.run([*cli, "show", str(source), "--session", document["id"], "--redact"], capture_output=True)
    assert shown.returncode == 0 and b"[redacted: gitlab-token 1]" in shown.stdout and b"Zq7Lp2" not in shown.stdout
    block = [*cli, "show", str(source), "--session", document["id"], "--block", "planted1", "--redact"]
    assert b"[redacted: gitlab-token 1]" in subprocess.run(block, capture_output=True).stdout
    indexed = subprocess.run([*cli, "index", str(source), "--index", str(tmp_path / "idx"), "--redact"])
    assert indexed.returncode == 0
    found = subprocess.run(
        [*cli, "search", "Zq7Lp2Xw9Rt4Vb6Nm3Kj", "--index", str(tmp_path / "idx"), "--json"], capture_output=True
    )
    assert json.loads(found.stdout) == []
    refused = subprocess.run(
        [*cli, "serve", str(source), "--redact", "--index", str(tmp_path / "idx"), "--port", "0"], capture_output=True
    )
    assert refused.returncode == 2 and b"leave out --index" in refused.stderr


def test_stored_attachments_of_text_types_are_redacted_and_images_left_alone() -> None:
    from types import MappingProxyType

    from vis_export.model import StoredAttachment

    def stored(name: str, media_type: str, data: bytes) -> StoredAttachment:
        return StoredAttachment(name, "m2", media_type, f"{name} for a.b@example.org", len(data), data, None, None)

    text = b"DB_PASSWORD=Zq7Lp2Xw9Rt4 and c.d@example.org\n"
    image = b"\x89PNG\r\n\x1a\nsk-proj-Zq7Lp2Xw9Rt4Vb6Nm3KjAbCdEf"
    attachments = {"t": stored("t", "text/plain; charset=utf-8", text), "i": stored("i", "image/png", image)}
    session = Session("s", (), attachments=MappingProxyType(attachments))
    view = visible_session(session, "visible", Redaction())
    shown = view.attachments
    assert shown["t"].data == b"DB_PASSWORD=[redacted: secret 1] and [redacted: email 2]\n"
    assert shown["t"].size_bytes == len(shown["t"].data or b"")
    assert shown["t"].filename == "t for [redacted: email 1]"
    assert shown["i"].data == image and shown["i"].filename == "i for [redacted: email 1]"


def test_a_hex_value_assigned_to_a_secrets_name_is_a_secret_though_a_bare_one_is_an_id() -> None:
    token = "3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f901"
    document = _base()
    PLACES["code"](document, f"export GITHUB_TOKEN={token}  # and commit {token[::-1]}")
    shown = get_format("json").render(_load(document), REDACT)  # type: ignore[arg-type]
    assert token not in shown and "[redacted: secret 1]" in shown and token[::-1] in shown


@pytest.mark.parametrize("lenient", [False, True])
def test_problem_lines_quote_no_secret(tmp_path: Path, lenient: bool) -> None:
    """A problem's location names a key of the source: under --redact it is redacted
    like the key itself, on the command line (convert, index, scan) and in the API's lines."""
    import vis_export
    from vis_export.reporting import Lines

    core = "Zq7Lp2Xw9Rt4Vb6Nm3Kj"
    document = _base()
    _blocks(document).append(
        {"id": "t", "type": "tool", "tool": "shell", "status": "completed", "input": {f"glpat-{core}": 1}}
    )
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    cli = [sys.executable, "-m", "vis_export"]
    more = ["--lenient"] if lenient else []
    runs = {
        "convert": [*cli, "convert", str(source), "--to", "json", "-o", str(tmp_path / "out.json"), "--redact", *more],
        "index": [*cli, "index", str(source), "--index", str(tmp_path / "idx"), "--redact", *more],
        "scan": [*cli, "scan", str(source), *more],
    }
    for name, command in runs.items():
        stderr = subprocess.run(command, capture_output=True).stderr
        assert b"key is not snake_case" in stderr, (name, stderr)
        assert b"[redacted: gitlab-token 1]" in stderr and core.encode() not in stderr, (name, stderr)
    lines = Lines()
    vis_export.convert([source], "json", tmp_path / "api.json", redact=True, lenient=lenient, report=lines)
    said = "\n".join(lines.problems + lines.warnings)
    assert "key is not snake_case" in said and core not in said, said
    unredacted = Lines()
    vis_export.convert([source], "json", tmp_path / "plain.json", lenient=lenient, report=unredacted)
    assert core in "\n".join(unredacted.problems + unredacted.warnings)  # without --redact, lines are as they were


# Code a lexer cuts markers of into tokens (the number is a number token), in every place HTML shows code.
_CODE_PIECES = st.lists(
    st.one_of(
        st.text(string.ascii_letters + string.digits + " =:;,.'\"[]()-#\n", max_size=12),
        st.sampled_from(["[redacted: email 1]", "[redacted: aws-access-key 12]", "[redacted: secret 3]"]),
    ),
    min_size=1,
).map(lambda pieces: "".join(pieces) + "\n[redacted: secret 3] = 1\n")
CODE_PLACES: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "code": lambda code, language: {"type": "code", "language": language, "text": code},
    "fenced code": lambda code, language: {"type": "prose", "markdown": f"text\n\n```{language}\n{code}```\n"},
    "tool input": lambda code, _: {"type": "tool", "tool": "shell", "status": "completed", "input": {"cmd": code}},
    "tool output": lambda code, _: {
        "type": "tool",
        "tool": "shell",
        "status": "completed",
        "input": {},
        "output": code,
    },
}


def _code_session(code: str, language: str) -> Session:
    document = _base()
    for name, block in CODE_PLACES.items():
        _blocks(document).append({"id": name.replace(" ", "-"), **block(code, language)})
    return _load(document)


@settings(max_examples=examples(25), deadline=None)
@given(_CODE_PIECES, st.sampled_from(["python", "bash", "javascript", "json"]))
def test_markers_in_highlighted_code_are_styled_whole_and_the_code_text_kept(code: str, language: str) -> None:
    """A lexer cuts a marker into tokens; each marker in code is still one ``span.redacted``,
    and the text of each code element is the code, exactly (R1)."""
    from htmldom import NS, code_elements, elements, parse, text_content

    from vis_export.formats.highlight import TOKEN_STYLES

    def token(element: Any) -> bool:
        return bool(element.tag == NS + "span" and element.get("class") in TOKEN_STYLES)

    with time_limit(60):
        root = parse(get_format("html").render(_code_session(code, language), REDACT))  # type: ignore[arg-type]
    body = next(elements(root, "body"))
    for hidden in [*elements(body, "script"), *elements(body, "style")]:
        hidden.clear()
    spans = [e for e in body.iter() if e.tag == NS + "span" and e.get("class") == "redacted"]
    assert all(MARKER.fullmatch(text_content(span)) for span in spans)
    assert len(spans) == len(MARKER.findall(text_content(body))) >= 4 * len(MARKER.findall(code))
    texts = [text_content(element) for element in code_elements(root)]
    assert code in texts
    coloured = [e for c in code_elements(root) if text_content(c) == code for e in c.iter() if token(e)]
    assert language == "json" or coloured  # the rest of the code is highlighted still


def test_markers_in_highlighted_code_are_styled_in_the_weasyprint_pdf() -> None:
    """WeasyPrint draws the HTML: each marker in code is set in italic on a grey ground, the code's text kept."""
    code = "x = [redacted: aws-access-key 12] + 7  # [redacted: email 1]\nconnect([redacted: secret 3])\n"
    data = get_format("pdf").render(_code_session(code, "python"), ExportOptions(redact=True, pdf_engine="weasyprint"))  # type: ignore[arg-type]
    text, italic, grounds = _drawn(data)
    markers = list(MARKER.finditer(text))
    assert len(markers) >= 4 * 3
    for marker in markers:
        assert all(italic[marker.start() : marker.end()]), marker.group()
    assert grounds >= len(markers)
    assert "x = [redacted: aws-access-key 12] + 7" in text


_URL_KINDS = ["openai-key", "github-token", "gitlab-token", "stripe-key", "email", "jwt"]


@st.composite
def _urls_ending_in_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Prose with bare URLs that a secret ends or cuts (Markdown links a bare URL up to the next space)."""
    secrets = [draw(KINDS[kind]) for kind in draw(st.lists(st.sampled_from(_URL_KINDS), min_size=1, max_size=3))]
    prefixes = st.sampled_from(
        ["https://example.org/x?token=", "http://h.example/a/", "https://", "https://h.example#"]
    )
    ends = st.sampled_from(["", ".", "/more", ")", "&page=2"])
    urls = [f"{draw(prefixes)}{text}{draw(ends)}" for text, _ in secrets]
    return "See " + " and ".join(urls) + " now.", [core for _, core in secrets]


@settings(max_examples=examples(20), deadline=None)
@given(_urls_ending_in_secrets())
def test_a_bare_url_a_marker_ends_links_no_marker_and_the_marker_is_styled_whole(case: tuple[str, list[str]]) -> None:
    from htmldom import NS, elements, parse, text_content

    markdown, cores = case
    document = _base()
    _blocks(document).append({"id": "urls", "type": "prose", "markdown": markdown})
    with time_limit(60):
        html = get_format("html").render(_load(document), REDACT)  # type: ignore[arg-type]
    _absent(cores, html.encode(), "html")
    prose = next(e for e in elements(parse(html), "p") if text_content(e).startswith("See "))
    spans = [e for e in prose.iter() if e.tag == NS + "span" and e.get("class") == "redacted"]
    assert len(spans) == len(MARKER.findall(text_content(prose))) >= len(cores)
    assert all(MARKER.fullmatch(text_content(span)) for span in spans)
    for link in elements(prose, "a"):
        assert "redacted" not in text_content(link) + (link.get("href") or ""), text_content(link)


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_a_bare_url_a_marker_ends_keeps_the_marker_whole_in_both_pdf_engines(engine: str) -> None:
    document = _base()
    markdown = (
        "See https://example.org/x?token=ghp_Zq7Lp2Xw9Rt4Vb6Nm3KjAbCdEfGhIjKl12 and https://a.person@example.org."
    )
    _blocks(document).append({"id": "urls", "type": "prose", "markdown": markdown})
    options = ExportOptions(redact=True, pdf_engine=engine)
    text, italic, grounds = _drawn(get_format("pdf").render(_load(document), options))  # type: ignore[arg-type]
    markers = list(MARKER.finditer(text))
    assert [marker.group() for marker in markers][-2:] == ["[redacted: github-token 1]", "[redacted: email 1]"]
    for marker in markers:
        assert all(italic[marker.start() : marker.end()]), marker.group()
    assert grounds >= len(markers)


@settings(max_examples=examples(50), deadline=None)
@given(
    st.sampled_from(["DB_PASSWORD", "password", "api_key", "AUTH_TOKEN", "client-secret"]),
    st.sampled_from(["=", ": ", " = ", ":="]),
    _core(14, ALNUM + "._-"),
    st.sampled_from([".", ",", ";", ":", ")", "!", "?", "...", "."]),
)
def test_the_same_assigned_secret_gets_one_marker_mid_sentence_at_its_end_and_in_quotes(
    name: str, sign: str, value: str, stop: str
) -> None:
    """An assigned value ends before the punctuation that ends a sentence (dots inside it kept):
    the same secret is one marker wherever it is written."""
    assignment = f"{name}{sign}{value}"
    document = _base()
    for number, text in enumerate(
        [f"Set {assignment} first", f"Then ({assignment}{stop}", f'Or {name}{sign}"{value}" and {assignment}{stop}']
    ):
        PLACES["tool output"](document, text)
        _blocks(document).append({"id": f"said{number}", "type": "prose", "markdown": f"Say {assignment}{stop} ok"})
    shown = get_format("json").render(_load(document), REDACT)  # type: ignore[arg-type]
    assert value not in shown
    assert set(MARKER.findall(shown)) == {"[redacted: secret 1]"}, shown


def test_a_marker_where_an_escaped_secret_was_is_styled_whole_in_the_typst_pdf() -> None:
    """Markdown's escapes (``\\-``, ``ghp\\_``) are tokens of their own to mistune: the marker
    that replaced an escaped secret begins with one (``\\[redacted: …]``), and is still one run."""
    document = _base()
    PLACES["prose, escaped"](document, "ghp_Zq7Lp2Xw9Rt4Vb6Nm3KjAbCdEfGhIjKl12 at a\\-b")
    PLACES["prose, escaped"](document, "-----BEGIN PRIVATE KEY-----\nMIIEZq7Lp2Xw9Rt4\n-----END PRIVATE KEY-----")
    options = ExportOptions(redact=True, pdf_engine="typst")
    text, italic, grounds = _drawn(get_format("pdf").render(_load(document), options))  # type: ignore[arg-type]
    markers = list(MARKER.finditer(text))
    assert [marker.group() for marker in markers] == ["[redacted: github-token 1]", "[redacted: private-key 1]"]
    for marker in markers:
        assert all(italic[marker.start() : marker.end()]), marker.group()
    assert grounds >= len(markers)


_HINTED_KEYS = st.from_regex(
    r"[a-z]{0,6}_?(password|passwd|pwd|pass|secret|token|auth|credential|key)(_[a-z0-9]{1,4})?", fullmatch=True
)
_VALUES = st.one_of(
    st.text(ALNUM + "!#%&+/=^~.-_ ", max_size=24),
    _core(14, ALNUM + "!#%&+/=^~"),
    st.sampled_from(["Tr0ub4dor&3xq", "correct-horse-battery", "/workspace/proj", "${DB_PASSWORD}", "changeme"]),
)


@settings(max_examples=examples(300), deadline=None)
@given(_HINTED_KEYS, _VALUES)
@example("dbpassword", "Tr0ub4dor&3xq")
@example("userpassword", "correct-horse-battery")
@example("mysecret", "Tr0ub4dor&3xq")
@example("session_token", "abc123def456")
def test_a_pair_in_a_map_is_redacted_as_the_same_pair_in_text(key: str, value: str) -> None:
    """R8: a map's ``{"dbpassword": "…"}`` showed the value that the same pair written as
    text (``"dbpassword": "…"``, a JSON line in prose or a tool's output) has redacted:
    only keys of a few shapes (``db_password``) were taken to name a secret."""
    from vis_export.redaction.redact import Redactor, redacted_line
    from vis_export.redaction.rules import SECRET_KEY

    assume(not SECRET_KEY.fullmatch(key))  # a key that names a secret: its value is one whole (tested above)
    line = redacted_line(f'"{key}": "{value}"', Redaction())
    assume(line.startswith(f'"{key}": "') and line.endswith('"'))  # the key itself holds no find
    shown = Redactor(Redaction()).value({key: value}, ())[key]
    assert shown == line[len(key) + 5 : -1]


def test_the_keys_judged_are_remembered_within_a_bound() -> None:
    """Map keys are data: a long-lived process (``serve``) redacting sessions of ever new
    keys kept a judgement of each one, without a bound."""
    from vis_export.redaction import redact

    bound = 1 << 16
    keys = {f"field_{n}": f"value {n}" for n in range(bound + 1024)}  # past the bound: more would prove nothing more
    redact.Redactor(Redaction()).value({"tool_input": keys, "db_password": "hunter22"}, ())
    assert redact._names_secret.cache_info().currsize <= bound
    assert redact._hints_secret.cache_info().currsize <= bound


# Names of a secret, old and new (``auth``, ``pin``, ``cookie``: whole words only).
_NAMED = st.sampled_from(
    ["password", "DB_PASSWORD", "api_key", "apitoken", "auth", "pin", "passcode", "passphrase", "private_key"]
    + ["client_secret", "access_key", "secret_key", "session_token", "cookie", "Set-Cookie", "AUTH_TOKEN"]
)
_SIGNS = st.sampled_from(["=", ": ", " = ", ":="])


@settings(max_examples=examples(200), deadline=None)
@given(
    _NAMED,
    _SIGNS,
    _core(8, ALNUM, "q7Z3"),  # a token's look (redact.md): before "(" a name's would read as a call in code
    st.sampled_from(["&", "'", '"', "&&", "'&", ")", "]", "}", ",", ";", "(", "[", "),", "'("]),
    _core(5, ALNUM, "9x"),
)
@example("password", "=", "Tr0ub4dor", "&", "3xq")
@example("password", "=", "ab", "'", "12cd34")
@example("password", "=", "ab", "[", "cd]ef")
@example("password", "=", "A0b1c2", "(", "x)")
def test_an_assigned_value_runs_past_an_ampersand_a_quote_or_a_bracket_inside_it(
    name: str, sign: str, head: str, inside: str, tail: str
) -> None:
    """R8: an unquoted value ended at ``&`` (``Tr0ub4dor&3xq`` showed ``&3xq``), and a quote or a
    bracket inside one (``ab'12cd34``, ``ab[cd]ef``) left it shown whole: the value runs to a blank."""
    from vis_export.redaction.redact import redacted_line

    for text in (f"{name}{sign}{head}{inside}{tail}", f"Set {name}{sign}{head}{inside}{tail} now."):
        shown = redacted_line(text, Redaction())
        assert head not in shown and tail not in shown, shown


@settings(max_examples=examples(100), deadline=None)
@given(_NAMED, _core(9), st.sampled_from(["user=bob", "page=2", "x=1"]))
def test_an_ampersand_ends_an_assigned_value_in_a_query_string(name: str, value: str, rest: str) -> None:
    """In a URL's query (the pair after ``?`` or ``&``) ``&`` starts the next pair, which stays; a
    Markdown link's ``](`` after a value is the link's."""
    from vis_export.redaction.redact import redacted_line

    for text in (f"https://example.org/login?{name}={value}&{rest}", f"?a=1&{name}={value}&{rest} ok"):
        shown = redacted_line(text, Redaction())
        assert value not in shown and f"]&{rest}" in shown, shown
    link = f"[![badge](https://example.org/b.svg?{name}={value})](https://example.org/{rest})"
    assert redacted_line(link, Redaction()).endswith(f"])](https://example.org/{rest})")


_IDENTIFIERS = st.from_regex(r"[a-z_][a-z_]{0,10}(\.[a-z_]{1,8}){0,2}", fullmatch=True).filter(
    lambda name: not any(map(keyword.iskeyword, name.split(".")))  # ``as["X"]`` is no expression
)


@settings(max_examples=examples(200), deadline=None)
@given(
    _NAMED, _SIGNS, _core(8, ALNUM, "q7Z3"), st.sampled_from(["({})", "[{}]", "({}, 1)", "[{}"]), _core(4, ALNUM, "9x")
)
@example("password", "=", "ab12cd34", "({})", "ef")
@example("password", "=", "A0b1c2", "({})", "ef")
def test_an_assigned_value_with_brackets_that_is_no_expression_is_a_secret(
    name: str, sign: str, head: str, brackets: str, inner: str
) -> None:
    """R8: anything with ``(`` was taken for code, so ``password=ab12cd34(ef)`` was shown: only a
    plausible expression (a name, an attribute, a call or subscript of one, no generated token in it) is."""
    from vis_export.redaction.redact import redacted_line

    shown = redacted_line(f"{name}{sign}{head}{brackets.format(inner)}", Redaction())
    assert head not in shown, shown


@settings(max_examples=examples(200), deadline=None)
@given(_NAMED, _SIGNS, _IDENTIFIERS, st.sampled_from(["{}()", '{}["X_KEY"]', "{}.get('x', None)", "{}(a.b, 'c')"]))
@example("password", "=", "get_password", "{}()")
@example("password", " = ", "os.environ", '{}["X"]')
@example("password", "=", "base64.b64decode", '{}(os.environ["X"])')
@example("api_key", "=", "sha256", "{}(a.b, 'c')")
def test_an_assigned_expression_in_code_is_kept(name: str, sign: str, identifier: str, shape: str) -> None:
    from vis_export.redaction.redact import redacted_line

    text = f"{name}{sign}{shape.format(identifier)}"
    assert redacted_line(text, Redaction()) == text


@settings(max_examples=examples(200), deadline=None)
@given(
    _NAMED,
    _SIGNS,
    _core(10),
    st.sampled_from(
        ['f("{}")', "d['{}']", 'x.get("DB","{}")', 'x(y=("{}"))', 'b64decode(b"{}")', 'f"{{x}}{}"']
        + ['os.environ.get("DB_PASSWORD", "{}")', 'getpass() or "{}"', "lambda: '{}'", '(p := "{}")']
    ),
)
@example("api_key", " = ", "hunter2secret", 'f("{}")')
@example("password", "=", "aGVsbG8gd29ybGQ", 'decode(b"{}")')
def test_a_string_an_assigned_expression_wraps_is_no_code(name: str, sign: str, secret: str, shape: str) -> None:
    """R8: ``password = f("hunter2secret")`` read as code, kept whole: a string in the expression
    that is a secret's (a digit beside a letter, not a name in capitals) makes it no expression;
    after a blank, which ends the value (``get("DB", "hunter2secret")``), that string is redacted."""
    from vis_export.redaction.redact import redacted_line

    with cpu_limit(5):
        shown = redacted_line(f"{name}{sign}{shape.format(secret)}", Redaction())
    assert secret not in shown, shown


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), _core(12)), min_size=1, max_size=4))
@example([("theme", "darkq7Z"), ("csrftoken", "XyZ987654321abc")])
def test_every_cookie_of_a_cookie_header_is_redacted(pairs: list[tuple[str, str]]) -> None:
    """R8: ``Cookie: a=1; csrftoken=…``: only the first pair, and only under a secret's name, was taken."""
    from vis_export.redaction.redact import redacted_line

    header = "; ".join(f"{name}={value}" for name, value in pairs)
    for text in (f"Cookie: {header}", f"curl -H 'cookie: {header}' https://example.org"):
        shown = redacted_line(text, Redaction())
        assert not any(value in shown for _, value in pairs), shown


@settings(max_examples=examples(100), deadline=None)
@given(
    st.sampled_from(["pin", "PIN", "pin_code", "passcode", "password", "db_password", "passphrase", "secret"]),
    _SIGNS,
    st.integers(1000, 10**12),
    st.sampled_from(["{}", '"{}"', "{}.", "{} now"]),
)
@example("pin", " = ", 4821, "{}")
def test_a_number_assigned_to_a_pin_or_password_in_text_is_a_secret(
    name: str, sign: str, number: int, shape: str
) -> None:
    """R8: ``pin = 4821`` was shown (values of under six characters and digits alone were no secret),
    though ``{"pin": 4821}`` in a map was redacted; a count under another name is not."""
    from vis_export.redaction.redact import redacted_line

    shown = redacted_line(f"{name}{sign}{shape.format(number)}", Redaction())
    assert str(number) not in shown, shown
    assert redacted_line(f"max_tokens{sign}{number}", Redaction()) == f"max_tokens{sign}{number}"


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(min_size=6, max_size=40).map(lambda raw: base64.b64encode(raw).decode()))
@example("dXNlcjpwYXNzd29yZDEyMw==")
def test_a_basic_credential_s_padding_is_redacted_with_it(credential: str) -> None:
    """R8: ``Authorization: Basic dXNl…MTIz==`` showed ``==``, which tells the value's length."""
    from vis_export.redaction.redact import redacted_line

    shown = redacted_line(f"Authorization: Basic {credential}", Redaction())
    assert shown == "Authorization: Basic [redacted: authorization 1]", shown


@pytest.mark.parametrize(
    "text", ['password = getpass("Password: ")', 'token = os.environ["API_KEY_V2"]', "secret = cfg.get('db.password')"]
)
def test_a_name_or_prompt_in_an_assigned_expression_keeps_it_code(text: str) -> None:
    from vis_export.redaction.redact import redacted_line

    assert redacted_line(text, Redaction()) == text


@settings(max_examples=examples(100), deadline=None)
@given(
    st.sampled_from(["password", "pin", "passcode", "db_password", "api_key", "PIN", "client_secret", "cookie"]),
    st.one_of(st.integers(1000, 10**12), st.floats(1000, 1e9).filter(lambda f: f != int(f))),
)
@example("password", 84629173)
@example("pin", 1234)
def test_a_number_under_a_secret_key_is_a_secret(key: str, number: int | float) -> None:
    """R8: only strings under a secret's key were redacted: ``{"pin": 1234}`` was shown. Booleans
    and nulls there are no secret."""
    document = _base()
    holder = {"cmd": "login", key: number, "remember": True, "password_hint": None}
    _blocks(document).append({"id": "k", "type": "tool", "tool": "shell", "status": "completed", "input": holder})
    shown = _bytes(get_format("json").render(_load(document), REDACT))  # type: ignore[arg-type]
    assert repr(number).encode() not in shown
    assert b'"remember": true' in shown and b'"password_hint": null' in shown


@pytest.mark.parametrize(
    "key",
    ["apitoken", "auth", "pin", "passcode", "passphrase", "private_key", "client_secret", "access_key"]
    + ["secret_key", "session_token", "cookie", "set-cookie", "Set-Cookie", "proxy_auth", "pin_code"],
)
def test_the_secret_names_hold_their_values_in_maps_and_in_text(key: str) -> None:
    from vis_export.redaction.redact import Redactor, redacted_line

    assert "Xq9" not in json.dumps(Redactor(Redaction()).value({key: "Xq9wert7"}, ()), default=dict)
    assert "Xq9" not in redacted_line(f"{key}=Xq9wert7 and {key}: Xq9wert7", Redaction())


@pytest.mark.parametrize("key", ["author", "authority", "pinned", "spinner", "gpio_pin", "pinning", "oauthor"])
def test_words_holding_a_secret_name_are_not_secret_names(key: str) -> None:
    """``auth`` and ``pin`` are names only as whole words."""
    from vis_export.redaction.redact import Redactor, redacted_line

    assert Redactor(Redaction()).value({key: "Xq9wert7"}, ()) == {key: "Xq9wert7"}
    text = f"{key}=Xq9wert7 and {key}: Xq9wert7"
    assert redacted_line(text, Redaction()) == text


# The classes of text that got a marker in the real corpus (``python -m benchmarks.redact``) holding no
# secret, each by a sample other than the corpus's own: words for cookies' values, words that say what a
# value stands for, detect-secrets' pragma, an expression of names or of words, a badge's public token,
# an example's password at a documentation host.
NEAR_MISSES = [
    "Set-Cookie: theme=dark",
    "Cookie: lang=english; theme=dark; Path=/account",
    r"'Set-Cookie: count=7\r\nSet-Cookie: color=blue'",
    'Set-Cookie: prefs="A=alpha; B=beta"',
    "password: not-my-real-password",
    'DB_PASSWORD="your secret here"',
    "api_key = 'Fake API Key'",
    "secret=example-secret-value",
    'client_secret = "Tr0ub4dor3"  # pragma: allowlist secret',
    '// pragma: allowlist nextline secret\nconst password = "Tr0ub4dor3";',
    "session = login(url, auth=('admin', 'changeme'))",
    "grep -v 'password = (first|second)' app.ini",
    "[![cov](https://codecov.io/gh/o/r/graph/badge.svg?token=Ab12Cd34Ef)](https://codecov.io/gh/o/r)",
    "pip config set global.index-url https://bob:p%40ss@pypi.example.org/simple",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_a_near_miss_of_a_secret_gets_no_marker(text: str) -> None:
    from vis_export.redaction.redact import redacted_line

    assert redacted_line(text, Redaction()) == text


_WORD = st.from_regex(r"[a-z]{3,9}", fullmatch=True).filter(
    lambda word: not re.search("pass|secret|key|token|example|fake|dummy|placeholder|sample", word)
)


@settings(max_examples=examples(60), deadline=None)
@given(
    _core(20),
    st.sampled_from(
        [
            "Set-Cookie: sid={}; Path=/",
            "Cookie: theme=dark; sessionid={}",
            "curl -H 'Cookie: lang=en; csrftoken={}' https://example.org",
            'secret_key = "{}"  # pragma: allowlist nextline secret',
            'OPENAI = "sk-proj-{}"  # pragma: allowlist secret',
            "auth=('bob', '{}')",
            "password = (first|{})",
            "https://host.example.org/download.svg?token={}",
            "https://raw.githubusercontent.com/o/r/main/plot.png?token={}",
            "postgres://admin:{}@db.example.org/app",
        ]
    ),
)
@example("AAAAAAAAAAAAAAAAAq7Z", "password = (first|{})")  # a token that turns twice, as a name joined by ``|``
def test_the_secrets_beside_a_near_miss_are_still_taken(core: str, shape: str) -> None:
    """The near misses kept above are classes, not holes: a token as a cookie's value, a pragma
    before the line (not on it) or over a provider's token, a generated string in an expression,
    a token of a URL that is no badge, a generated password at a documentation host are secrets."""
    from vis_export.redaction.redact import redacted_line

    assert core not in redacted_line(shape.format(core), Redaction())


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(_WORD, min_size=2, max_size=4), st.sampled_from(["-", "~", " "]))
def test_a_passphrase_of_words_is_a_secret_unless_a_word_says_what_it_stands_for(words: list[str], sign: str) -> None:
    """Words joined by ``_`` or ``.`` read as a name in code, and stay (``_PLACEHOLDER``)."""
    from vis_export.redaction.redact import redacted_line

    phrase = sign.join(words)
    assert phrase not in redacted_line(f'password = "{phrase}"' if sign == " " else f"password = {phrase}", Redaction())
    described = sign.join([*words, "secret"])
    text = f'password = "{described}"' if sign == " " else f"password = {described}"
    assert redacted_line(text, Redaction()) == text


@settings(max_examples=2, deadline=None)
@given(everywhere())
@pytest.mark.parametrize("engine", ["tantivy", "whoosh"])
def test_each_engine_s_index_finds_no_redacted_value_and_its_hits_and_snippets_show_markers(
    tmp_path_factory: Any, engine: str, case: tuple[dict[str, Any], list[str]]
) -> None:
    """The index files of an engine are compressed (a byte search of them proves little), and only
    tantivy was searched: each engine is asked for the value and for the words beside it, and its
    hits (titles, snippets) show the marker."""
    pytest.importorskip(engine)
    from vis_export.jobs.indexing import index
    from vis_export.searchindex import search

    document, cores = case
    session = _load(document)
    folder = tmp_path_factory.mktemp(engine) / "idx"
    with time_limit(60):
        index([session], folder, engine=engine, reasoning="visible", redact=True)
        for core in cores:
            assert not search(f'"{core}"', folder), "a redacted value was found"
        hits = [hit.to_json() for word in ("more", "said", "out", "line") for hit in search(word, folder)]
    shown = json.dumps(hits, ensure_ascii=False)
    assert "redacted:" in shown
    _absent(cores, shown.encode(), f"{engine} hits and snippets")


@settings(max_examples=2, deadline=None)
@given(everywhere())
def test_a_postgresql_index_holds_no_redacted_value_in_any_table_and_finds_none(
    postgres_server: Server, tmp_path_factory: Any, case: tuple[dict[str, Any], list[str]]
) -> None:
    """The PostgreSQL engine keeps a block's text, its terms and its words' lexemes (a tsvector, and
    ``more_words`` for a block too large for one), and each source file's path, in tables of its own:
    each is read from the server (every row of every table as ``pg_dump`` writes it, and the lexemes
    and terms one by one, in lower case as they are kept), and the engine is asked for each value.
    The same file indexed without ``--redact`` shows the values there, so the reading would see them."""
    from vis_export.jobs.indexing import index_sources
    from vis_export.searchindex import search

    document, cores = case
    home = tmp_path_factory.mktemp("pg") / "machine+" / "home" / "bobzq7"  # "+": the folder reads as a home
    home.mkdir(parents=True)
    (home / "chat.json").write_text(json.dumps(document))
    cores = [*cores, "bobzq7"]
    lexemes = (
        "SELECT string_agg(word, ' ') FROM (SELECT unnest(tsvector_to_array(words)) AS word FROM vis_blocks"
        " UNION ALL SELECT unnest(terms || more_words) FROM vis_blocks) AS kept"
    )
    with new_database(postgres_server) as database, time_limit(120):
        name = database.rsplit("/", 1)[1]
        index_sources([home / "chat.json"], database, reasoning="visible", redact=True)
        kept = postgres_server.dump(name).decode().lower() + postgres_server.sql(lexemes, name)
        assert "redacted" in kept  # the markers' words, indexed in the values' place
        for core in cores:
            assert core.lower() not in kept, "a redacted value is in the database"
            assert not search(f'"{core}"', database) and not search(core, database), "a redacted value was found"
        index_sources([home / "chat.json"], database, reasoning="visible")
        plain = postgres_server.dump(name).decode().lower()
        lexemes_of_plain = postgres_server.sql(lexemes, name).split()
        assert "bobzq7" in plain and any(core.lower() in plain and core.lower() in lexemes_of_plain for core in cores)
        assert any(search(f'"{core}"', database) for core in cores)


def test_scan_and_its_report_say_no_length_nor_hash_of_a_value(tmp_path: Path) -> None:
    """Never the value's length nor a hash that would confirm a guess: a finding holds its file,
    session, place and kind, and nothing in the lines or the JSON is a digest of the value."""
    import hashlib

    secret = "ghp_Abcdefghijklmnopqrstuvwxyz0123456789"
    document = _base()
    PLACES["tool input"](document, secret)
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    run = [sys.executable, "-m", "vis_export", "scan", str(source)]
    lines = subprocess.run(run, capture_output=True, text=True).stdout
    as_json = json.loads(subprocess.run([*run, "--json"], capture_output=True, text=True).stdout)
    report = tmp_path / "report.json"
    convert = [sys.executable, "-m", "vis_export", "convert", str(source), "--to", "md", "-o", str(tmp_path / "o.md")]
    subprocess.run([*convert, "--redact-report", str(report)], check=True, capture_output=True)
    for found in (as_json, json.loads(report.read_text())):
        assert found["findings"] and all(set(f) == {"file", "session", "location", "kind"} for f in found["findings"])
    said = (lines + json.dumps(as_json) + report.read_text()).lower()
    for value in (secret, secret[4:]):
        for name in ("md5", "sha1", "sha256", "sha512", "blake2b"):
            digest = hashlib.new(name, value.encode())
            assert digest.hexdigest()[:8] not in said, name
            assert base64.b64encode(digest.digest()).decode()[:8].lower() not in said, name
        places = r"messages\[\d+\]|content\[\d+\]|steps\[\d+\]|: \d+$"  # numbers the report says of itself
        assert str(len(value)) not in re.sub(places, "", said, flags=re.M)


def test_markers_are_numbered_per_session_in_a_many_session_output() -> None:
    """Each session of a many-session output (and of an index) numbers its own markers from 1."""
    sessions = []
    for n, address in enumerate(("ann.q@example.org", "bob.q@example.org")):
        document = _base()
        document["id"] = f"s{n}"
        PLACES["prose"](document, f"mail {address}")
        sessions.append(_load(document))
    for name in ("json", "markdown", "text"):
        shown = _bytes(get_format(name).render_many(sessions, REDACT)).decode()  # type: ignore[misc, arg-type]
        assert shown.count("[redacted: email 1]") == 2 and "email 2" not in shown, name
    docs = [doc for session in sessions for doc in documents(session, "visible", Redaction())]
    assert sum("[redacted: email 1]" in doc["text"] for doc in docs) == 2
    assert not any("email 2" in doc["text"] for doc in docs)


@settings(max_examples=examples(10), deadline=None)
@given(everywhere())
def test_without_redact_every_text_output_is_as_it_was_and_holds_the_secrets(
    case: tuple[dict[str, Any], list[str]],
) -> None:
    """R8: without ``--redact`` nothing changes: ``redact=False`` is no option at all, the JSON
    shows every secret the session holds, and no marker is made or styled."""
    document, cores = case
    session = _load(document)
    with time_limit(60):
        plain = _text_outputs(session, ExportOptions())
        assert plain == _text_outputs(session, ExportOptions(redact=False))
    assert all(core.encode() in plain["json"] for core in cores)
    assert b'class="redacted"' not in plain["html"] and b"[redacted: " not in plain["markdown"]


@settings(max_examples=examples(50), deadline=None)
@given(
    st.sampled_from(["DB_PASSWORD", "password", "api_key", "AUTH_TOKEN", "client-secret"]),
    st.sampled_from(["=", ": ", " = ", ":="]),
    _core(14, ALNUM + "._-"),
    st.sampled_from(["` and more", "`.", "`", "`)", "`, then"]),
)
def test_an_assigned_secret_in_a_code_span_leaves_the_span_closed(name: str, sign: str, value: str, after: str) -> None:
    """The backtick that closes a code span (or a shell's substitution) is not the value's: the
    marker replaces the secret alone, and the rest of the line stays as it was (R8, R1)."""
    from vis_export.redaction.redact import redacted_line

    line = f"Password is `{name}{sign}{value}{after}"
    assert redacted_line(line, Redaction()) == f"Password is `{name}{sign}[redacted: secret 1]{after}"


# Provider tokens of a known shape: no exemption (badge, pragma, cookie, tuple, example host, words) keeps one.
_SHAPED_KINDS = [kind for kind in KINDS if kind not in ("uri-credentials", "secret", "email", "home-user")]
_EXEMPTIONS = [
    "https://codecov.io/gh/o/r/graph/badge.svg?token={}",
    "[![b](https://img.example.net/badge.svg?token={})](https://x.io)",
    "token = '{}'  # pragma: allowlist secret",
    "# pragma: allowlist nextline secret\ntoken = '{}'",
    "Cookie: theme=dark; Path={}",
    "auth=('user', '{}')",
    "password = (first|'{}')",
    "postgres://admin:{}@db.example.org/app",
    "password = 'example {}'",
]


@settings(max_examples=examples(80), deadline=None)
@given(st.sampled_from(_SHAPED_KINDS).flatmap(KINDS.__getitem__), st.sampled_from(_EXEMPTIONS))
def test_a_provider_token_is_taken_whatever_exemption_surrounds_it(secret: Secret, shape: str) -> None:
    """A token of a provider's shape is a secret wherever it stands: a badge's URL kept only the kinds a
    person judges, and never any token (``ghp_…``, a JWT) held by a URL of codecov's badge form."""
    from vis_export.redaction.redact import redacted_line

    value, core = secret
    assert core not in redacted_line(shape.format(value), Redaction())


@pytest.mark.parametrize(
    "shape",
    [
        "https://evil.net/graph/badge.svg?token={}",
        "https://api.service.io/v2/graphs/tree.svg?token={}",
        "postgres://admin:{}@db.example.org@evil.net/app",
        "postgres://admin:{}@example.com%2Eevil.net/app",
        "postgres://admin:{}@example.com\\@evil.net/app",
        'password = "{}"\r# pragma: allowlist secret',
        'password = "{}"\u2028# pragma: allowlist secret',
    ],
)
@settings(max_examples=examples(20), deadline=None)
@given(_core(14))
def test_an_exemption_s_look_alike_keeps_no_secret(shape: str, core: str) -> None:
    """A badge-like URL at another host than codecov's, an example host that is not where the authority
    ends (the last ``@``, a ``%2E``), a pragma on what a reader sees as the next line: the secret is taken.
    ``core`` is letters alone (``_words_password``), as an example host's exemption keeps them."""
    from vis_export.redaction.redact import redacted_line

    word = "".join(c for c in core if c.isalpha()) + "horse"
    for value in (core, word) if "admin:" in shape else (core,):
        assert value not in redacted_line(shape.format(value), Redaction())


@pytest.mark.parametrize("value", ["(Hunter2+Horse2)", "(Zq7+Lp2+Xw9)", "(x9-Abcd)"])
def test_pieces_of_a_password_joined_by_operators_are_a_secret(value: str) -> None:
    """Names joined by operators or in a tuple read as code unless one sets a letter beside a digit
    with no call, attribute or subscript to say it is code: then they are a password's pieces."""
    from vis_export.redaction.redact import redacted_line

    assert redacted_line(f"password = {value}", Redaction()) != f"password = {value}"


# A generated token of letters alone: a capital after a small letter at every other place or so.
_CASED_TOKEN = st.lists(
    st.tuples(st.sampled_from(string.ascii_uppercase), st.sampled_from(string.ascii_lowercase)), min_size=5, max_size=9
).map(lambda pairs: "".join(upper + lower for upper, lower in pairs))


@settings(max_examples=examples(60), deadline=None)
@given(
    _CASED_TOKEN,
    st.sampled_from(
        [
            'password = "{}-secret"',
            "api_key = 'sample-{}'",
            "token: {}-token",
            "Cookie: theme=dark; sid={}",
            "Set-Cookie: session=fake-{}; Path=/",
        ]
    ),
)
def test_a_token_of_letters_beside_a_describing_word_is_a_secret(token: str, shape: str) -> None:
    """Words that say what a value stands for are ASCII words with a word's case: a token of letters
    alone (``QxZvBnMkLp``) beside ``secret`` or ``sample``, or as a short cookie's value, is a secret."""
    from vis_export.redaction.redact import redacted_line

    assert token not in redacted_line(shape.format(token), Redaction())


@pytest.mark.parametrize("value", ["secret-\u0410bcdef", "Passw\u00f6rd-secret"])
def test_letters_other_than_ascii_do_not_part_describing_words(value: str) -> None:
    """A letter outside ASCII (a Cyrillic look-alike, an umlaut) is no sign between words."""
    from vis_export.redaction.redact import redacted_line

    assert value not in redacted_line(f'password = "{value}"', Redaction())


@settings(max_examples=examples(60), deadline=None)
@given(
    st.sampled_from(["aws-access-key", "google-api-key"]).flatmap(KINDS.__getitem__),
    st.sampled_from(["sha256:", "sha512-", "md5:", "blake2b-"]),
)
def test_a_provider_token_after_a_digest_s_label_is_a_secret(secret: Secret, label: str) -> None:
    """A labelled digest is no secret, but a label before a provider's token (``sha256:AKIA…``) makes it none."""
    from vis_export.redaction.redact import redacted_line

    value, core = secret
    assert core not in redacted_line(f"pinned {label}{value} here", Redaction())


@settings(max_examples=examples(40), deadline=None)
@given(
    _core(16),
    st.sampled_from(
        [
            "Cookie: lang=en; path={}",
            "Cookie: lang=en; Domain={}",
            "Cookie: theme=dark; version={}",
            "Cookie: lang=en; Max-Age={}",
            "Cookie: lang=en; Secure; sid={}",
            "Cookie: lang=en; HttpOnly; token={}",
        ]
    ),
)
def test_a_request_cookie_named_as_an_attribute_or_after_a_bare_flag_is_judged(core: str, shape: str) -> None:
    """A request's ``Cookie:`` header sends no attributes: a cookie named ``path`` or ``version`` whose value
    has no attribute's form is a cookie, and a bare ``Secure`` before a session's cookie ends nothing."""
    from vis_export.redaction.redact import redacted_line

    assert core not in redacted_line(shape.format(core), Redaction())


@settings(max_examples=examples(40), deadline=None)
@given(
    _CASED_TOKEN | st.sampled_from(["P@ssw!rd#", "Tr&ub^dor*x", "hun!ter#ab"]),
    st.sampled_from(["auth=('admin', '{}')", 'password = get("{}")', "session = login(url, auth=('bob', '{}'))"]),
)
def test_a_string_with_a_password_s_look_in_an_expression_is_a_secret(value: str, shape: str) -> None:
    """An expression of names and strings is code only while no string in it has a password's look: a
    generated token's case (``QxZvBnMkLp``) or a sign between letters (``P@ssw!rd#``), digits or not."""
    from vis_export.redaction.redact import redacted_line

    assert value not in redacted_line(shape.format(value), Redaction())


# Strings and keys whose JSON text is written otherwise than they are (escaped quotes, backslashes and
# control characters), beside hints that read differently so, and Python's case-insensitive i (U+0130, U+0131).
_WRITTEN_PIECES = st.sampled_from(
    ["\t", "\n", "\f", "\r", "\x0b", "\x01", "\x1f", '"', "\\", "'", "]", "(", "\u200b", "\u00ad", "é", " ", "=", ":"]
    + ["pin", "Pİn", "token", "pass", "credentİal", "Bearer", "ghp\\_", "users", "/home/", "://u:", "@a.", "sk-"]
)
_WRITTEN = st.lists(st.one_of(_WRITTEN_PIECES, st.text(string.printable, max_size=6)), max_size=8).map("".join)
_JSON_VALUES = st.one_of(_WRITTEN, st.integers(-5, 10**12), st.floats(allow_nan=False, allow_infinity=False), st.none())
_JSON_KEYS = st.one_of(_SECRET_KEYS, _HINTED_KEYS, st.sampled_from(["pin", "PİN", "pİn_code", "pass", "log"]), _WRITTEN)


@st.composite
def _messages_of_written_strings(draw: st.DrawFn) -> dict[str, Any]:
    document = _base()
    for number in range(draw(st.integers(1, 4))):
        fields = draw(st.dictionaries(_JSON_KEYS.map(lambda key: f"x_{key}"), _JSON_VALUES, max_size=2))
        content = [
            {"id": f"p{number}", "type": "prose", "markdown": draw(_WRITTEN)},
            {
                "id": f"t{number}",
                "type": "tool",
                "tool": "shell",
                "status": "completed",
                "input": draw(st.dictionaries(_JSON_KEYS, st.one_of(_JSON_VALUES, st.lists(_WRITTEN, max_size=2)))),
            },
        ]
        message = {"id": f"w{number}", "role": "assistant", "status": "completed", "created_at": 3, "content": content}
        document["messages"].append({**message, **fields})
    return document


def _written_example(markdown: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    document = _base()
    _blocks(document).append({"id": "p", "type": "prose", "markdown": markdown})
    _blocks(document).append({"id": "t", "type": "tool", "tool": "shell", "status": "completed", "input": tool_input})
    return document


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_messages_of_written_strings())
@example(_written_example("x\npin=4821", {}))
@example(_written_example("token\t=\tQz7Lp2Xw9Rt4Vb", {}))
@example(_written_example("curl -H Bearer\tQz7Lp2Xw9Rt4Vb", {}))
@example(_written_example("", {"pİn": 4821}))
@example(_written_example("", {"credentİal": "hunter22"}))
def test_the_messages_judged_on_their_json_text_hold_every_find(document: dict[str, Any]) -> None:
    """Only the messages whose JSON text ``prefilter.JSON_TRIGGER`` finds something in are walked:
    every message with a part the walk of all of them holds is among them (a string as written
    in JSON: escaped controls, quotes and backslashes; a key over a string or a number), and the
    redacted session is the same as when every message is walked."""
    from vis_export.redaction import prefilter, redact

    session = _load(document)
    flagged = prefilter.flagged(session.messages)
    assert flagged is not None
    try:
        redact.flagged = lambda messages: None  # every message walked, as before the prefilter
        held = redact.Redactor(Redaction())._helds(session.messages)
        walked_all = redact.Redactor(Redaction()).session(session)
    finally:
        redact.flagged = prefilter.flagged
    assert {number for number, parts in enumerate(held) if parts} <= set(flagged)
    assert redact.Redactor(Redaction()).session(session) == walked_all


@pytest.mark.parametrize("name", list(TRIGGERS))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data(), before=st.text(max_size=3), after=st.text(max_size=3))
def test_every_trigger_is_found_in_json_text(name: str, data: st.DataObject, before: str, after: str) -> None:
    """``prefilter.JSON_TRIGGER`` reads each of ``rules.TRIGGERS`` on JSON text: a string that a trigger
    finds something in (drawn from it, between any text) is found in its JSON text."""
    import msgspec
    import re2

    from vis_export.redaction.prefilter import JSON_TRIGGER

    part = TRIGGERS[name]
    text = before + data.draw(st.from_regex(part, fullmatch=True)) + after
    try:
        utf8 = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the prefilter walks every message
        return
    assume(re2.compile(part).search(utf8) is not None)  # Python's \d or case folding drew what RE2 reads otherwise
    assert re2.compile(JSON_TRIGGER).search(msgspec.json.encode(text)) is not None, (part, text)


# Each piece ``jsontext.json_form`` reads: characters JSON escapes (a quote, a backslash, controls) alone,
# in classes, negated classes and class escapes, repeated, in a case-insensitive group, at a string's start.
_PIECES_ON_JSON = [
    '"',
    r"\\",
    r"\t",
    r"\s",
    r"\S+",
    r"\W",
    r"\D",
    r"[^a-z]",
    r"[\t-\r ]{2}",
    r"[\\\"'\]]*x",
    r"[\t\n\"]",
    r'(?i:ab"c)',
    r"(?:^|[^A-Za-z0-9_-])pin",
    r"key\s*[=:]\s*\S{4}",
]


@pytest.mark.parametrize("pattern", _PIECES_ON_JSON)
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data(), before=st.text(max_size=3), after=st.text(max_size=3))
def test_an_expression_read_on_json_text_finds_what_it_finds_in_the_string(
    pattern: str, data: st.DataObject, before: str, after: str
) -> None:
    """A trigger is written once (``rules.TRIGGERS``) and read on JSON text by a function: what it finds
    in a string, as searched alone or joined to others by ``detect.SEPARATOR``, its JSON form finds in
    the string's JSON text, written as the prefilter writes it (a quote before and after)."""
    import msgspec
    import re2

    from vis_export.redaction.detect import SEPARATOR
    from vis_export.redaction.jsontext import json_form

    text = before + data.draw(st.from_regex(pattern, fullmatch=True)) + after
    try:
        utf8 = text.encode()
    except UnicodeEncodeError:
        return
    joined = f"{SEPARATOR}{text}{SEPARATOR}".encode()
    assume(re2.compile(pattern).search(utf8) is not None or re2.compile(pattern).search(joined) is not None)
    assert re2.compile(json_form(pattern)).search(msgspec.json.encode([text])) is not None, (pattern, text)


@pytest.mark.parametrize("pattern", [r"\bkey", "key$", "k.y", "(?=k)", "(?s:k)", r"\x41", r"[\x00-\x41]", "(?P<k>k)"])
def test_what_cannot_be_read_on_json_text_is_refused_where_the_trigger_is_written(pattern: str) -> None:
    """An assertion, ``.``, a flag other than ``i`` or a look-around reads otherwise on JSON text
    (``\\bkey`` is no word's start after ``\\n``): refused, so no trigger is read wrong without a word."""
    from vis_export.redaction.jsontext import json_form

    with pytest.raises(ValueError, match="JSON text"):
        json_form(pattern)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("deadbeef01 bob@corp.com", "deadbeef01 "),  # git log's hashes and addresses: a digest each, an address each
        ("sha256:abc /home/alice/x", "sha256:abc /home/"),
        ('password = "Zq7Lp2Xw9Rt4Vb"  # pragma: allowlist secret', 'password = "Zq7Lp2Xw9Rt4Vb"'),
        ("[redacted: email 1] bob@corp.com", "[redacted: email 1] [redacted: email 1]"),  # redacted again
    ],
    ids=["digests", "digested-homes", "pragmas", "markers"],
)
def test_a_text_of_many_finds_is_redacted_in_linear_time(line: str, kept: str) -> None:
    """Each find was looked for in every digest, id and image's data of its text, and in every
    marker of a text redacted before, and a text holding a pragma was split into lines again for
    each find: 480 KB of ``git log``'s hashes and addresses took 20 CPU-s (quadratic). Now each
    find's look-ups are one search each."""
    import time

    from vis_export.redaction.redact import redacted_line

    text = "\n".join([line] * 20_000)
    with time_limit(120):
        start = time.process_time()
        out = redacted_line(text, Redaction())
        assert time.process_time() - start < 4
    assert all(redacted.startswith(kept) for redacted in out.split("\n"))


# Runs that each of the home folder rule's parts could read from every place of (a backslash or escape run a
# share's path, a run of words a name of several, lines, quotes, escapes in a web address or a host), and
# shapes of every part repeated: a part that looked again from each place would be quadratic.
_HOME_RUNS = [
    "\\",
    "%5C",
    "%255C",
    "%2525",
    "/home/a ",
    "C:\\Users\\a b c\n",
    "\n ",
    "\"'`",
    "https%3A%2F%2F%25",
    "vscode-remote://%41",
    " //a/b/",
    "/home/a.",
    "/home/a\\ b%20",
    "\\u00e9",
    "/Volumes/ a",
    "/c/Volumes/c",
    "a@b:~$ ",
    "a@b:~",
    "[a@b c]$ ",
    "a@b c %\n",
    "\\na@b MINGW64 ",
    "a@" + "b" * 300 + ":/",
    "mix /home/a b\\ c%20d \\\\e\\f\\Users\\g h> (/home/x) C:\\\\Users\\\\y z\\\\ %252Fhome%252F",
]


@pytest.mark.parametrize("unit", _HOME_RUNS)
def test_a_long_run_near_a_home_folder_is_redacted_in_linear_time(unit: str) -> None:
    """Every part of the home folder rule reads each character a bounded number of times: 100,000 characters
    of each run, alone, after a home folder's start and before a name's end, take a few CPU-s at most."""
    import time

    from vis_export.redaction.redact import redacted_line

    run = unit * (100_000 // len(unit))
    with time_limit(120):
        start = time.process_time()
        for text in (run, "/home/" + run, "C:\\Users\\" + run + "\\", "x " + run + " /Users/b c/"):
            redacted_line(text, Redaction())
        assert time.process_time() - start < 4


def test_a_long_line_of_many_finds_is_judged_for_a_pragma_once() -> None:
    """A text holding ``pragma`` has each judged find's line read for detect-secrets' pragma:
    each find read its whole line again, and one line of 2,500 assignments (70 KB) took 31 CPU-s."""
    import time

    from vis_export.redaction.redact import redacted_line

    text = 'password="Zq7Lp2Xw9Rt4Vb"; ' * 2_500 + "# no pragma here"
    with time_limit(120):
        start = time.process_time()
        out = redacted_line(text, Redaction())
        assert time.process_time() - start < 4
    assert "Zq7Lp2Xw9Rt4Vb" not in out and out.count("[redacted: ") == 2_500
