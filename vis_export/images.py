"""Images checked before a browser or WeasyPrint decodes them (R4, R6).

What an image is comes from its bytes, never from its name or declared media
type, and the two must agree. Only PNG, JPEG, GIF and WebP are embedded; SVG
never is, however it is declared: it can carry script and load resources, and
nested ``<use>`` elements grow exponentially (2.4 KB of SVG declared as PNG
kept WeasyPrint busy for minutes). Its bytes match none of the four
signatures, so it is refused like any other unknown bytes.

Width and height come from the header (PNG ``IHDR``, GIF screen and frames,
JPEG start of frame, WebP ``VP8``/``VP8L``/``VP8X``), without decoding: a 20 KB
1-bit PNG of 13,000 × 13,000 pixels took WeasyPrint 1.4 GB. At most
``MAX_PIXELS`` pixels are embedded (a 5K screenshot, a 24-megapixel photo):
WeasyPrint decodes one image at a time and peaked at 270 MB on a 25-megapixel
RGBA PNG and at 440 MB on a lossless WebP of that size.
Pillow could read these headers too, but its own limit is a process-wide
setting reported through warnings, and these few fixed layouts need no decoder.
GIF and JPEG headers are walked block by block, so the walk is bounded by
``MAX_BLOCKS``: 19 MB of one-byte GIF sub-blocks took 2 s, where no real image
needs more than a few hundred thousand blocks (20 MB of full sub-blocks is 80,000).

An embedded image is written back as a fresh base64 ``data:`` URI of the checked
bytes under their real type, so what the renderer reads is what was checked. A
refused image leaves a placeholder that names it and says why. A document checks
each attachment once (``attachments.Attachments`` keeps the verdict), however many
times prose names it: 200 references to a 19 MB GIF were checked 200 times.

A document holds at most ``MAX_DOCUMENT_BYTES`` of images in all, counted as
written (base64, 4/3 of the image's size) by ``ImageBudget``, every embedding
counted, repeats too: an attachment is read once from disk but can be shown
any number of times, and one 1 MB image named 300 times in prose
(``![i](attachment:att1)``) made a 434 MB HTML file and took 2.1 GB. Past the
budget an image is a placeholder saying so. An HTML export peaks near 7 times
the budget (a message's prose is copied whole by mistune, nh3 and the writer):
0.49 GB for a 200 KB image referenced 600 times. The budget belongs to one
rendered document (one ``HtmlProjector.session`` call): each part of a PDF laid
out in parts, in parallel or not, has its own, so a part's images stay within
it however many parts there are. The Typst engine, which keeps every image of
a document decoded until it is written, also bounds their pixels in all.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from markupsafe import Markup

MAX_PIXELS = 25_000_000
MAX_BYTES = 20 * 1024 * 1024
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_BLOCKS = 250_000  # GIF blocks and sub-blocks, JPEG markers and fill bytes
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


@dataclass(frozen=True)
class Embedded:
    """``uri`` to show, or ``refusal`` (why not) for a placeholder."""

    uri: str | None = None
    refusal: str | None = None
    pixels: int = 0

    def charged(self, budget: ImageBudget | None) -> Embedded:
        """This image once more in a document, if what is left of its ``budget`` holds it
        (the base64 bytes as written, and its pixels), else a refusal saying why."""
        if self.uri is None or budget is None:
            return self
        refusal = budget.spend(len(self.uri) - self.uri.index(",") - 1, self.pixels)
        return self if refusal is None else Embedded(refusal=refusal)

    def placeholder(self, name: str) -> Markup:
        """HTML text naming the image (``name`` is escaped unless it is ``Markup``)."""
        return Markup("[image not shown: {} — {}]").format(name, self.refusal)


class ImageBudget:
    """The bytes of images (as base64) one document may still hold (``MAX_DOCUMENT_BYTES`` to start),
    and, for a renderer that keeps every image decoded at once (Typst), its pixels."""

    def __init__(self, limit: int = MAX_DOCUMENT_BYTES, pixels: int | None = None):
        self.limit = limit
        self.left = limit
        self.pixel_limit = pixels
        self.pixels_left = pixels

    def spend(self, size: int, pixels: int = 0) -> str | None:
        """Takes ``size`` bytes and ``pixels``, or says why not (then nothing is taken)."""
        if size > self.left:
            return f"images embedded in this document would exceed {self.limit // 2**20} MB"
        if self.pixel_limit is not None and self.pixels_left is not None:
            if pixels > self.pixels_left:
                return f"images embedded in this document would exceed {self.pixel_limit // 10**6} megapixels"
            self.pixels_left -= pixels
        self.left -= size
        return None


def embed(data: bytes, declared: str, budget: ImageBudget | None = None) -> Embedded:
    """``data`` as a ``data:`` URI if it is an image of the ``declared`` type within
    the limits, and within what is left of the document's ``budget`` (if any)."""
    return checked(data, declared).charged(budget)


