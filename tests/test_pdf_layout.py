"""The PDF's layout as a reader sees it: page numbers at the foot, upright and
clear of the text; task-list checkboxes beside their items; tool output laid
out as text that flows from page to page."""

from __future__ import annotations

import io
from itertools import pairwise
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from conftest import INPUT
from pdfpage import Word, page_images, runs, words
from pypdf import PdfReader
from sessions import message_of, session_of

from vis_export import load
from vis_export.formats.pdf import to_pdf
from vis_export.model import Session
from vis_export.sources.messages import session_document

pytestmark = pytest.mark.slow  # renders PDFs

PYTEST_LINES = [
    f"tests/test_parser.py::test_case_{i:02d} PASSED" + " " * 20 + f"[{(i + 1) * 100 // 60:3d}%]" for i in range(60)
]


def one_message(*blocks: dict[str, Any]) -> Session:
    message = message_of(*blocks, created_at=1740000000000)
    return session_of({"id": "layout", "title": "Layout", "messages": [message]}, "layout.json")


def tool_output(lines: list[str]) -> dict[str, Any]:
    return {
        "type": "tool",
        "tool": "shell",
        "status": "completed",
        "input": {"command": "pytest -v"},
        "output": "\n".join(lines),
    }


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
    for number, (page, drawn) in enumerate(zip(reader.pages, runs(pdf), strict=True), 1):
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


def test_task_list_checkboxes_sit_beside_their_items(tmp_path: Path) -> None:
    """``- [ ] item``: the box on the item's baseline, left of its first word, right of the bullet."""
    pdf = to_pdf(one_message({"type": "prose", "markdown": "Tasks:\n\n- [ ] write the parser\n- [x] run the tests"}))
    drawn = runs(pdf)[0]
    page = words(pdf, tmp_path)[0]
    for box, item in (("☐", "write the parser"), ("☑", "run the tests")):
        [mark] = [run for run in drawn if run.text.strip() == box]
        [text] = [run for run in drawn if run.text.strip() == item]
        assert abs(mark.baseline - text.baseline) < 0.5, (mark, text)
        first = next(w for w in page if w.text == item.split()[0])
        [drawn_box] = [w for w in page if w.text == box]
        bullet = max((w for w in page if w.text == "•" and w.right <= drawn_box.left), key=lambda w: w.right)
        assert bullet.right < drawn_box.left < drawn_box.right < first.left < drawn_box.right + 10


def test_code_is_set_smaller_than_the_text_around_it() -> None:
    """Print is 10 pt text; code and tool output at 9 pt (a monospace face looks larger)."""
    drawn = runs(
        to_pdf(
            one_message(
                {"type": "prose", "markdown": "Run `make` to build:"},
                {"type": "code", "language": "sh", "text": "make all\n"},
                tool_output(PYTEST_LINES[:3]),
            )
        )
    )[0]
    text = {round(run.size, 1) for run in drawn if run.text.startswith(("Run", "to build"))}
    code = {round(run.size, 1) for run in drawn if run.text.strip() in ("make", "make all", PYTEST_LINES[0])}
    assert text == {10.0} and code == {9.0}, (text, code)


def test_sixty_lines_of_tool_output_flow_as_text_over_at_most_two_pages() -> None:
    pdf = to_pdf(one_message({"type": "prose", "markdown": "Running the tests."}, tool_output(PYTEST_LINES)))
    assert len(PdfReader(io.BytesIO(pdf)).pages) <= 2


def test_a_tool_block_with_short_parts_stays_on_one_page() -> None:
    """Input, output and error of a few lines each: nothing pushes a part to a page of its own."""
    pdf = to_pdf(
        one_message(
            {
                "type": "tool",
                "tool": "read_file",
                "status": "failed",
                "input": {"path": "a.toml"},
                "output": "line one\nline two\n",
                "error": {"kind": "not_found"},
            }
        )
    )
    assert len(PdfReader(io.BytesIO(pdf)).pages) == 1


