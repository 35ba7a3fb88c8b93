"""PDF through pypdf and pdftoppm: pages, outline, metadata, text, determinism."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import INPUT, examples
from pdfpage import outline
from pypdf import PdfReader
from sessions import session_of
from system import require

from vis_export import load
from vis_export.formats.pdf import to_pdf
from vis_export.model import CodeBlock, Session

pytestmark = pytest.mark.slow  # renders PDFs

SESSION = next(load(INPUT / "session.json"))


@pytest.fixture(scope="module")
def pdf() -> bytes:
    return to_pdf(SESSION)


def squeeze(text: str) -> str:
    """Text with every wrap and space removed: what survives a visual line wrap."""
    return re.sub(r"\s+", "", text)


def page_text(page) -> str:  # type: ignore[no-untyped-def]
    """pypdf's text of a page. pypdf reads the custom single-byte encoding
    WeasyPrint gives some fonts as two-byte codes; dropping the NULs it leaves
    recovers the text (poppler's pdftotext reads it directly)."""
    return page.extract_text().replace("\x00", "")


def test_pages_outline_and_metadata(pdf: bytes) -> None:
    reader = PdfReader(io.BytesIO(pdf))
    pages = len(reader.pages)
    assert pages >= 2
    first = page_text(reader.pages[0])
    assert f"1 / {pages}" in first
    assert SESSION.title in first  # running header and title
    entries = outline(pdf)
    titles = [title for level, title in entries if level == 1]
    assert len(titles) == len(SESSION.messages)
    assert titles[0].startswith("User (Ada)") and titles[1].startswith("Assistant")
    # The headings of prose sit below their turn: "# Plan" of the second turn is its child.
    assert entries[2] == (2, "Plan") and all(level <= 2 for level, _ in entries)
    meta = reader.metadata
    assert meta.title == SESSION.title
    assert "golden_session" in meta.subject and meta.get("/Keywords") == "gpt-5.6"
    assert meta.creation_date.year == 2025


def test_every_code_text_and_no_private_reasoning(pdf: bytes) -> None:
    text = squeeze("".join(page_text(page) for page in PdfReader(io.BytesIO(pdf)).pages))
    for _, block in SESSION.blocks():
        if isinstance(block, CodeBlock):
            assert squeeze(block.text) in text
    assert "PRIVATE-CANARY" not in text


def test_long_code_lines_wrap_and_are_never_clipped() -> None:
    from vis_export.sources.messages import session_document

    line = "x = '" + "abcdefghij" * 40 + "'  # the end of a very long line"
    session = session_document(
        {
            "id": "wide",
            "messages": [
                {
                    "id": "m",
                    "role": "assistant",
                    "status": "completed",
                    "created_at": 0,
                    "content": [{"id": "c", "type": "code", "language": "python", "text": line + "\n"}],
                }
            ],
        },
        "w",
        "w",
    ).session
    text = "".join(page_text(page) for page in PdfReader(io.BytesIO(to_pdf(session))).pages)
    assert squeeze(line) in squeeze(text)


def test_deterministic_bytes_and_paper(pdf: bytes) -> None:
    assert to_pdf(SESSION) == pdf
    letter = PdfReader(io.BytesIO(to_pdf(SESSION, paper="Letter"))).pages[0].mediabox
    assert (round(float(letter.width)), round(float(letter.height))) == (612, 792)
    a4 = PdfReader(io.BytesIO(pdf)).pages[0].mediabox
    assert (round(float(a4.width)), round(float(a4.height))) == (595, 842)


def test_pages_render_to_images(pdf: bytes, tmp_path: Path) -> None:
    require("pdftoppm")
    source = tmp_path / "s.pdf"
    source.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(source), str(tmp_path / "page")], check=True, timeout=120)
    images = sorted(tmp_path.glob("page-*.png"))
    assert len(images) == len(PdfReader(io.BytesIO(pdf)).pages)
    assert all(image.stat().st_size > 1000 for image in images)


