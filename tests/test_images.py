"""Images are checked before a browser or WeasyPrint sees them (R4, R6): real type
from the bytes, size from the header, a placeholder when refused; ``--attachments``
reads only regular files inside its folder.

Renders that a regression would turn into minutes and gigabytes run in a
subprocess with a time and memory limit, so they fail instead.
"""

from __future__ import annotations

import base64
import io
import json
import os
import random
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from htmldom import elements, parse, text_content
from hypothesis import given, strategies as st
from PIL import Image
from timelimit import run_counting_cpu

from vis_export.formats.html import to_html
from vis_export.images import MAX_DOCUMENT_BYTES, MAX_PIXELS, ImageBudget, embed, embed_uri
from vis_export.model import Session
from vis_export.sources.messages import session_document

FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
SIGNATURES = [b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBP"]


def image_bytes(kind: str, size: tuple[int, int], mode: str = "RGB", **options: Any) -> bytes:
    out = io.BytesIO()
    Image.new(mode, size).save(out, kind, **options)
    return out.getvalue()


def png_bomb(side: int = 13000) -> bytes:
    """A 1-bit PNG of ``side``² pixels in about 20 KB (1.4 GB in WeasyPrint)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = zlib.compress(bytes((side + 7) // 8 + 1) * side, 9)
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def svg_bomb(levels: int = 9) -> bytes:
    """Nested ``<use>``: ten copies of the level below at each level, 10⁹ rectangles in 2 KB."""
    groups = ['<g id="l0"><rect width="1" height="1"/></g>']
    for level in range(1, levels + 1):
        groups.append(f'<g id="l{level}">' + f'<use href="#l{level - 1}"/>' * 10 + "</g>")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg"><defs>{"".join(groups)}</defs><use href="#l{levels}"/></svg>'
    ).encode()


def session_with(markdown: str = "", attachment: dict[str, Any] | None = None) -> Session:
    content: list[dict[str, Any]] = [{"id": "p", "type": "prose", "markdown": markdown}]
    if attachment is not None:
        content.append(
            {
                "id": "a",
                "type": "attachment",
                "attachment_id": "att",
                "name": "shot.png",
                "media_type": "image/png",
                **attachment,
            }
        )
    return session_document(
        {
            "id": "s",
            "messages": [{"id": "m", "role": "user", "status": "completed", "created_at": 0, "content": content}],
        },
        "s.json",
        "s",
    ).session


def data_uri(data: bytes, media_type: str = "image/png") -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def shown(html: str) -> tuple[list[str], str]:
    """The ``src`` of every image in the page, and its text."""
    dom = parse(html)
    return [img.get("src") for img in elements(dom, "img")], text_content(dom)


# --- the header reader ---------------------------------------------------------------------


@given(
    st.sampled_from(sorted(FORMATS)),
    st.integers(1, 400),
    st.integers(1, 400),
    st.sampled_from(["RGB", "L", "1", "P", "RGBA"]),
)
def test_size_from_the_header_agrees_with_pillow(kind: str, width: int, height: int, mode: str) -> None:
    if kind == "JPEG" and mode in ("P", "RGBA"):
        mode = "RGB"
    data = image_bytes(kind, (width, height), mode, **({"progressive": True} if width % 2 and kind == "JPEG" else {}))
    assert Image.open(io.BytesIO(data)).size == (width, height)
    assert embed(data, FORMATS[kind]).uri == data_uri(data, FORMATS[kind])


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_too_many_pixels_is_refused_in_every_format(kind: str) -> None:
    side = int(MAX_PIXELS**0.5) + 1
    refused = embed(image_bytes(kind, (side, side), "1" if kind != "JPEG" else "L"), FORMATS[kind])
    assert refused.uri is None and refused.refusal == f"{side}×{side} pixels exceeds the limit of 25 megapixels"


def test_a_gif_frame_beyond_the_screen_counts() -> None:
    """Decoders grow the canvas to hold a frame larger than the GIF's screen."""
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 8000, 8000, 0) + b"\x02\x02\x4c\x01\x00"
    gif = b"GIF89a" + struct.pack("<HHBBB", 10, 10, 0, 0, 0) + frame + b"\x3b"
    assert embed(gif, "image/gif").refusal == "8000×8000 pixels exceeds the limit of 25 megapixels"