# --- what ends a page: content pushed down paragraph by paragraph past a page's foot ---

FILLER = "Filler"
TOP_MARGIN, BOTTOM_MARGIN = 18 / 25.4 * 72, 16 / 25.4 * 72  # the print stylesheet's page margins
AROUND = 50  # more than the space above and below a message's heading, its margins and padding


def pushed_down(paragraphs: int, *messages: dict[str, Any]) -> bytes:
    """The messages after a first one of ``paragraphs`` short paragraphs."""
    markdown = "\n\n".join(f"{FILLER} paragraph {i}." for i in range(paragraphs))
    filler = {"id": "f", "type": "prose", "markdown": markdown}
    return to_pdf(
        session_document(
            {
                "id": "pushed",
                "title": "Pushed",
                "messages": [
                    {
                        "id": "m0",
                        "role": "user",
                        "status": "completed",
                        "created_at": 1740000000000,
                        "content": [filler],
                    },
                    *[{"status": "completed", "created_at": 1740000000000 + i, **m} for i, m in enumerate(messages, 1)],
                ],
            },
            "pushed.json",
            "pushed",
        ).session
    )


def lines(page: list[Word]) -> list[tuple[str, float, float]]:
    """A page's lines of body text (running title and page number left out): text, top,
    bottom. Words of one line may differ in size; each sits across the line's middle."""
    rows: list[list[Word]] = []
    for word in sorted(page, key=lambda w: (w.top + w.bottom) / 2):
        middle = (word.top + word.bottom) / 2
        if rows and min(w.top for w in rows[-1]) < middle < max(w.bottom for w in rows[-1]):
            rows[-1].append(word)
        else:
            rows.append([word])
    return [
        (
            " ".join(w.text for w in sorted(row, key=lambda w: w.left)),
            min(w.top for w in row),
            max(w.bottom for w in row),
        )
        for row in rows[1:-1]
    ]


@pytest.fixture(scope="module")
def first_page_holds() -> int:
    """How many filler paragraphs fill the first page (it depends on the fonts installed)."""
    with TemporaryDirectory() as folder:
        page = words(pushed_down(80), Path(folder))[0]
    return sum(1 for w in page if w.text == FILLER)


def near_the_foot(first_page_holds: int) -> range:
    """Fillers that put what follows them at every height of the first page's last third."""
    return range(first_page_holds - 12, first_page_holds + 1)


LABELLED = {
    "role": "assistant",
    "id": "m1",
    "content": [
        {"id": "c", "type": "code", "language": "python", "text": "def f():\n    a = 1\n    b = 2\n    return a + b\n"},
        {
            "id": "t",
            "type": "tool",
            "tool": "shell",
            "status": "completed",
            "input": {"command": "make", "cwd": "/src"},
            "output": "one\ntwo\nthree\nfour\n",
            "error": {"kind": "exit", "code": 2},
        },
        {"id": "u", "type": "diagram", "render_hint": {"engine": "mermaid", "theme": "dark"}},
    ],
}
LABELS = {"python", "shell completed", "Input", "Output", "Error", "render_hint"}


def test_no_page_ends_with_a_label_or_splits_a_four_line_block(first_page_holds: int, tmp_path: Path) -> None:
    """A label (a code block's language, a tool's name, Input, Output, a field name) goes
    to the next page with what it labels; four lines of code are not split two and two."""
    for paragraphs in near_the_foot(first_page_holds):
        pages = [lines(page) for page in words(pushed_down(paragraphs, LABELLED), tmp_path)]
        assert not [page[-1][0] for page in pages[:-1] if page[-1][0] in LABELS], paragraphs
        code_pages = {n for n, page in enumerate(pages) for text, *_ in page if text in ("def f():", "return a + b")}
        assert len(code_pages) == 1, paragraphs


