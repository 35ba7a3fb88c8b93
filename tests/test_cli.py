"""The command line: exit codes, one-line problems, batches, atomic output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import INPUT, examples
from hypothesis import HealthCheck, given, settings, strategies as st

import vis_export
from vis_export import __version__
from vis_export.cli import main
from vis_export.searchindex.directory import MANIFEST

SESSION = INPUT / "session.json"


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


def test_version() -> None:
    assert run("--version").output.strip() == f"vis-export, version {__version__}"


def test_help_has_examples() -> None:
    for command in ("convert", "validate", "sessions"):
        out = run(command, "--help").output
        assert "Examples:" in out and f"vis-export {command}" in out


def test_validate_valid_and_invalid(tmp_path: Path) -> None:
    ok = run("validate", str(SESSION))
    assert ok.exit_code == 0 and "1 file(s) valid, 1 session(s)" in ok.stderr
    bad = tmp_path / "bad.json"
    document = json.loads(SESSION.read_text())
    document["messages"][3]["content"][2]["retryable"] = "yes"
    document["messages"][1]["content"][5]["input"]["llmActual"] = {"provider": ":openai"}
    bad.write_text(json.dumps(document))
    result = run("validate", str(bad), str(SESSION))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[:2] == [
        f"{bad}: messages[1].content[5].input.llmActual: key is not snake_case",
        f"{bad}: messages[3].content[2].retryable: must be true or false, not a string",
    ]
    assert result.stdout == ""


def test_validate_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "m"}\n')
    result = run("validate", "--json", str(SESSION), str(bad))
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report[0] == {"file": str(SESSION), "valid": True, "problems": [], "sessions": 1}
    assert report[1]["valid"] is False
    assert {"location": "", "message": 'missing required field "role"'} in report[1]["problems"]


def test_sessions_table_and_json(golden_store: Path) -> None:
    table = run("sessions", str(SESSION), str(golden_store))
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["ID", "TITLE", "MESSAGES", "FIRST", "LAST"]
    assert lines[1].startswith("golden_session  Parse the *config* & <deploy>  7 ")
    assert "2025-02-19 21:20:00Z" in lines[1]
    rows = json.loads(run("sessions", "--json", str(golden_store)).stdout)
    assert [(r["id"], r["messages"]) for r in rows] == [("soul_main", 8), ("soul_second", 2)]


def test_convert_json_to_stdout_applies_the_policy() -> None:
    out = run("convert", str(SESSION), "--to", "json").stdout
    assert "PRIVATE-CANARY" not in out
    assert json.loads(out)["messages"][1]["content"][0]["id"] == "a1b3"
    everything = run("convert", str(SESSION), "--to", "json", "--reasoning", "all").stdout
    assert json.loads(everything) == json.loads(SESSION.read_text())
    none = json.loads(run("convert", str(SESSION), "--to", "json", "--reasoning", "none").stdout)
    assert not any(b["type"] == "reasoning" for m in none["messages"] for b in m["content"])


def test_convert_stdin() -> None:
    result = run("convert", "-", "--to", "json", stdin=SESSION.read_text())
    assert result.exit_code == 0 and json.loads(result.stdout)["id"] == "golden_session"


def test_convert_batch_reports_bad_and_writes_good(tmp_path: Path) -> None:
    sources = tmp_path / "in"
    sources.mkdir()
    (sources / "a.json").write_text(SESSION.read_text())
    (sources / "b.json").write_text("{truncated")
    (sources / "c.jsonl").write_text((INPUT / "messages.jsonl").read_text())
    out = tmp_path / "out"
    result = run("convert", str(sources), "--to", "json", "-o", str(out))
    assert result.exit_code == 1
    assert (
        result.stderr.strip() == f"{sources / 'b.json'}: line 1 column 2: not JSON: Expecting property name "
        "enclosed in double quotes"
    )
    assert sorted(os.listdir(out)) == ["c.json", "golden_session.json"]


def test_convert_one_session_to_a_file_and_selection(tmp_path: Path, golden_store: Path) -> None:
    target = tmp_path / "one.json"
    result = run("convert", str(golden_store), "--to", "json", "--session", "soul_second", "-o", str(target))
    assert result.exit_code == 0, result.stderr
    assert json.loads(target.read_text())["id"] == "soul_second"
    missing = run("convert", str(golden_store), "--to", "json", "--session", "nope")
    assert missing.exit_code == 1 and "no session with id 'nope'" in missing.stderr


def test_convert_several_sessions_to_stdout_is_one_json_array(golden_store: Path, tmp_path: Path) -> None:
    out = run("convert", str(golden_store), "--to", "json").stdout
    sessions = json.loads(out)
    assert [s["id"] for s in sessions] == ["soul_main", "soul_second"]
    again = tmp_path / "again.json"
    again.write_text(out)
    assert run("validate", str(again)).exit_code == 0  # the output is itself a source


def test_failed_export_leaves_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.json"
    target.write_text("previous")
    import vis_export.formats.json as module

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(module, "session_json", explode)
    result = CliRunner().invoke(main, ["convert", str(SESSION), "--to", "json", "-o", str(target)])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"{SESSION}: session golden_session: not exported to json: disk on fire"
    assert target.read_text() == "previous"
    assert os.listdir(tmp_path) == ["out.json"]


def test_usage_errors_exit_2() -> None:
    assert run("convert", str(SESSION), "--to", "docx").exit_code == 2
    assert run("convert", str(SESSION)).exit_code == 2


_BROKEN = ["", "[", '{"id": "m", "role": "x"}', "\x00\x01"]
_COMMANDS = [["validate"], ["sessions"], ["convert", "--to", "json"]]


# Each broken file and each command runs by default (a process each), and CI (or --slow) runs every pair.
@pytest.mark.parametrize(
    ("content", "command"),
    [
        pytest.param(
            content, command, marks=() if n == m % len(_COMMANDS) else pytest.mark.slow, id=f"{content}-{command[0]}"
        )
        for m, content in enumerate(_BROKEN)
        for n, command in enumerate(_COMMANDS)
    ],
)
def test_no_traceback_in_a_real_process(tmp_path: Path, content: str, command: list[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = subprocess.run([sys.executable, "-m", "vis_export", *command, str(bad)], capture_output=True, text=True)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"{bad}: ")


@pytest.mark.parametrize(("fmt", "ext"), [("text", "txt"), ("markdown", "md"), ("md", "md")])
def test_convert_text_and_markdown(tmp_path: Path, golden_store: Path, fmt: str, ext: str) -> None:
    out = run("convert", str(SESSION), "--to", fmt, "--timestamps", "--tool-output-limit", "10").stdout
    assert "PRIVATE-CANARY" not in out and "2025-02-19 21:20:00Z" in out
    assert "more characters of tool output not shown" in out
    target = tmp_path / "dir"
    result = run("convert", str(golden_store), "--to", fmt, "--no-tools", "-o", str(target))
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(target)) == [f"soul_main.{ext}", f"soul_second.{ext}"]
    assert "run_tests" not in (target / f"soul_main.{ext}").read_text()


def test_convert_markdown_front_matter_and_attachments(tmp_path: Path) -> None:
    target = tmp_path / "chat.md"
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "att_01").write_bytes(b"\x89PNG\r\n\x1a\n")
    result = run(
        "convert",
        str(SESSION),
        "--to",
        "md",
        "--front-matter",
        "--attachments",
        str(tmp_path / "files"),
        "-o",
        str(target),
    )
    assert result.exit_code == 0, result.stderr
    written = target.read_text()
    assert written.startswith('---\nsession_id: "golden_session"\n')
    assert "![screenshot \\<1\\>.png](files/att_01)" in written


def test_convert_leaves_sources_byte_identical(tmp_path: Path, golden_store: Path) -> None:
    before = {p: p.read_bytes() for p in [SESSION, golden_store]}
    for fmt in ("json", "text", "markdown"):
        run(
            "convert",
            str(SESSION),
            str(golden_store),
            "--to",
            fmt,
            "--reasoning",
            "all",
            "-o",
            str(tmp_path / "out" / fmt),
        )
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(os.listdir(golden_store.parent)) == ["out", "vis.db"]  # no -wal, -shm or journal left


def test_lenient_exports_what_it_can_with_warnings(tmp_path: Path) -> None:
    document = json.loads(SESSION.read_text())
    messages = document["messages"]
    messages[0]["role"] = "User"  # mis-cased: read as meant
    messages[1]["content"][3] = {"id": "x", "type": "prose"}  # no markdown: kept as inert data
    messages[2]["role"] = "robot"  # unreadable role: left out
    messages[1]["content"][5]["input"] = {"filePath": "a"}  # camelCase key: kept as stored
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    strict = run("convert", str(bad), "--to", "markdown")
    assert strict.exit_code == 1 and strict.stdout == ""
    lenient = run("convert", str(bad), "--to", "markdown", "--lenient")
    assert lenient.exit_code == 0, lenient.stderr
    warnings = lenient.stderr.splitlines()
    assert f'{bad}: warning: messages[0].role: "User" must be lowercase (user)' in warnings
    assert any("messages[2].role" in w for w in warnings) and all(": warning: " in w for w in warnings)
    assert "## User (Ada)" in lenient.stdout.replace("\\(", "(").replace("\\)", ")")
    assert "Unsupported block <code>prose</code>" in lenient.stdout
    assert "Now deploy it." not in lenient.stdout
    assert "PRIVATE-CANARY" not in lenient.stdout


@pytest.mark.parametrize("strict", [True, False])
def test_code_with_an_empty_language_is_shown_as_plain_code(tmp_path: Path, strict: bool) -> None:
    """``"language": ""`` names no language: the code is shown, never refused or lost."""
    document = json.loads(SESSION.read_text())
    document["messages"][1]["content"].insert(0, {"id": "e", "type": "code", "language": "", "text": "x = 'kept'\n"})
    source = tmp_path / "empty.json"
    source.write_text(json.dumps(document))
    for fmt in ("markdown", "html", "text"):
        result = run("convert", str(source), "--to", fmt, *([] if strict else ["--lenient"]))
        assert result.exit_code == 0 and result.stderr == "", result.stderr
        assert "x = &#39;kept&#39;" in result.stdout if fmt == "html" else "```\nx = 'kept'\n```" in result.stdout
        assert "unsupported block: code" not in result.stdout.lower()
        assert "unsupported block <code>code<" not in result.stdout.lower()


def test_lenient_event_log_and_json_lines(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {
                    "type": "content.block.started",
                    "turn_id": "t",
                    "block": {"id": "b", "type": "prose", "markdown": ""},
                },
                {"type": "content.block.delta", "turn_id": "t", "block_id": "zz", "field": "markdown", "text": "lost"},
                {"type": "content.block.delta", "turn_id": "t", "block_id": "b", "field": "markdown", "text": "kept"},
            ]
        )
        + "\n{not json\n"
    )
    result = run("convert", str(log), "--to", "text", "--lenient")
    assert result.exit_code == 0
    assert "kept" in result.stdout and "lost" not in result.stdout
    assert [line.split(": warning: ")[0] for line in result.stderr.splitlines()] == [f"{log}", f"{log}"]


def test_convert_html_and_template_override(tmp_path: Path) -> None:
    page = tmp_path / "chat.html"
    result = run("convert", str(SESSION), "--to", "html", "--theme", "dark", "-o", str(page))
    assert result.exit_code == 0, result.stderr
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and 'data-theme="dark"' in html
    templates = tmp_path / "templates"
    (templates / "blocks").mkdir(parents=True)
    (templates / "blocks" / "notice.html.j2").write_text('<p class="my-notice">{{ block.message }}</p>\n')
    (templates / "document.html.j2").write_text(
        '{% extends "builtin/document.html.j2" %}{% block meta %}{{ super() }}\n'
        '<meta name="author" content="Team {{ session.id }}">{% endblock %}'
    )
    custom = run("convert", str(SESSION), "--to", "html", "--template-dir", str(templates)).stdout
    assert '<p class="my-notice">Stopped by user.</p>' in custom
    assert '<meta name="author" content="Team golden_session">' in custom
    assert '<meta name="generator"' in custom  # the built-in block is still there


@pytest.mark.slow
def test_convert_pdf_to_a_file_and_a_pipe(tmp_path: Path) -> None:
    target = tmp_path / "chat.pdf"
    result = run("convert", str(SESSION), "--to", "pdf", "--paper", "Letter", "-o", str(target))
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes().startswith(b"%PDF")
    piped = subprocess.run(
        [sys.executable, "-m", "vis_export", "convert", str(SESSION), "--to", "pdf"], capture_output=True
    )
    assert piped.returncode == 0 and piped.stdout.startswith(b"%PDF") and piped.stderr == b""


def test_template_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "message.html.j2").write_text("<div>\n{{ message.label }\n</div>\n")
    result = CliRunner().invoke(
        main,
        ["convert", str(SESSION), "--to", "html", "--template-dir", str(templates), "-o", str(tmp_path / "out.html")],
    )
    assert result.exit_code == 1 and not (tmp_path / "out.html").exists()
    assert result.stderr.startswith(f"{templates / 'message.html.j2'}:2: template error: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_options_a_format_ignores_are_named(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["convert", str(SESSION), "--to", "text", "--paper", "Letter", "--no-tools", "-o", str(tmp_path / "out.txt")],
    )
    assert result.exit_code == 0
    assert "--paper does not apply to text (only to pdf); ignored" in result.stderr
    assert "--no-tools" not in result.stderr  # it does apply


def test_a_refused_session_points_to_lenient(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "m", "role": "User", "status": "completed", "created_at": 1, "content": []}')
    result = CliRunner().invoke(main, ["convert", str(bad), "--to", "text"])
    assert result.exit_code == 1 and "1 refused source(s) can be exported in part with --lenient" in result.stderr
    assert CliRunner().invoke(main, ["convert", str(bad), "--to", "text", "--lenient"]).exit_code == 0


def test_serve_stops_when_no_source_can_be_read(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "vis_export", "serve", str(tmp_path / "nothere"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr and "Serving" not in result.stderr
    assert result.stderr.splitlines() == [
        f"{tmp_path / 'nothere'}: no such file or directory",
        "vis-export: serve: no source could be read; nothing to serve",
    ]


def test_serve_goes_on_when_one_source_of_several_can_be_read(tmp_path: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "vis_export", "serve", str(tmp_path / "nothere"), str(SESSION), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stderr is not None
            lines = [process.stderr.readline(), process.stderr.readline()]
            assert lines[0] == f"{tmp_path / 'nothere'}: no such file or directory\n"
            assert lines[1].startswith("Serving 1 session(s) at http://127.0.0.1:")
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_an_attachments_folder_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    result = run("convert", str(SESSION), "--to", "html", "--attachments", str(tmp_path / "nowhere"))
    assert result.exit_code == 2 and "nowhere" in result.stderr and result.stdout == ""
    with pytest.raises(ValueError, match="no such folder"):
        vis_export.to_html(next(vis_export.load(SESSION)), attachments=tmp_path / "nowhere")


@pytest.mark.parametrize("to", ["html", "md"])
@pytest.mark.parametrize("output", ["-", "chat.out"])
def test_an_attachment_not_in_the_folder_is_a_warning_naming_it(tmp_path: Path, to: str, output: str) -> None:
    (tmp_path / "files").mkdir()
    target = "-" if output == "-" else str(tmp_path / output)
    result = run("convert", str(SESSION), "--to", to, "--attachments", str(tmp_path / "files"), "-o", target)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"{SESSION}: warning: session golden_session, message msg_user_1, block u1b2: attachment att_01 "
        f"(screenshot <1>.png) is not in {tmp_path / 'files'}; it is named, not shown"
    ]
    (tmp_path / "files" / "att_01").write_bytes(b"\x89PNG\r\n\x1a\n")
    again = run("convert", str(SESSION), "--to", to, "--attachments", str(tmp_path / "files"), "-o", target)
    assert (again.exit_code, again.stderr) == (0, "")


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.text(st.sampled_from("aé日本語ｶ한😀\u0301\u200b-"), min_size=1, max_size=60), min_size=2, max_size=4)
)
def test_the_sessions_table_stays_aligned_with_wide_characters(tmp_path: Path, titles: list[str]) -> None:
    """Every column starts at the same column of the terminal on every row,
    whatever the titles hold: wide characters take two, combining marks none."""
    from vis_export.strings import columns

    for n, title in enumerate(titles):
        document = json.loads(SESSION.read_text())
        document.update(id=f"s{'x' * n}", title=title)
        (tmp_path / f"t{n}.json").write_text(json.dumps(document))
    result = run("sessions", *(str(tmp_path / f"t{n}.json") for n in range(len(titles))))
    assert result.exit_code == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    starts = {columns(line[: line.index(first)]) for line, first in [(header, "FIRST"), *((r, "2025-") for r in rows)]}
    assert len(starts) == 1, result.stdout


def test_the_progress_bar_ends_full(tmp_path: Path) -> None:
    from onterminal import on_terminal

    for n in range(6):
        (tmp_path / f"s{n}.json").write_text(SESSION.read_text().replace("golden_session", f"s{n}"))
    shown = on_terminal("convert", str(tmp_path), "--to", "text", "-o", str(tmp_path / "out") + "/").decode()
    assert shown.rstrip().endswith("100%\x1b[?25h"), shown[-200:]


def test_several_sessions_are_refused_into_a_name_with_the_formats_extension(
    tmp_path: Path, golden_store: Path
) -> None:
    target = tmp_path / "single.txt"
    result = run("convert", str(golden_store), "--to", "text", "-o", str(target))
    assert result.exit_code == 1 and not target.exists()
    assert result.stderr.splitlines() == [
        f"vis-export: {target}: names one txt file, and the sources hold 2 sessions; "
        "name a directory (ending in /) or choose one with --session"
    ]
    one = run("convert", str(golden_store), "--to", "text", "-o", str(target), "--session", "soul_main")
    assert one.exit_code == 0 and target.is_file()
    folder = run("convert", str(golden_store), "--to", "text", "-o", str(tmp_path / "several"))
    assert folder.exit_code == 0 and sorted(os.listdir(tmp_path / "several")) == ["soul_main.txt", "soul_second.txt"]


@pytest.mark.parametrize("where", ["/proc/vis-export-index", "/proc/self/vis-export-index/deeper"])
def test_an_index_folder_that_cannot_be_made_is_one_line_naming_it(where: str) -> None:
    result = run("index", str(SESSION), "--index", where)
    assert result.exit_code == 1 and "Errno" not in result.stderr
    assert result.stderr.splitlines() == [f"vis-export: {where}: cannot make an index here (No such file or directory)"]


@pytest.mark.parametrize(("missing", "engine"), [("weasyprint", "weasyprint"), ("typst", "typst")])
def test_a_missing_extra_is_one_line_before_anything_is_read(
    tmp_path: Path, golden_store: Path, missing: str, engine: str
) -> None:
    code = (
        f"import sys; sys.modules[{missing!r}] = None\n"
        "from vis_export.cli import main\n"
        f"main(['convert', {str(golden_store)!r}, '--to', 'pdf', '--pdf-engine', {engine!r}, "
        f"'-o', {str(tmp_path / 'out')!r} + '/'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    extra, feature = ("pdf", "PDF") if missing == "weasyprint" else ("typst", "PDF with the Typst engine")
    assert (done.returncode, done.stderr) == (
        1,
        f"vis-export: error: {feature} needs the {extra!r} extra, which is not installed: "
        f"pip install 'vis-export[{extra}]'\n",
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("engine", ["lucene", "Whoosh"])
def test_an_engine_not_installed_is_a_usage_error_naming_those_that_are(tmp_path: Path, engine: str) -> None:
    """A built-in name is taken without looking up installed packages' engines;
    any other name still is looked up, and refused with the choices."""
    result = CliRunner().invoke(main, ["index", str(SESSION), "--index", str(tmp_path / "idx"), "--engine", engine])
    assert result.exit_code == 2
    assert f"Invalid value for '--engine': '{engine}' is not one of 'tantivy', 'whoosh'." in result.output
    assert not (tmp_path / "idx").exists()


def test_a_built_in_engine_named_is_the_one_used(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["index", str(SESSION), "--index", str(tmp_path / "idx"), "--engine", "whoosh"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "idx" / MANIFEST).read_text())["engine"] == "whoosh"