@given(st.sampled_from(SIGNATURES), st.binary(max_size=64))
def test_any_bytes_after_a_signature_give_a_verdict(signature: bytes, tail: bytes) -> None:
    for declared in FORMATS.values():
        verdict = embed(signature + tail, declared)
        assert (verdict.uri is None) != (verdict.refusal is None)


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_every_truncation_of_a_real_image_gives_a_verdict(kind: str) -> None:
    data = image_bytes(kind, (37, 21), "RGB")
    for end in range(len(data)):
        verdict = embed(data[:end], FORMATS[kind])
        assert (verdict.uri is None) != (verdict.refusal is None)


def test_the_declared_type_must_be_the_real_one() -> None:
    jpeg = image_bytes("JPEG", (4, 4))
    assert embed(jpeg, "image/png").refusal == "declared image/png, but the bytes are JPEG"
    assert embed(svg_bomb(), "image/png").refusal == "not a PNG, JPEG, GIF or WebP image"
    assert embed(svg_bomb(), "image/svg+xml").refusal == "not a PNG, JPEG, GIF or WebP image"


def test_a_data_uri_is_decoded_checked_and_written_anew() -> None:
    png = image_bytes("PNG", (3, 2))
    canonical = data_uri(png)
    percent = "data:image/png," + "".join(f"%{byte:02x}" for byte in png)
    spaced = "data:image/PNG;charset=x;BASE64, " + " \n".join(base64.b64encode(png).decode())
    assert [embed_uri(uri).uri for uri in (canonical, percent, spaced)] == [canonical] * 3
    assert embed_uri("data:image/png;base64,iVBOR!").refusal == "its base64 data is broken"


# --- in HTML and PDF ----------------------------------------------------------------------------


def test_a_refused_image_in_prose_is_a_named_placeholder() -> None:
    markdown = (
        f"![big & <b>bold</b>]({data_uri(png_bomb())}) ![]({data_uri(svg_bomb())}) "
        f"![fine]({data_uri(image_bytes('GIF', (2, 2)), 'image/gif')})"
    )
    sources, text = shown(to_html(session_with(markdown)))
    assert sources == [data_uri(image_bytes("GIF", (2, 2)), "image/gif")]
    assert "[image not shown: big & <b>bold</b> — 13000×13000 pixels exceeds the limit of 25 megapixels]" in text
    assert "[image not shown: image — not a PNG, JPEG, GIF or WebP image]" in text


def test_a_refused_attachment_is_a_named_placeholder_in_prose_and_block(tmp_path: Path) -> None:
    (tmp_path / "att").write_bytes(image_bytes("JPEG", (4, 4)))
    sources, text = shown(to_html(session_with("see ![](attachment:att)", {}), attachments=tmp_path))
    assert sources == []
    assert text.count("[image not shown: shot.png — declared image/png, but the bytes are JPEG]") == 1
    assert "[image not shown: image — declared image/png, but the bytes are JPEG]" in text
    (tmp_path / "att").write_bytes(png := image_bytes("PNG", (4, 4)))
    sources, text = shown(to_html(session_with("see ![](attachment:att)", {}), attachments=tmp_path))
    assert sources == [data_uri(png)] * 2 and "not shown" not in text


def render_pdf_bounded(session_code: str, tmp_path: Path) -> str:
    """Text of the PDF the code's ``session`` renders to, in a subprocess limited to
    60 seconds and 1.5 GB: an image that reaches WeasyPrint unchecked fails it."""
    out = tmp_path / "out.pdf"
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_images import *\n"
        "from vis_export.formats.pdf import to_pdf\n"
        f"{session_code}\n"
        f"open({str(out)!r}, 'wb').write(to_pdf(session, attachments=attachments))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, cwd=tmp_path)
    return subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