def checked(data: bytes, declared: str) -> Embedded:
    """``data`` as a ``data:`` URI if it is an image of the ``declared`` type within
    the limits, charged to no budget yet (``Embedded.charged``)."""
    kind = declared.split(";")[0].strip().lower()
    refusal, pixels = _checked(data, kind)
    if refusal is not None:
        return Embedded(refusal=refusal)
    return Embedded(uri=f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}", pixels=pixels)


def embed_uri(uri: str, budget: ImageBudget | None = None) -> Embedded:
    """A ``data:image/...`` URI written in prose, decoded, checked and written anew."""
    header, comma, payload = uri.strip()[len("data:") :].partition(",")
    if not comma:
        return Embedded(refusal="not a data: URI")
    declared, *parameters = header.split(";")
    data = unquote_to_bytes(payload)
    if parameters and parameters[-1].strip().lower() == "base64":
        try:
            data = base64.b64decode(b"".join(data.split()), validate=True)
        except binascii.Error:
            return Embedded(refusal="its base64 data is broken")
    return embed(data, declared, budget)


def _checked(data: bytes, kind: str) -> tuple[str | None, int]:
    """Why the image is refused (or ``None``), and its pixels."""
    if len(data) > MAX_BYTES:
        return f"larger than the {MAX_BYTES // 2**20} MB limit", 0
    actual = next((media for media, name in FORMATS.items() if _SIGNATURES[name](data)), None)
    if actual is None:
        return "not a PNG, JPEG, GIF or WebP image", 0
    if actual != kind:
        return f"declared {kind or 'as nothing'}, but the bytes are {FORMATS[actual]}", 0
    try:
        width, height = _SIZES[FORMATS[actual]](data)
    except TooManyBlocks:
        return f"its {FORMATS[actual]} data has more than {MAX_BLOCKS:,} blocks", 0
    except (struct.error, IndexError, ValueError):
        return f"its {FORMATS[actual]} header is unreadable", 0
    if width * height > MAX_PIXELS:
        return f"{width}×{height} pixels exceeds the limit of {MAX_PIXELS // 10**6} megapixels", 0
    if width * height == 0:
        return "it has no pixels", 0
    return None, width * height


_SIGNATURES: dict[str, Callable[[bytes], bool]] = {
    "PNG": lambda data: data.startswith(b"\x89PNG\r\n\x1a\n"),
    "JPEG": lambda data: data.startswith(b"\xff\xd8\xff"),
    "GIF": lambda data: data[:6] in (b"GIF87a", b"GIF89a"),
    "WebP": lambda data: data[:4] == b"RIFF" and data[8:12] == b"WEBP",
}


def _png(data: bytes) -> tuple[int, int]:
    if data[12:16] != b"IHDR":
        raise ValueError("no IHDR")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


class TooManyBlocks(ValueError):
    """A header walk that would pass ``MAX_BLOCKS``."""


def _gif(data: bytes) -> tuple[int, int]:
    """The screen, grown by any frame that reaches beyond it (decoders grow the canvas)."""
    width, height, flags = struct.unpack("<HHB", data[6:11])
    position = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    blocks = 0
    while data[position] != 0x3B:  # trailer
        if data[position] == 0x2C:  # image descriptor
            left, top, frame_width, frame_height, flags = struct.unpack("<HHHHB", data[position + 1 : position + 10])
            width, height = max(width, left + frame_width), max(height, top + frame_height)
            position += 10 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0) + 1  # colour table, LZW size
        elif data[position] == 0x21:  # extension: label, then sub-blocks
            position += 2
        else:
            raise ValueError("unknown GIF block")
        while data[position]:  # sub-blocks, each led by its length
            position += data[position] + 1
            blocks += 1
            if blocks > MAX_BLOCKS:
                raise TooManyBlocks
        position += 1
    return width, height


_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg(data: bytes) -> tuple[int, int]:
    position = 2
    for _ in range(MAX_BLOCKS):
        if data[position] != 0xFF:
            raise ValueError("not a JPEG marker")
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
        elif marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return width, height
        elif marker == 0xDA:  # scan data before any frame header
            raise ValueError("no frame header")
        elif 0xD0 <= marker <= 0xD8 or marker == 0x01:  # markers without a length
            position += 2
        else:
            position += 2 + struct.unpack(">H", data[position + 2 : position + 4])[0]
    raise TooManyBlocks


def _webp(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        if data[23:26] != b"\x9d\x01\x2a":
            raise ValueError("no VP8 start code")
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        if data[20] != 0x2F:
            raise ValueError("no VP8L signature")
        bits = struct.unpack("<I", data[21:25])[0]
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    raise ValueError("unknown WebP chunk")


_SIZES = {"PNG": _png, "GIF": _gif, "JPEG": _jpeg, "WebP": _webp}
