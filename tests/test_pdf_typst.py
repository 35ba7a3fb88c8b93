"""The Typst PDF engine (``--pdf-engine typst``): the same document as the
WeasyPrint engine in substance, and the rules: R1 (code text as written), R2
(no private reasoning), R4 (no string of the session ever runs as Typst), R7
(the same bytes every run), bounded on hostile input."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT, examples
from hypothesis import HealthCheck, given, settings, strategies as st
from pypdf import PdfReader
from sessions import one_message, session_of
from strategies import PRIVATE_CANARY, session_documents, small_blocks
from system import require
from test_images import data_uri, image_bytes, png_bomb, session_with, svg_bomb
from timelimit import time_limit

from vis_export import load
from vis_export.formats.options import ExportOptions
from vis_export.formats.pdf import to_pdf
from vis_export.formats.pdf_typst import TypstProjector, document_json
from vis_export.formats.typst_tree import chunks, wrap
from vis_export.model import CodeBlock

pytestmark = pytest.mark.slow  # most tests run real Typst compiles (a fraction of a second each)

SESSION = next(load(INPUT / "session.json"))


def squeeze(text: str) -> str:
    """Text with every wrap and space removed: what survives a visual line wrap."""
    return re.sub(r"\s+", "", text)


def text_of(pdf: bytes) -> str:
    """The PDF's text as poppler reads it (pypdf takes half a minute on 700 pages)."""
    require("pdftotext")
    run = subprocess.run(["pdftotext", "-enc", "UTF-8", "-", "-"], input=pdf, capture_output=True, timeout=120)
    return run.stdout.decode("utf-8")


# --- wrapping code: pure, no Typst ------------------------------------------------------