def test_image_bombs_never_reach_weasyprint(tmp_path: Path) -> None:
    (tmp_path / "att").write_bytes(png_bomb())
    text = render_pdf_bounded(
        "attachments = " + repr(str(tmp_path)) + "\n"
        "session = session_with(f'![svg]({data_uri(svg_bomb())}) ![png]({data_uri(png_bomb())})', {})",
        tmp_path,
    )
    words = " ".join(text.split())  # as read, whatever the line breaks
    assert "image not shown: svg — not a PNG, JPEG, GIF or WebP image" in words
    assert words.count("13000×13000 pixels exceeds") == 2


def noise_png(side: int) -> bytes:
    """A PNG that does not compress: about ``3 * side²`` bytes."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), random.Random(side).randbytes(side * side * 3)).save(out, "PNG")
    return out.getvalue()


def test_the_budget_counts_every_embedding_as_written_and_nothing_refused() -> None:
    png = noise_png(160)
    written = len(base64.b64encode(png))
    budget = ImageBudget(2**20)
    assert embed(image_bytes("JPEG", (4, 4)), "image/png", budget).refusal == (
        "declared image/png, but the bytes are JPEG"
    )
    fits = 2**20 // written
    assert [embed(png, "image/png", budget).uri for _ in range(fits)] == [data_uri(png)] * fits
    for refused in (embed(png, "image/png", budget), embed_uri(data_uri(png), budget)):
        assert refused.refusal == "images embedded in this document would exceed 1 MB"
    assert budget.left == 2**20 - fits * written


@pytest.mark.slow
def test_an_image_shown_again_and_again_stays_within_each_documents_budget(tmp_path: Path) -> None:
    """One 200 KB attachment named 600 times in prose (in a 1 MB image, 300 times
    made 434 MB of HTML and took 2.1 GB): embedded until the document holds
    ``MAX_DOCUMENT_BYTES`` of images, then a placeholder says why. The budget is
    per document, so the second session of the run shows as many, and the export,
    in a child process, stays near seven times the budget."""
    png = noise_png(260)
    (tmp_path / "att").mkdir()
    (tmp_path / "att" / "att1").write_bytes(png)
    attached = {"id": "a", "type": "attachment", "attachment_id": "att1", "name": "x.png", "media_type": "image/png"}
    prose = {"id": "p", "type": "prose", "markdown": " ".join(["![i](attachment:att1)"] * 600)}
    sessions = [
        {
            "id": name,
            "messages": [
                {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": [attached, prose]}
            ],
        }
        for name in ("one", "two")
    ]
    (tmp_path / "s.json").write_text(json.dumps(sessions))
    peak = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    export = [sys.executable, "-m", "vis_export", "convert", "s.json", "--to", "html", "--attachments", "att"]
    result = subprocess.run(
        [sys.executable, "-c", peak, *export, "-o", "out/"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    fits = MAX_DOCUMENT_BYTES // len(base64.b64encode(png))
    for name in ("one.html", "two.html"):
        html = (tmp_path / "out" / name).read_text()
        assert html.count(data_uri(png)) == fits < 601
        assert html.count("[image not shown: i — images embedded in this document would exceed 64 MB]") == 601 - fits
        assert len(html) < MAX_DOCUMENT_BYTES + 2**20
    assert int(result.stdout) < 600 * 1024  # KB


def gif_of_tiny_blocks(size: int, block: int = 1) -> bytes:
    """A 1×1 GIF whose comment is ``size`` bytes in sub-blocks of ``block`` bytes:
    a valid file, every sub-block of which a header walk must step over."""
    count = size // (block + 1)
    comment = b"\x21\xfe" + (bytes([block]) + b"a" * block) * count + b"\x00"
    frame = b"\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00"
    return b"GIF89a\x01\x00\x01\x00\x00\x00\x00" + comment + frame + b"\x3b"


@pytest.mark.parametrize(
    ("data", "kind", "reason"),
    [
        (gif_of_tiny_blocks(19 * 2**20), "image/gif", "its GIF data has more than 250,000 blocks"),
        (b"\xff\xd8" + b"\xff" * (19 * 2**20), "image/jpeg", "its JPEG data has more than 250,000 blocks"),
    ],
    ids=["gif-sub-blocks", "jpeg-fill-bytes"],
)
def test_a_header_walk_of_millions_of_blocks_is_cut_short(data: bytes, kind: str, reason: str) -> None:
    """19 MB of one-byte GIF sub-blocks took 2 s to walk; no real image has that many."""
    start = time.process_time()
    assert embed(data, kind).refusal == reason
    assert time.process_time() - start < 1


def test_a_gif_of_full_sub_blocks_is_walked_whole() -> None:
    data = gif_of_tiny_blocks(19 * 2**20, 255)
    assert embed(data, "image/gif").uri == data_uri(data, "image/gif")


def test_each_attachment_is_checked_once_per_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 4 KB prose block naming one image 200 times checked it 200 times (a 19 MB GIF: past 60 s),
    and read it 200 times; each document still shows it every time."""
    from vis_export import images
    from vis_export.formats.options import ExportOptions
    from vis_export.formats.pdf_typst import TypstProjector

    (tmp_path / "att").write_bytes(png := image_bytes("PNG", (8, 8)))
    checked: list[int] = []
    real = images._checked
    monkeypatch.setattr(images, "_checked", lambda data, kind: checked.append(len(data)) or real(data, kind))
    session = session_with(" ".join(["![i](attachment:att)"] * 200), {})
    assert shown(to_html(session, attachments=tmp_path))[0] == [data_uri(png)] * 201
    assert checked == [len(png)]
    document = TypstProjector(ExportOptions(attachments=tmp_path)).document(session)
    assert json.dumps(document).count('"t": "img"') == 201 and checked == [len(png)] * 2


