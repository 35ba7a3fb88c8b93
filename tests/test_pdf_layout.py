"""The PDF's layout as a reader sees it: page numbers at the foot, upright and
clear of the text; task-list checkboxes beside their items; tool output laid
out as text that flows from page to page."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from conftest import INPUT
from pdfpage import page_images, runs, words
from vis_export import load
from vis_export.formats.pdf import to_pdf
from vis_export.model import Session
from vis_export.sources.messages import session_document

PYTEST_LINES = [f"tests/test_parser.py::test_case_{i:02d} PASSED" + " " * 20 + f"[{(i + 1) * 100 // 60:3d}%]"
                for i in range(60)]


def one_message(*blocks: dict[str, Any]) -> Session:
    content = [{"id": f"b{i}", **block} for i, block in enumerate(blocks)]
    return session_document({"id": "layout", "title": "Layout", "messages": [
        {"id": "m", "role": "assistant", "status": "completed", "created_at": 1740000000000, "content": content}]},
        "layout.json", "layout").session


def tool_output(lines: list[str]) -> dict[str, Any]:
    return {"type": "tool", "tool": "shell", "status": "completed", "input": {"command": "pytest -v"},
            "output": "\n".join(lines)}


@pytest.fixture(scope="module")
def long_pdf() -> bytes:
    """Text to the foot of more than one page."""
    return to_pdf(one_message({"type": "prose", "markdown": "The test run:"}, tool_output(PYTEST_LINES * 2)))


@pytest.mark.parametrize("which", ["golden", "long"])
def test_page_numbers_sit_upright_centred_at_the_foot(which: str, long_pdf: bytes) -> None:
    pdf = to_pdf(next(load(INPUT / "session.json"))) if which == "golden" else long_pdf
    reader = PdfReader(io.BytesIO(pdf))
    total = len(reader.pages)
    assert total >= 2
    for number, (page, drawn) in enumerate(zip(reader.pages, runs(pdf)), 1):
        labels = [run for run in drawn if run.text == f"{number} / {total}"]
        assert len(labels) == 1, (number, drawn[-3:])
        label = labels[0]
        assert label.upright
        assert label.baseline < 36  # in the bottom margin (16 mm), not at the top
        assert abs(label.x - float(page.mediabox.width) / 2) < 20  # centred (the label is about 20 pt wide)
        body = [run for run in drawn if run is not label]
        assert min(run.baseline for run in body) > label.baseline + 10  # below every line of text


@pytest.mark.parametrize("which", ["golden", "long"])
def test_page_numbers_overlap_no_word(which: str, long_pdf: bytes, tmp_path: Path) -> None:
    pdf = to_pdf(next(load(INPUT / "session.json"))) if which == "golden" else long_pdf
    pages = words(pdf, tmp_path)
    for number, page in enumerate(pages, 1):
        lowest = max(w.bottom for w in page)
        footer = [w for w in page if w.bottom == lowest]
        rest = [w for w in page if w not in footer]
        assert " ".join(w.text for w in footer) == f"{number} / {len(pages)}"
        assert not any(f.overlaps(w) for f in footer for w in rest)
        assert max(w.bottom for w in rest) < min(f.top for f in footer)


def test_the_page_number_is_ink_at_the_foot_of_the_page_image(long_pdf: bytes, tmp_path: Path) -> None:
    """What a reader sees: a small mark centred in the bottom margin, nothing else there."""
    for image in page_images(long_pdf, tmp_path):
        width, height = image.width / image.scale, image.height / image.scale
        foot = (height - 36, height - 12)
        assert image.ink(width / 2 - 20, foot[0], width / 2 + 20, foot[1]) > 0
        assert image.ink(0, foot[0], width / 2 - 20, foot[1]) == image.ink(width / 2 + 20, foot[0], width, foot[1]) == 0
