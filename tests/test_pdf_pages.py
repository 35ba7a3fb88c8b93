"""PDF pages that are used, in both engines, looked at as a reader would: how
much of each page is left empty (measured on the page image), what a long
tool log prints, that an image shown from prose is on its page in a session
laid out in parts, and that a Dask worker writes the same file."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import INPUT
from hypothesis import given, strategies as st
from pdfpage import page_images
from PIL import Image
from pypdf import PdfReader
from sessions import session_of

from vis_export import load
from vis_export.cli import main
from vis_export.formats import pdf as weasy_module, pdf_typst
from vis_export.formats.options import ExportOptions
from vis_export.formats.pdf import render_pdf, split, to_pdf
from vis_export.formats.tool_lines import PDF_TOOL_LINES, ROW_LENGTH, kept_lines, rows
from vis_export.model import Session

ENGINES = ["weasyprint", "typst"]
LOG = [f"tests/test_parser.py::test_case_{i:04d} PASSED   [{i * 100 // 4000:3d}%]" for i in range(4000)]
TOP, BOTTOM = 18 / 25.4 * 72, 16 / 25.4 * 72  # the page margins, in points


def message(n: int, *blocks: dict[str, Any], role: str = "assistant") -> dict[str, Any]:
    content = [{"id": f"b{n}_{i}", **block} for i, block in enumerate(blocks)]
    return {"id": f"m{n}", "role": role, "status": "completed", "created_at": 1740000000000 + n, "content": content}


def pages_of(*messages: dict[str, Any]) -> Session:
    return session_of({"id": "pages", "title": "Pages", "messages": list(messages)}, "p.json")


def log_session(lines: list[str]) -> Session:
    tool = {"type": "tool", "tool": "shell", "status": "completed", "input": {"command": "pytest -v"}}
    return pages_of(
        message(0, {"type": "prose", "markdown": "Run the tests."}, role="user"),
        message(1, {**tool, "output": "\n".join(lines)}),
        message(2, {"type": "prose", "markdown": "All passed."}),
    )


def text_of(pdf: bytes) -> str:
    return "\n".join(page.extract_text().replace("\x00", "") for page in PdfReader(io.BytesIO(pdf)).pages)


def empty_at_the_foot(pdf: bytes, folder: Path) -> list[float]:
    """For each page, the share of its body (between the margins) below the lowest
    mark on the page image: text, a frame's border or an image."""
    folder.mkdir(exist_ok=True)
    box = PdfReader(io.BytesIO(pdf)).pages[0].mediabox
    width, height = float(box.width), float(box.height)
    shares = []
    for image in page_images(pdf, folder, dpi=30):
        top, bottom = TOP, height - BOTTOM
        lowest = next(
            (
                y
                for y in range(int(bottom), int(top), -1)
                if any(sum(p) < 3 * 245 for p in image.pixels(0, y, width, y))
            ),
            int(top),
        )
        shares.append((bottom - lowest) / (bottom - top))
    return shares


# --- item 7: a long tool log keeps its first and last lines ------------------------------------------


@given(
    st.lists(st.text(st.characters(blacklist_categories=["Cs"]), max_size=250), max_size=200),
    st.integers(min_value=0, max_value=80),
)
def test_kept_lines_are_the_stored_text_first_and_last(lines: list[str], limit: int) -> None:
    text = "\n".join(lines)
    head, left_out, tail = kept_lines(text, limit)
    total = len(rows(text))
    if left_out == 0:
        assert (head, tail) == (text, "") and total <= limit
        return
    assert text.startswith(head) and text.endswith(tail) and len(head) + len(tail) < len(text)
    assert left_out == total - limit and left_out > 0


def test_a_long_line_counts_as_printed() -> None:
    assert len(rows("x" * (ROW_LENGTH * 3 + 1))) == 4 and len(rows("a\n\nb\n")) == 3


def test_a_short_document_is_one_part_whatever_its_log_held() -> None:
    """Measured before the log was cut, 4,000 lines made two parts, the second starting a page."""
    session = log_session(LOG * 2)
    assert len(split(session, options=ExportOptions())) == 1
    assert len(split(session, options=ExportOptions(tool_output_limit="all"))) > 1


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_a_4000_line_log_prints_its_first_and_last_lines(engine: str) -> None:
    pdf = to_pdf(log_session(LOG), engine=engine)  # type: ignore[arg-type]
    text = text_of(pdf)
    assert len(PdfReader(io.BytesIO(pdf)).pages) <= 2  # 88 pages before
    kept = LOG[:40] + LOG[-20:]
    assert all(line.split()[0] in text for line in kept)
    assert LOG[40].split()[0] not in text and LOG[-21].split()[0] not in text
    assert "3,940 lines of tool output left out" in text
    assert text.index(LOG[39].split()[0]) < text.index("3,940 lines") < text.index(LOG[-20].split()[0])


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_the_limit_is_changed_or_lifted(engine: str) -> None:
    ten = text_of(to_pdf(log_session(LOG[:100]), engine=engine, tool_output_limit=10))  # type: ignore[arg-type]
    assert "90 lines of tool output left out" in ten and LOG[6].split()[0] in ten and LOG[7].split()[0] not in ten
    every = text_of(to_pdf(log_session(LOG[:150]), engine=engine, tool_output_limit="all"))  # type: ignore[arg-type]
    assert all(line.split()[0] in every for line in LOG[:150]) and "left out" not in every