def test_rendered_in_parts_the_pdf_is_one_document(pdf: bytes) -> None:
    from vis_export.formats.options import ExportOptions
    from vis_export.formats.pdf import render_pdf, split

    assert split(SESSION, 2) == [(0, 1), (1, len(SESSION.messages))] or len(split(SESSION, 2)) == 2
    joined = render_pdf(SESSION, ExportOptions(), parts=2)
    assert render_pdf(SESSION, ExportOptions(), parts=2) == joined  # deterministic in parts too
    reader = PdfReader(io.BytesIO(joined))
    pages = len(reader.pages)
    assert pages >= len(PdfReader(io.BytesIO(pdf)).pages)
    assert outline(joined) == outline(pdf)
    texts = [page_text(page) for page in reader.pages]
    assert all(f"{n} / {pages}" in text for n, text in enumerate(texts, 1))
    assert all(SESSION.title in text for text in texts)  # the running title in every part
    whole = squeeze("".join(texts))
    assert "PRIVATE-CANARY" not in whole
    assert all(squeeze(b.text) in whole for _, b in SESSION.blocks() if isinstance(b, CodeBlock))


def test_the_same_bytes_a_second_later(pdf: bytes) -> None:
    """fontTools dates the emoji font it rewrites (the attachment's 📎) with the clock."""
    time.sleep(1.1)
    assert to_pdf(SESSION) == pdf
    assert os.environ.get("SOURCE_DATE_EPOCH") is None  # set for the render only


# WeasyPrint subsets fonts with HarfBuzz when libharfbuzz-subset0 is installed,
# else with fontTools, which dates every font it writes with the clock.
FONTTOOLS_FALLBACK = """
import json, sys, time
import weasyprint.pdf.fonts as fonts
from vis_export.formats.pdf import to_pdf
from vis_export.sources.messages import session_document

fonts.harfbuzz_subset = None  # what WeasyPrint finds without libharfbuzz-subset0
subset, subsetters = fonts.Font._fonttools_subset, []
def counted(font, *args):
    subsetters.append(font.family)
    return subset(font, *args)
fonts.Font._fonttools_subset = counted
session = session_document(json.loads(sys.argv[1]), "s.json", "s").session
first = to_pdf(session)
clock = time.time
time.time = lambda: clock() + 400 * 86400  # the same export a year later
print(json.dumps({"fonttools": bool(subsetters), "same": to_pdf(session) == first}))
"""