def test_an_image_named_again_and_again_is_checked_once_in_bounded_time(tmp_path: Path) -> None:
    """The issue's case: a 19 MB 1×1 GIF named 200 times in a 4 KB prose block, to HTML. The bound is on the
    command's CPU, not its wall time (which a loaded machine stretches)."""
    (tmp_path / "att").mkdir()
    (tmp_path / "att" / "g1").write_bytes(gif_of_tiny_blocks(19 * 2**20))
    attached = {"id": "a", "type": "attachment", "attachment_id": "g1", "name": "g.gif", "media_type": "image/gif"}
    prose = {"id": "p", "type": "prose", "markdown": " ".join(["![i](attachment:g1)"] * 200)}
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": [attached, prose]}
    (tmp_path / "s.json").write_text(json.dumps({"id": "s", "messages": [message]}))
    export = [sys.executable, "-m", "vis_export", "convert", "s.json", "--to", "html", "--attachments", "att"]
    done, cpu = run_counting_cpu([*export, "-o", "s.html"], 120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert cpu < 4  # CPU seconds: 0.75 here; checked at each reference (to its block limit), 8
    html = (tmp_path / "s.html").read_text()
    assert html.count("its GIF data has more than 250,000 blocks") == 201  # each reference, and the block


# --- --attachments DIR ------------------------------------------------------------------------


def test_attachments_are_read_only_from_regular_files_inside_the_folder(tmp_path: Path) -> None:
    folder, outside = tmp_path / "files", tmp_path / "outside.png"
    folder.mkdir()
    png = image_bytes("PNG", (4, 4))
    outside.write_bytes(png)
    (folder / "inside.png").write_bytes(png)
    session = session_with("", {})
    (folder / "att").symlink_to(outside)
    assert shown(to_html(session, attachments=folder))[0] == []
    (folder / "att").unlink()
    (folder / "att").symlink_to(folder / "inside.png")
    assert shown(to_html(session, attachments=folder))[0] == [data_uri(png)]
    (folder / "att").unlink()
    os.mkfifo(folder / "att")  # nobody writes: reading it would wait forever
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); from test_images import *; "
            "from pathlib import Path; print(shown(to_html(session_with('', {}), attachments=Path(sys.argv[2])))[0])",
            str(Path(__file__).parent),
            str(folder),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert result.stdout.strip() == "[]"