def test_the_command_line_takes_a_number_or_all(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    source.write_text(json.dumps({"id": "s", "messages": [message(0, {"type": "prose", "markdown": "x"})]}))
    runner = CliRunner()
    for value in ("all", "ALL", "0", "25"):
        done = runner.invoke(main, ["convert", str(source), "--to", "text", "--tool-output-limit", value])
        assert done.exit_code == 0, done.output
    bad = runner.invoke(main, ["convert", str(source), "--to", "text", "--tool-output-limit", "-3"])
    assert bad.exit_code == 2 and "neither a number" in bad.output
    with pytest.raises(ValueError):
        ExportOptions(tool_output_limit="most")  # type: ignore[arg-type]
    assert PDF_TOOL_LINES == 60


# --- item 8: laid out in parts, an image shown from prose is on its page ------------------------------


BLUE = (70, 130, 180)


def picture(path: Path) -> None:
    Image.new("RGB", (600, 400), BLUE).save(path, "PNG")


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_in_parts_an_image_from_prose_is_drawn(engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attachment is in the first part, the prose that shows it again in the last."""
    picture(tmp_path / "att_img1")
    filler = [message(n, {"type": "prose", "markdown": f"Paragraph {n}. " * 40}) for n in range(2, 30)]
    session = pages_of(
        message(
            0,
            {"type": "attachment", "attachment_id": "att_img1", "name": "shot.png", "media_type": "image/png"},
            role="user",
        ),
        *filler,
        message(99, {"type": "prose", "markdown": "Once more: ![again](attachment:att_img1)"}),
    )
    options = ExportOptions(attachments=tmp_path, pdf_engine=engine)
    if engine == "typst":
        monkeypatch.setattr(pdf_typst, "PART_SIZE", 8_000)
        pdf = render_pdf(session, options)
    else:
        pdf = render_pdf(session, options, parts=3)
    pages = PdfReader(io.BytesIO(pdf)).pages
    texts = [page.extract_text().replace("\x00", "") for page in pages]
    (tmp_path / "pages").mkdir()
    images = page_images(pdf, tmp_path / "pages")
    drawn = [sum(1 for p in image.pixels(0, 0, 600, 850) if p == BLUE) for image in images]
    assert drawn[0] > 1000 and drawn[-1] > 1000 and "Once more" in texts[-1], (drawn, texts[-1][:200])
    assert sum(1 for count in drawn if count) == 2
    assert "again" not in texts[-1].split("Once more:")[1]  # the image, not its alt text


# --- item 9: pages are used to their foot --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_no_page_but_the_last_is_a_fifth_empty(engine: str, tmp_path: Path) -> None:
    """The golden session: its first page was 38% empty (a 20-row tool block kept whole)."""
    pdf = to_pdf(next(load(INPUT / "session.json")), engine=engine)  # type: ignore[arg-type]
    shares = empty_at_the_foot(pdf, tmp_path / "pages")
    assert len(shares) >= 2 and max(shares[:-1]) <= 0.2, shares


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_a_message_of_images_starts_on_the_first_page(engine: str, tmp_path: Path) -> None:
    """A tall image went to the next page with its message's heading: the title was alone on page 1."""
    Image.new("RGB", (900, 1200), (70, 130, 180)).save(tmp_path / "tall", "PNG")
    Image.new("RGB", (1600, 900), (180, 130, 70)).save(tmp_path / "wide", "PNG")
    session = pages_of(
        message(
            0,
            {"type": "prose", "markdown": "The two screenshots of the failing build."},
            {"type": "attachment", "attachment_id": "tall", "name": "tall.png", "media_type": "image/png"},
            {"type": "attachment", "attachment_id": "wide", "name": "wide.png", "media_type": "image/png"},
            role="user",
        )
    )
    pdf = to_pdf(session, engine=engine, attachments=tmp_path)  # type: ignore[arg-type]
    pages = PdfReader(io.BytesIO(pdf)).pages
    assert "screenshots" in pages[0].extract_text().replace("\x00", "") and len(pages[0].images) >= 1
    shares = empty_at_the_foot(pdf, tmp_path / "pages")
    assert max(shares[:-1], default=0) <= 0.2, shares


# --- item 10: on Dask, a session laid out in parts gives the same file ---------------------------------


@pytest.mark.slow
def test_dask_local_workers_lay_out_parts_and_write_the_same_file(tmp_path: Path) -> None:
    """A worker of a local cluster is a daemonic process, which may start none of its own."""
    pytest.importorskip("distributed")
    text = "The parser reads the configuration and checks each key. " * 30
    document = {
        "id": "big",
        "title": "Big",
        "messages": [message(n, {"type": "prose", "markdown": f"{n}. {text}"}) for n in range(110)],
    }
    source = tmp_path / "big.json"
    source.write_text(json.dumps(document))
    assert len(split(session_of(document, "b"), options=ExportOptions())) >= 2
    outputs = []
    for name, extra in (("here.pdf", []), ("dask.pdf", ["--dask", "local:2"])):
        run = subprocess.run(
            [sys.executable, "-m", "vis_export", "convert", str(source), "--to", "pdf", "-o", str(tmp_path / name)]
            + extra,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]
    assert weasy_module.PART_SIZE < len(json.dumps(document))


@pytest.mark.slow
def test_parts_join_where_a_page_is_full(tmp_path: Path) -> None:
    """Laid out in three parts, the pages are used as laid out in one: a part ends at
    the message boundary that leaves its last page fullest (one line, before)."""
    shuffled = random.Random(7)
    session = pages_of(
        *[
            message(
                n,
                *[{"type": "prose", "markdown": f"Word {n}. " * shuffled.randint(10, 300)}] * shuffled.randint(1, 3),
                role="user" if n % 2 else "assistant",
            )
            for n in range(40)
        ]
    )
    whole = render_pdf(session, ExportOptions())
    parts = render_pdf(session, ExportOptions(), parts=3)
    assert len(split(session, 3)) == 3
    one, three = empty_at_the_foot(whole, tmp_path / "one"), empty_at_the_foot(parts, tmp_path / "three")
    assert max(three[:-1]) <= max(0.2, max(one[:-1])), (one, three)
    assert len(three) <= len(one) + 1
    assert text_of(parts).count("Word 39.") == text_of(whole).count("Word 39.")


def _in_a_daemon(parts: int) -> bytes:
    return render_pdf(log_session(LOG[:200]), ExportOptions(), parts=parts)


@pytest.mark.slow
def test_a_daemonic_worker_lays_out_the_parts_itself() -> None:
    """A pool's worker (Dask's too) may start no process: 'daemonic processes are not allowed to have children'."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        there = pool.apply(_in_a_daemon, (3,))
    assert there == _in_a_daemon(3)


@pytest.mark.slow
def test_a_session_a_little_longer_than_a_page_fills_its_first(tmp_path: Path) -> None:
    """When only the padding at the foot of a tool's frame and its message did not fit,
    WeasyPrint moved both messages to page 2: the title alone on page 1, 92% empty."""
    from test_pdf_layout import pushed_down

    tool = {
        "id": "t",
        "type": "tool",
        "tool": "run_tests",
        "status": "failed",
        "input": {"paths": [f"src/module_{i}.py" for i in range(4)], "options": {"fail_fast": True}},
        "output": {"pass": 2, "fail": 1, "log": ["error: the request of the server session handler"]},
    }
    for fillers in range(3, 10):
        after = {"id": "m1", "role": "assistant", "content": [{"id": "p", "type": "prose", "markdown": "Words."}, tool]}
        shares = empty_at_the_foot(pushed_down(fillers, after), tmp_path / str(fillers))
        assert max(shares[:-1], default=0) <= 0.2, (fillers, shares)


@pytest.mark.slow
def test_parts_laid_out_in_turn_keep_two_processes_at_most() -> None:
    """A part is laid out while the one before it is written, and a written part's
    process ends then: kept to the end, 10,000 short messages held 2.9 GB."""
    import multiprocessing
    import threading
    import time

    session = pages_of(*[message(n, {"type": "prose", "markdown": f"Word {n}. " * 200}) for n in range(12)])
    most, done = 0, threading.Event()

    def watch() -> None:
        nonlocal most
        while not done.is_set():
            most = max(most, len(multiprocessing.active_children()))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        parts = render_pdf(session, ExportOptions(), parts=6)
    finally:
        done.set()
        watcher.join()
    assert 1 <= most <= 2, most
    assert parts == render_pdf(session, ExportOptions(), parts=6)  # the same bytes laid out again
    assert " ".join(text_of(parts).split()).count("Word 11.") == 200