def _columns(line: str) -> int:
    """Display columns of a wrapped line, a tab counted to its stop (as ``wrap`` places it)."""
    column = 0
    for char in line:
        if char == "\t":
            column += 4 - column % 4
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            column += 2
        elif not (unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf")):
            column += 1
    return column


@given(st.text(alphabet=st.sampled_from("ab \t\n\r日é\u0301x😀"), max_size=300), st.integers(8, 40))
def test_wrapped_code_keeps_every_character_and_fits_its_columns(text: str, columns: int) -> None:
    runs = wrap([("k", text[: len(text) // 2]), ("", text[len(text) // 2 :])], columns)
    shown = "".join(run[1] for run in runs)
    assert shown.replace("\n", "") == text.replace("\n", "")  # only line breaks are added
    assert all(_columns(line) <= columns for line in re.split("[\r\n]", shown))
    pieces = chunks(runs, 3)
    assert "\n".join("".join(run[1] for run in piece) for piece in pieces) == shown
    assert all("".join(run[1] for run in piece).count("\n") <= 2 for piece in pieces)


# --- the document ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pdf() -> bytes:
    return to_pdf(SESSION, engine="typst")


def test_pages_header_footer_outline_and_metadata_as_the_weasyprint_engine(pdf: bytes) -> None:
    from pdfpage import outline

    reader = PdfReader(io.BytesIO(pdf))
    weasy_pdf = to_pdf(SESSION)
    weasy = PdfReader(io.BytesIO(weasy_pdf))
    pages = len(reader.pages)
    texts = [page.extract_text() for page in reader.pages]
    assert all(SESSION.title in text and f"{n} / {pages}" in text for n, text in enumerate(texts, 1))
    assert outline(pdf) == outline(weasy_pdf)
    for key in ("/Title", "/Subject", "/Keywords", "/CreationDate", "/ModDate"):
        assert reader.metadata[key] == weasy.metadata[key], key


def test_every_block_type_is_shown(pdf: bytes) -> None:
    text = squeeze(text_of(pdf))
    for _, block in SESSION.blocks():
        if isinstance(block, CodeBlock):
            assert squeeze(block.text) in text  # R1
    for shown in ("run_tests", "Unsupportedblock", "provider_unavailable", "turn_cancelled", "Speech", "日本語"):
        assert shown in text
    assert PRIVATE_CANARY not in text and PRIVATE_CANARY.encode() not in pdf  # R2


def test_lonis_blocks_are_shown() -> None:
    session = next(load(INPUT / "lonis.jsonl"))
    text = squeeze(text_of(to_pdf(session, engine="typst")))
    from vis_export.lonis_parsed import parsed
    from vis_export.model import LonisBlock

    for _, block in session.blocks():
        if isinstance(block, LonisBlock):
            assert squeeze(parsed(block.envelope).summary) in text


def test_long_code_lines_wrap_inside_the_page(tmp_path: Path) -> None:
    from pdfpage import words

    line = "x = '" + "abcdefghij" * 40 + "'  # the end of a very long line"
    cjk = "変数 = '" + "日本語のテキスト" * 20 + "'"
    session = one_message(
        {"type": "code", "language": "python", "text": f"{line}\n\tindented\n{cjk}\n"},
        {"type": "tool", "tool": "t", "status": "completed", "output": line},
    )
    pdf = to_pdf(session, engine="typst", paper="Letter")
    text = squeeze(text_of(pdf))
    assert text.count(squeeze(line)) == 2 and squeeze(cjk) in text
    width = float(PdfReader(io.BytesIO(pdf)).pages[0].mediabox.width)
    assert (round(width), round(float(PdfReader(io.BytesIO(pdf)).pages[0].mediabox.height))) == (612, 792)
    for page in words(pdf, tmp_path):
        assert all(word.left >= 30 and word.right <= width - 30 for word in page), page


def test_images_are_checked_as_for_html(tmp_path: Path) -> None:
    (tmp_path / "att").write_bytes(image_bytes("PNG", (40, 30)))
    session = session_with(
        f"![ok]({data_uri(image_bytes('PNG', (20, 10)))}) ![svg]({data_uri(svg_bomb())}) "
        f"![bomb]({data_uri(png_bomb())}) "
        "![far](https://example.invalid/x.png) ![local](file:///etc/passwd)",
        {},
    )
    pdf = to_pdf(session, engine="typst", attachments=tmp_path)
    words = " ".join(text_of(pdf).split())
    assert "image not shown: svg — not a PNG, JPEG, GIF or WebP image" in words
    assert "13000×13000 pixels exceeds" in words
    images = [image for page in PdfReader(io.BytesIO(pdf)).pages for image in page.images]
    assert len(images) == 2  # the data: image and the attachment, nothing fetched or read
    links = [
        annotation.get_object()["/A"]["/URI"]
        for page in PdfReader(io.BytesIO(pdf)).pages
        for annotation in page.get("/Annots", [])
    ]
    assert links == ["https://example.invalid/x.png"]  # a file: address is no link


def test_an_image_typst_cannot_decode_leaves_placeholders_not_a_failure() -> None:
    """Only headers are checked: a PNG cut after its header passes them."""
    png = image_bytes("PNG", (200, 100))
    pdf = to_pdf(session_with(f"![cut]({data_uri(png[:60])}) ![whole]({data_uri(png)})"), engine="typst")
    words = " ".join(text_of(pdf).split())
    assert "image not shown: cut — Typst could not decode" in words and "image not shown: whole" in words


PIXELS = """
import io, sys
sys.path.insert(0, {tests!r})
from PIL import Image
from test_images import data_uri, session_with
from vis_export.formats.pdf import to_pdf
images = []
for i in range(5):  # 25 megapixels each, distinct, about 100 KB each
    image = Image.new("RGB", (5000, 5000))
    image.putpixel((i, 0), (255, 0, 0))
    out = io.BytesIO()
    image.save(out, "PNG")
    images.append(f"![i{{i}}]({{data_uri(out.getvalue())}})")
pdf = to_pdf(session_with(" ".join(images)), engine="typst")
sys.stdout.buffer.write(pdf)
print(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) // 1024, file=sys.stderr)
"""


def test_images_are_bounded_in_pixels_as_typst_keeps_them_decoded() -> None:
    tests = str(Path(__file__).parent)
    run = subprocess.run([sys.executable, "-c", PIXELS.format(tests=tests)], capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert sum(len(page.images) for page in PdfReader(io.BytesIO(run.stdout)).pages) == 4
    assert "would exceed 100 megapixels" in " ".join(text_of(run.stdout).split())
    assert int(run.stderr.split()[-1]) < 800  # MB: about 0.5 GB for 100 megapixels


# --- R4: nothing of the session runs ---------------------------------------------------------

ACTIVE = (
    '#str(4100+49) #upper("zzqq") #read("/etc/hostname") #import "@preview/cetz:0.3.0": * '
    '#image("/etc/passwd") #include "/session.json" $x^2$ ] [ \\ " <l> @l #set page(width: 1pt) '
    '#{ while true {} } #let x = 1 // /* ``` #json("/session.json")'
)


def test_typst_active_strings_in_every_field_never_run() -> None:
    document = {
        "id": ACTIVE,
        "title": ACTIVE,
        "created_at": 1740000000000,
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "status": "completed",
                "created_at": 1740000000000,
                "author": {"display_name": ACTIVE},
                "model": ACTIVE,
                "content": [
                    {"id": "p", "type": "prose", "markdown": f"{ACTIVE}\n\n- {ACTIVE}\n\n> {ACTIVE}\n\n`{ACTIVE}`"},
                    {"id": "c", "type": "code", "language": ACTIVE, "text": ACTIVE},
                    {"id": "c2", "type": "code", "language": "typst", "text": ACTIVE},
                    {"id": "t", "type": "tool", "tool": ACTIVE, "status": "failed", "input": {"query": ACTIVE}},
                    {"id": "r", "type": "reasoning", "visibility": "visible", "text": ACTIVE},
                    {"id": "e", "type": "error", "code": "x", "message": ACTIVE},
                    {"id": "n", "type": "notice", "code": "x", "message": ACTIVE},
                    {"id": "s", "type": "speech", "text": ACTIVE},
                    {"id": "a", "type": "attachment", "attachment_id": ACTIVE, "name": ACTIVE, "media_type": ACTIVE},
                    {"id": "u", "type": ACTIVE, "payload": ACTIVE},
                ],
            }
        ],
    }
    pdf = to_pdf(session_of(document), engine="typst")
    text = text_of(pdf)
    assert "4149" not in text and "ZZQQ" not in text
    assert squeeze(text).count(squeeze(ACTIVE)) >= 12  # each field shown as written
    meta = PdfReader(io.BytesIO(pdf)).metadata
    assert meta.title == ACTIVE and meta["/Subject"] == f"Vis session {ACTIVE}"


# Pieces of Typst that would show a marker if they ran: a computed string, a
# set rule, a show rule, a function defined and called, markup that emphasises.
ACTIVE_PIECES = (
    "#str(4100+49)",
    '#upper("zzqq")',
    "#{ let f(x) = x * 3; str(f(1383)) }",
    '#show "yy": "Q" + "RRS"; yy',
    "#[#set text(size: 1pt)]",
    '#eval("4100+49")',
    "$4100+49$",
    "*bold* _em_ `raw` <lab> @lab",
    '#read("/etc/hostname")',
)


@settings(max_examples=examples(8), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(ACTIVE_PIECES), min_size=1, max_size=4).map(" ".join))
def test_r4_typst_pieces_anywhere_never_run(active: str) -> None:
    session = one_message(
        {"type": "prose", "markdown": active},
        {"type": "code", "language": "typst", "text": active},
        {"type": "tool", "tool": "t", "status": "completed", "output": active},
        title=active,
    )
    with time_limit(60):
        text = text_of(to_pdf(session, engine="typst"))
    assert not any(marker in text for marker in ("4149", "ZZQQ", "QRRS"))
    assert squeeze(text).count(squeeze(active)) >= 3  # title, code and tool output, as written


def test_the_template_reads_only_its_data_and_evaluates_nothing() -> None:
    """Its only file reads: the session's JSON and image nodes' ``src`` (paths this
    package wrote); no eval, no import or include, no package, no raw language."""
    from vis_export.formats.pdf_typst import template

    source = re.sub(r"//.*", "", template().decode())
    assert re.findall(r"\b(json|read|image|eval|import|include|plugin|raw|yaml|toml|csv|xml|cbor)\(", source) == [
        "json",
        "image",
        "image",
    ]
    assert "#import" not in source and "#include" not in source and "@preview" not in source
    assert re.findall(r"image\((\w+\.\w+)", source) == ["n.src", "n.src"]


# --- R7 --------------------------------------------------------------------------------------

SAME_BYTES = """
import sys, time
from vis_export import load
from vis_export.formats.pdf import to_pdf
sys.stdout.buffer.write(to_pdf(next(load(sys.argv[1])), engine="typst"))
"""


def test_the_same_bytes_in_another_process_folder_and_time(pdf: bytes, tmp_path: Path) -> None:
    assert to_pdf(SESSION, engine="typst") == pdf
    environment = {**os.environ, "TMPDIR": str(tmp_path), "TZ": "Asia/Tokyo", "SOURCE_DATE_EPOCH": "1"}
    run = subprocess.run(
        [sys.executable, "-c", SAME_BYTES, str(INPUT / "session.json")],
        capture_output=True,
        env=environment,
        timeout=120,
        check=True,
    )
    assert run.stdout == pdf
    assert b"vis-export-typst" not in pdf and str(tmp_path).encode() not in pdf


def test_a_session_without_a_date_has_none() -> None:
    session = session_of({"id": "s", "messages": []})
    pdf = to_pdf(session, engine="typst")
    assert "/CreationDate" not in PdfReader(io.BytesIO(pdf)).metadata and to_pdf(session, engine="typst") == pdf


# --- bounded on hostile input --------------------------------------------------------------------


def test_hostile_prose_and_code_stay_bounded() -> None:
    hostile = [
        {"type": "prose", "markdown": "> " * 3000 + "deep"},
        {"type": "prose", "markdown": "".join("  " * i + "- item\n" for i in range(300))},
        {"type": "prose", "markdown": "[" * 5000 + "x" + "](y)" * 5000},
        {"type": "prose", "markdown": "*a " * 5000 + "end"},
        {"type": "prose", "markdown": "**~~_" * 300 + "y" + "_~~**" * 300},
        {"type": "prose", "markdown": "w" * 1000},
        {"type": "prose", "markdown": "| a |\n|---|\n" + "| b | c | d |\n" * 500},
        {"type": "code", "language": "python", "text": "\t" * 5000 + '"' + "\\" * 40 + "😀" * 3000},
        {"type": "code", "language": "c", "text": "x\n" * 20_000},
        {"type": "prose", "markdown": "*a* `b` " * 30_000},  # one paragraph of 60,000 styled pieces: 23 s unbounded
        {"type": "code", "language": "json", "text": json.dumps([{"k": i, "v": True} for i in range(8000)], indent=1)},
        {"type": "code", "text": "\ud800 lone surrogate \x00 nul \u2028 \x0c"},
    ]
    with time_limit(60):
        pdf = to_pdf(one_message(*hostile), engine="typst")
    text = squeeze(text_of(pdf))
    assert "deep" in text and "w" * 1000 in text and "lonesurrogate" in text


def test_a_long_session_is_laid_out_in_parts_each_in_a_process_of_its_own() -> None:
    """Typst keeps what it compiled for the life of a process: parts in one process
    grew it by 50 MB each. Here 0.4 MB of session in parts of 0.1 MB. The peak is
    read as ``VmHWM``: ``ru_maxrss`` keeps the high-water mark of the process that
    forked this one (pytest's)."""
    code = (
        "import io, resource, sys\n"
        "sys.path.insert(0, '.')\n"
        "from corpus import session_bytes\n"
        "from vis_export.formats import pdf_typst\n"
        "from vis_export.formats.pdf import to_pdf\n"
        "from vis_export.sources.files import read_bytes\n"
        "pdf_typst.PART_SIZE = 100_000\n"
        "(read,) = read_bytes(session_bytes(400_000), 'bench', 'bench')\n"
        "session = read.session\n"
        "pdf = to_pdf(session, engine='typst')\n"
        "assert pdf == to_pdf(session, engine='typst')\n"
        "sys.stdout.buffer.write(pdf)\n"
        "own = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024\n"
        "children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
        "print(own, children, len(session.messages), file=sys.stderr)\n"
    )
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300, cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    reader = PdfReader(io.BytesIO(run.stdout))
    pages = len(reader.pages)
    texts = text_of(run.stdout).split("\f")[:pages]
    assert all(f"{n} / {pages}" in text and "Benchmark session" in text for n, text in enumerate(texts, 1))
    assert sum("Session bench_400000" in text for text in texts) == 1  # the title block once, on page 1
    own, child, messages = (int(figure) for figure in run.stderr.split()[-3:])
    assert len(reader.outline) == messages
    assert own < 400 and child < 400, run.stderr  # MB


# --- properties over generated sessions ---------------------------------------------------------


@settings(max_examples=examples(10), deadline=None, suppress_health_check=list(HealthCheck))
@given(session_documents(small_blocks))
def test_r1_r2_r7_generated_sessions(document: dict[str, Any]) -> None:
    session = session_of(document)
    with time_limit(60):
        pdf = to_pdf(session, engine="typst")
        again = to_pdf(session, engine="typst")
    shown = document_json(TypstProjector(ExportOptions()).document(session))
    assert PRIVATE_CANARY.encode() not in shown and PRIVATE_CANARY.encode() not in pdf
    text = squeeze(text_of(pdf))
    assert PRIVATE_CANARY not in text and again == pdf
    for _, block in session.blocks():
        if isinstance(block, CodeBlock) and block.text.isprintable():
            assert squeeze(block.text) in text


# --- the command line ---------------------------------------------------------------------------


def test_the_command_line_option(tmp_path: Path) -> None:
    require("pdftotext")
    out = tmp_path / "s.pdf"
    run = subprocess.run(
        [sys.executable, "-m", "vis_export", "convert", str(INPUT / "session.json"), "--to", "pdf"]
        + ["--pdf-engine", "typst", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == to_pdf(SESSION, engine="typst")
    bad = subprocess.run(
        [sys.executable, "-m", "vis_export", "convert", str(INPUT / "session.json"), "--to", "pdf"]
        + ["--pdf-engine", "latex", "-o", str(tmp_path / "x.pdf")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "latex" in bad.stderr and not (tmp_path / "x.pdf").exists()
    with pytest.raises(ValueError, match="pdf_engine"):
        to_pdf(SESSION, engine="latex")


def test_the_running_title_keeps_its_descenders() -> None:
    """The running title is clipped to one line: its box ended at the text's baseline, so
    the tails of g, j, p, q and y were cut off on every page."""
    session = next(load(INPUT / "session.json"))
    pdf = to_pdf(session, engine="typst")
    content = PdfReader(io.BytesIO(pdf)).pages[0].get_contents().get_data().decode("latin-1")  # type: ignore[union-attr]
    number = r"(-?[\d.]+)"
    header = re.search(
        rf"/Subtype/Header.*?q {number} {number} m {number} {number} l {number} {number} l"
        rf".*?1 0 0 -1 {number} {number} cm.*?/f\d+ {number} Tf",
        content,
        re.DOTALL,
    )
    assert header is not None, content[:500]
    clip_bottom = min(float(header.group(2)), float(header.group(6)))  # PDF y runs upwards
    baseline, size = float(header.group(8)), float(header.group(9))
    assert baseline - clip_bottom >= 0.2 * size, (baseline, clip_bottom)


@pytest.mark.parametrize(
    "title",
    [
        "User learned about Python decorators, including basic decorators and parameterized ones. " * 3,
        "ВЕЛИКИЙ ЗАГОЛОВОК " * 12,
        "長いタイトルの会話セッション" * 10,
    ],
)
def test_a_long_running_title_shows_its_beginning_on_one_line(title: str) -> None:
    """A title wider than the page wrapped in the header's one-line box, which then
    showed the title's last line: a reader saw its end, not its beginning."""
    pdf = to_pdf(one_message({"type": "prose", "markdown": "Hello"}, title=title), engine="typst")
    page = PdfReader(io.BytesIO(pdf)).pages[0]
    top = float(page.mediabox.top)
    lines: dict[float, str] = {}

    def visit(text: str, cm: Any, tm: Any, font: Any, size: Any) -> None:
        y = round(float(cm[5]) + float(tm[5]) * float(cm[3]), 1)
        if text.strip() and y > top - 51.0:  # within the top margin: the running title
            lines[y] = lines.get(y, "") + text

    page.extract_text(visitor_text=visit)
    assert len(lines) == 1, lines
    (shown,) = lines.values()
    assert shown.replace(" ", "").startswith(title[:20].replace(" ", "")), shown
