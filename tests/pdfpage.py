"""A PDF's pages as a reader sees them: where each piece of text sits, which
way up it is, which font draws it, and what the page looks like as an image.

Two readers, for what each does well: pypdf's text visitor gives the matrix a
run of text is drawn with (its baseline, and whether it is upright) and its
font; poppler's ``pdftotext -bbox-layout`` gives each word's box as a viewer
lays it out, and ``pdftoppm`` the page as pixels.
"""

from __future__ import annotations

import io
import re
import subprocess
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any, NamedTuple

from pypdf import PageObject, PdfReader
from system import require


class Run(NamedTuple):
    """A piece of text as drawn: ``x`` and ``baseline`` in points from the
    page's bottom left (PDF user space), ``upright`` when its y axis points up,
    ``size`` in points as printed."""

    text: str
    x: float
    baseline: float
    upright: bool
    font: str
    size: float


class Word(NamedTuple):
    """A word's box in points from the page's top left (poppler's layout)."""

    text: str
    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Word) -> bool:
        across = self.left < other.right and other.left < self.right
        return across and self.top < other.bottom and other.top < self.bottom


def outline(pdf: bytes) -> list[tuple[int, str]]:
    """The outline's entries in order, each with its depth (1 at the top): a
    viewer's bookmarks, turns first and the headings of their prose below them."""
    found: list[tuple[int, str]] = []

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
            else:
                found.append((level, str(item.title)))

    walk(PdfReader(io.BytesIO(pdf)).outline, 1)
    return found


def runs(pdf: bytes) -> list[list[Run]]:
    """Every page's text runs, in drawing order."""
    return [_page_runs(page) for page in PdfReader(io.BytesIO(pdf)).pages]


def _page_runs(page: PageObject) -> list[Run]:
    found: list[Run] = []

    def visit(text: str, cm: list[float], tm: list[float], font: dict[str, Any] | None, size: float) -> None:
        # WeasyPrint gives some fonts a single-byte encoding that pypdf reads as two bytes.
        text = text.replace("\x00", "")
        if not text.strip():
            return
        a, b, c, d, e, f = tm  # the text matrix, then the page's transformation: where it lands
        m = [
            a * cm[0] + b * cm[2],
            a * cm[1] + b * cm[3],
            c * cm[0] + d * cm[2],
            c * cm[1] + d * cm[3],
            e * cm[0] + f * cm[2] + cm[4],
            e * cm[1] + f * cm[3] + cm[5],
        ]
        upright = m[0] > 0 and m[3] > 0 and m[1] == m[2] == 0
        name = str(font.get("/BaseFont", "")) if font else ""
        found.append(Run(text, m[4], m[5], upright, name, size * abs(m[3])))

    page.extract_text(visitor_text=visit)
    return found


def words(pdf: bytes, folder: Path) -> list[list[Word]]:
    """Every page's words with their boxes, as poppler lays them out."""
    require("pdftotext")
    source = folder / "words.pdf"
    source.write_bytes(pdf)
    layout = subprocess.run(
        ["pdftotext", "-bbox-layout", str(source), "-"], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    pattern = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>')
    return [
        [Word(unescape(m[5]), float(m[1]), float(m[2]), float(m[3]), float(m[4])) for m in pattern.finditer(page)]
        for page in layout.split("</page>")[:-1]
    ]


class Image(NamedTuple):
    """A page as ``pdftoppm`` renders it; regions are given in points from the top left."""

    width: int
    height: int
    scale: float  # pixels per point
    rgb: bytes

    def pixels(self, left: float, top: float, right: float, bottom: float) -> Iterator[tuple[int, int, int]]:
        x0, x1 = max(0, int(left * self.scale)), min(self.width, int(right * self.scale) + 1)
        for y in range(max(0, int(top * self.scale)), min(self.height, int(bottom * self.scale) + 1)):
            row = self.rgb[(y * self.width + x0) * 3 : (y * self.width + x1) * 3]
            yield from zip(row[0::3], row[1::3], row[2::3], strict=True)

    def ink(self, left: float, top: float, right: float, bottom: float) -> int:
        """How many pixels in the region are dark enough to be text."""
        return sum(1 for pixel in self.pixels(left, top, right, bottom) if sum(pixel) < 3 * 160)

    def colour(self, left: float, top: float, right: float, bottom: float) -> int:
        """How many pixels in the region are strongly coloured (a colour emoji, not a black box)."""
        return sum(1 for pixel in self.pixels(left, top, right, bottom) if max(pixel) - min(pixel) > 80)


def page_images(pdf: bytes, folder: Path, dpi: int = 60) -> list[Image]:
    """Every page as ``pdftoppm`` renders it (PPM, read here without an imaging library)."""
    require("pdftoppm")
    source = folder / "pages.pdf"
    source.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", str(dpi), str(source), str(folder / "page")], check=True, timeout=120)
    images = []
    for path in sorted(folder.glob("page-*.ppm"), key=lambda p: int(p.stem.rsplit("-", 1)[1])):
        data = path.read_bytes()
        header = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
        assert header is not None, path
        width, height = int(header[1]), int(header[2])
        images.append(Image(width, height, dpi / 72, data[header.end() : header.end() + width * height * 3]))
    return images