def test_an_empty_message_stays_on_the_page_it_fits_and_whole(first_page_holds: int, tmp_path: Path) -> None:
    """A message with no blocks is only its heading: when the next message does not fit
    on the page but it does, it stays (no blank foot of a page); when it does not fit,
    it moves whole, never its rule at one page's foot and its heading atop the next."""
    empty = {"id": "m1", "role": "developer", "content": []}
    after = {"id": "m2", "role": "tool", "content": [{"id": "p", "type": "prose", "markdown": "After it."}]}
    for paragraphs in near_the_foot(first_page_holds):
        pdf = pushed_down(paragraphs, empty, after)
        pages = [lines(page) for page in words(pdf, tmp_path)]
        foot = float(PdfReader(io.BytesIO(pdf)).pages[0].mediabox.height) - BOTTOM_MARGIN
        for before, page in pairwise(pages):
            if page[0][0].startswith("Developer"):
                heading = page[0]
                assert before[-1][2] + heading[2] - TOP_MARGIN + AROUND > foot, (paragraphs, before[-1], heading)
                assert heading[1] > TOP_MARGIN + 10, (paragraphs, heading)  # below its own rule


SHORT = {
    "role": "assistant",
    "id": "m1",
    "content": [
        {
            "id": "t",
            "type": "tool",
            "tool": "shell",
            "status": "completed",
            "input": {"command": "make"},
            "output": "one\ntwo\n",
        },
        {"id": "u", "type": "diagram", "render_hint": {"engine": "mermaid", "theme": "dark"}},
    ],
}


def test_a_short_framed_block_goes_to_the_next_page_whole(first_page_holds: int, tmp_path: Path) -> None:
    """A tool's frame (or an unknown block's) broken between its parts runs on,
    empty, to the foot of the page: a short one (``pdf.KEEP_ROWS``, a fifth of a
    page at most) moves to the next page whole."""
    for paragraphs in near_the_foot(first_page_holds):
        pages = [[text for text, *_ in lines(page)] for page in words(pushed_down(paragraphs, SHORT), tmp_path)]
        for first, last in (("shell completed", "two"), ("Unsupported block diagram", '"theme": "dark"')):
            assert [n for n, page in enumerate(pages) if first in page] == [
                n for n, page in enumerate(pages) if last in page
            ], (paragraphs, first)


def test_a_tool_block_longer_than_a_page_starts_where_it_is(first_page_holds: int, tmp_path: Path) -> None:
    """Kept whole, it would leave the rest of a page empty, and break on the next anyway."""
    pages = words(
        pushed_down(
            first_page_holds - 12, {"id": "m1", "role": "tool", "content": [{"id": "t", **tool_output(PYTEST_LINES)}]}
        ),
        tmp_path,
    )
    assert "shell completed" in [text for text, *_ in lines(pages[0])]


@pytest.mark.parametrize(
    ("block", "first"),
    [
        # Wide characters: a line of 100 emoji prints as three lines of code, not one.
        (
            {"type": "tool", "tool": "shell", "status": "completed", "output": "\n".join(["😀" * 100] * 24)},
            "shell completed",
        ),
        # Each field is a label and a frame of its own: 24 one-line fields are two pages.
        ({"type": "diagram", **{f"field_{i:02d}": i for i in range(24)}}, "Unsupported block diagram"),
    ],
    ids=["wide-characters", "many-fields"],
)
def test_a_block_of_few_lines_yet_longer_than_a_page_starts_where_it_is(
    block: dict[str, Any], first: str, tmp_path: Path
) -> None:
    """Kept whole, it left a page all but empty (and its message heading alone on the next)."""
    pages = words(pushed_down(5, {"id": "m1", "role": "assistant", "content": [{"id": "b", **block}]}), tmp_path)
    assert len(pages) >= 2  # longer than a page
    assert first in [text for text, *_ in lines(pages[0])]