def test_the_same_bytes_when_fonttools_subsets_the_fonts() -> None:
    """Plain text only: with HarfBuzz subsetting it never depended on the clock."""
    import json
    import sys

    document = {
        "id": "plain",
        "messages": [
            {
                "id": "m",
                "role": "user",
                "status": "completed",
                "created_at": 0,
                "content": [{"id": "p", "type": "prose", "markdown": "Plain **words** and `code`."}],
            }
        ],
    }
    run = subprocess.run(
        [sys.executable, "-c", FONTTOOLS_FALLBACK, json.dumps(document)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.splitlines()[-1]) == {"fonttools": True, "same": True}


def test_parts_follow_the_text_so_any_machine_writes_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where parts begin shows (each starts a page): it must not depend on the cores."""
    from vis_export.formats import pdf as module, pdf_pages

    total = sum(_message_sizes(SESSION))
    monkeypatch.setattr(module, "PART_SIZE", total // 3 + 1)
    assert len(module.split(SESSION)) == 3
    renders = []
    for cores in (1, 4):
        monkeypatch.setattr(pdf_pages, "cores", lambda cores=cores: cores)
        renders.append(to_pdf(SESSION))
    assert renders[0] == renders[1]


def _message_sizes(session: Session) -> list[int]:
    """What ``split`` weighs a message by."""
    return [sum(len(str(v)) for b in m.blocks for v in b.fields.values()) + 200 for m in session.messages]


def test_a_long_session_is_split_into_parts_of_bounded_text() -> None:
    """10,000 short messages: each part near ``PART_SIZE``, which bounds a worker's
    memory (the peak itself is measured by ``benchmarks.pdf_memory``)."""
    from vis_export.formats.pdf import PART_SIZE, split
    from vis_export.sources.messages import session_document

    session = session_document(
        {
            "id": "long",
            "messages": [
                {
                    "id": f"m{i}",
                    "role": "user",
                    "status": "completed",
                    "created_at": i,
                    "content": [
                        {"id": f"b{i}", "type": "prose", "markdown": f"Message {i}: the parser reads config files."}
                    ],
                }
                for i in range(10_000)
            ],
        },
        "l",
        "l",
    ).session
    sizes = _message_sizes(session)
    chunks = split(session)
    assert len(chunks) == -(-sum(sizes) // PART_SIZE)
    assert [start for start, _ in chunks[1:]] == [end for _, end in chunks[:-1]] and chunks[-1][1] == 10_000
    assert all(sum(sizes[start:end]) <= PART_SIZE + max(sizes) for start, end in chunks)


from hypothesis import HealthCheck, given, settings  # noqa: E402
from strategies import PRIVATE_CANARY, session_documents, small_blocks  # noqa: E402


@settings(max_examples=examples(8), deadline=None, suppress_health_check=list(HealthCheck))
@given(session_documents(small_blocks))
def test_r2_r7_generated_sessions_in_pdf(document: dict) -> None:
    """Few examples: each is a real WeasyPrint render (about half a second)."""
    session = session_of(document)
    pdf = to_pdf(session)
    text = "".join(page_text(page) for page in PdfReader(io.BytesIO(pdf)).pages)
    assert PRIVATE_CANARY not in text and PRIVATE_CANARY.encode() not in pdf
    assert to_pdf(session) == pdf


def test_a_stop_ends_the_part_being_laid_out(tmp_path: Path) -> None:
    """SIGTERM while a part is laid out in its own process ends both at once: the
    pool waited for the part (a convert ran on for minutes after `timeout` stopped it)."""
    script = tmp_path / "stop.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, signal, sys, threading, time
            from vis_export.formats import pdf
            from vis_export.formats.options import ExportOptions
            from vis_export.model import Session

            def slow(*args, **kwargs):
                time.sleep(120)

            pdf._render_part = slow  # the forked process lays out with this
            signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))  # as the command line does
            threading.Timer(1.0, os.kill, [os.getpid(), signal.SIGTERM]).start()
            pdf._lay_out(Session(id="s", messages=()), ExportOptions(), [(0, 1), (1, 2)])
            """
        )
    )
    # The deadline is the wait for the command (and the part: it holds the pipes) to end, half the part's sleep;
    # not a bound on how long it took, which a loaded machine stretches while Python starts.
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 128 + signal.SIGTERM, result.stderr


def test_a_part_is_laid_out_with_few_collections() -> None:
    """WeasyPrint keeps most of a part's boxes to its end: at Python's young-generation
    threshold the cyclic collector walked them again and again (about 1,060 collections
    and a seventh of the CPU time of a 77-page part): here 19 a page, 5 with the part's
    threshold (the page's HTML and the join collect as before). Afterwards the threshold is the caller's."""
    import gc

    from corpus import session as corpus_session

    session = session_of(corpus_session(60_000))
    before = gc.get_threshold()
    collections = 0

    def count(phase: str, info: dict[str, int]) -> None:
        nonlocal collections
        collections += phase == "start"

    gc.callbacks.append(count)
    try:
        pages = len(PdfReader(io.BytesIO(to_pdf(session))).pages)
    finally:
        gc.callbacks.remove(count)
    assert pages >= 10
    assert collections <= 8 * pages, (collections, pages)
    assert gc.get_threshold() == before
