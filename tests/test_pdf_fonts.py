"""Every character in the PDF drawn by a font that has it: CJK by a CJK font
(a monospaced one in code), emoji by the colour emoji font, and nothing else
by the emoji font. A missing glyph shows as an empty box, which text
extraction cannot see: the font each run is drawn with, and the colour of
the page image where an emoji sits, can."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from pdfpage import Run, page_images, runs, words
from system import require_fonts

from vis_export.formats.pdf import to_pdf
from vis_export.model import Session
from vis_export.sources.messages import session_document

pytestmark = pytest.mark.slow  # renders PDFs

CJK = "日本語のテキスト 中文 한국어"
EMOJI = "🎉🚀"


def is_cjk(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL"))


def is_emoji(ch: str) -> bool:
    return 0x1F300 <= ord(ch) <= 0x1FAFF


def session() -> Session:
    return session_document(
        {
            "id": "fonts",
            "title": f"Fonts {CJK}",
            "messages": [
                {
                    "id": "m1",
                    "role": "user",
                    "status": "completed",
                    "created_at": 1740000000000,
                    "content": [
                        {"id": "p", "type": "prose", "markdown": f"Prose: {CJK} and emoji {EMOJI} on 2025-02-19."},
                        {
                            "id": "a",
                            "type": "attachment",
                            "attachment_id": "x",
                            "name": "notes.txt",
                            "media_type": "text/plain",
                        },
                        {"id": "c", "type": "code", "language": "python", "text": f"print('{CJK} {EMOJI}')  # 42\n"},
                    ],
                },
                {
                    "id": "m2",
                    "role": "assistant",
                    "status": "completed",
                    "created_at": 1740000000100,
                    "content": [
                        {
                            "id": "t",
                            "type": "tool",
                            "tool": "shell",
                            "status": "completed",
                            "input": {"command": "cat notes.txt"},
                            "output": f"{CJK}\n{EMOJI} 100%\n",
                        }
                    ],
                },
            ],
        },
        "fonts.json",
        "fonts",
    ).session


@pytest.fixture(scope="module")
def pdf() -> bytes:
    require_fonts("fonts-noto-cjk", "fonts-noto-color-emoji")
    return to_pdf(session())


@pytest.fixture(scope="module")
def drawn(pdf: bytes) -> list[Run]:
    return [run for page in runs(pdf) for run in page]


def test_cjk_is_drawn_by_a_cjk_font_and_monospaced_in_code(drawn: list[Run]) -> None:
    cjk = [run for run in drawn if any(is_cjk(ch) for ch in run.text)]
    assert {ch for run in cjk for ch in run.text if is_cjk(ch)} == {ch for ch in CJK if is_cjk(ch)}
    assert all("CJK" in run.font for run in cjk), {(run.text, run.font) for run in cjk if "CJK" not in run.font}
    assert any("Mono-CJK" in run.font for run in cjk)  # the code block and the tool output
    assert any("CJK" in run.font and "Mono" not in run.font for run in cjk)  # the prose


def test_emoji_and_the_attachment_clip_come_from_the_emoji_font(drawn: list[Run]) -> None:
    emoji = [run for run in drawn if any(is_emoji(ch) for ch in run.text)]
    assert {ch for run in emoji for ch in run.text if is_emoji(ch)} == set(EMOJI + "📎")
    assert all("Emoji" in run.font for run in emoji), {(run.text, run.font) for run in emoji}


def test_the_emoji_font_draws_no_letter_or_digit(drawn: list[Run]) -> None:
    """Noto Color Emoji has digits too: named in a font stack, WeasyPrint drew dates with it."""
    stolen = [run for run in drawn if "Emoji" in run.font and any(ch.isascii() and ch.isalnum() for ch in run.text)]
    assert not stolen


def test_emoji_show_in_colour_on_the_page(pdf: bytes, tmp_path: Path) -> None:
    """An empty box is black on white; a drawn 🎉 or 🚀 is in colour (📎 is grey: its font is checked above)."""
    page = words(pdf, tmp_path)[0]
    image = page_images(pdf, tmp_path, dpi=100)[0]
    found = [word for word in page if EMOJI in word.text]
    assert len(found) == 3  # prose, code, tool output
    for word in found:
        # poppler gives the emptied emoji glyphs no height: the picture stands on the baseline
        assert image.colour(word.left, word.top - 12, word.right, word.top + 3) > 50, word
