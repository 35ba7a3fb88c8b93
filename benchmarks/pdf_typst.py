"""The Typst PDF engine beside the WeasyPrint engine and beside Typst itself.

    python -m benchmarks.pdf_typst [SIZE]    # default: the ~350-page session of python -m benchmarks

Three variants of the same session, each in a fresh interpreter so that its
peak resident memory (``ru_maxrss``, worker processes included) is its own:
``typst`` (``--pdf-engine typst``, loading excluded, the projection included),
``weasyprint`` (the default engine), and the anchor: an equivalent Typst
document written by hand (the same page setup, a heading per message, prose
as escaped markup, code and tool parts as raw blocks coloured by Typst's own
highlighter) compiled directly, which is what an exporter writing Typst
markup would cost; writing that markup is not timed.
"""

from __future__ import annotations

import io
import json
import re
import resource
import sys
import time
from typing import Any

from benchmarks.harness import Result, table
from benchmarks.render import in_process, loaded_session

SIZE = 620_000  # benchmarks.__main__.PDF_SIZE: about 350 pages with WeasyPrint
ANCHOR_PAGE = """#set page(paper: "a4", margin: (x: 14mm, top: 18mm, bottom: 16mm),
  header: align(center, text(size: 8pt)[Benchmark session]),
  footer: context align(center, text(size: 8pt, counter(page).display("1 / 1", both: true))))
#set text(font: ("Noto Sans", "DejaVu Sans"), size: 10pt)
#show raw.where(block: true): it => block(width: 100%, fill: luma(246), inset: 6pt, radius: 3pt, it)
#show raw: set text(font: "DejaVu Sans Mono", size: 8.5pt)
"""


def _markup(text: str) -> str:
    """Text as Typst markup that shows it as written: every ASCII symbol escaped."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)


def _raw(text: str, language: str) -> str:
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{language}\n{text}\n{fence}\n"


def anchor_document(session: Any) -> str:
    """The hand-written equivalent of our output, from the same shown blocks."""
    from vis_export.formats.projector import Projector, role_label
    from vis_export.model import CodeBlock, ProseBlock, ReasoningBlock, ToolBlock
    from vis_export.policy import visible_session

    parts = [ANCHOR_PAGE, "= Benchmark session\n"]
    projector = Projector()
    for message in visible_session(session, "visible").messages:
        parts.append(f"== {role_label(message)} {message.model or ''}\n")
        for block in message.blocks:
            if isinstance(block, ProseBlock):
                parts.append(_markup(block.markdown) + "\n\n")
            elif isinstance(block, ReasoningBlock):
                parts.append(f"#block(stroke: 0.5pt, inset: 6pt)[{_markup(block.text)}]\n\n")
            elif isinstance(block, CodeBlock):
                parts.append(_raw(block.text, block.language or ""))
            elif isinstance(block, ToolBlock):
                parts.append(f"*{_markup(block.tool)}* {block.status}\n\n")
                parts += [_raw(part.text, part.language or "") for part in projector.tool_parts(block)]
    return "".join(parts)


def run(variant: str, size: int) -> dict[str, float]:
    from pypdf import PdfReader

    from vis_export.formats.options import ExportOptions
    from vis_export.formats.pdf import render_pdf

    session = loaded_session(size)
    if variant == "anchor":
        import typst

        source = anchor_document(session).encode("utf-8")
        start = time.perf_counter()
        data = typst.compile(source)
    else:
        start = time.perf_counter()
        data = render_pdf(session, ExportOptions(pdf_engine=variant))
    seconds = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    pages = len(PdfReader(io.BytesIO(data)).pages)
    return {"seconds": seconds, "pages": pages, "peak_mb": max(own, children) / 1024}


def results(size: int = SIZE) -> tuple[list[Result], list[str]]:
    runs = {v: in_process(str(size), v, module="benchmarks.pdf_typst") for v in ("typst", "weasyprint", "anchor")}
    typst, weasy, anchor = runs["typst"], runs["weasyprint"], runs["anchor"]
    label = f"pdf typst engine ({typst['pages']:.0f} pages)"
    found = [
        Result(label, typst["seconds"], "weasyprint engine", weasy["seconds"], "<= 0.33x", typst["peak_mb"]),
        Result(label, typst["seconds"], "typst on hand-written", anchor["seconds"], "<= 2x", typst["peak_mb"]),
    ]
    lines = [
        f"pdf engines, one run: typst {typst['pages']:.0f} pages in {typst['seconds']:.2f} s "
        f"({typst['pages'] / typst['seconds']:.0f} pages/s, peak {typst['peak_mb']:.0f} MB; goal < 1 GB), "
        f"weasyprint {weasy['pages']:.0f} pages in {weasy['seconds']:.2f} s "
        f"({weasy['pages'] / weasy['seconds']:.1f} pages/s, peak {weasy['peak_mb']:.0f} MB), "
        f"anchor {anchor['pages']:.0f} pages in {anchor['seconds']:.2f} s (peak {anchor['peak_mb']:.0f} MB); "
        f"typst engine {weasy['seconds'] / typst['seconds']:.1f}x faster than weasyprint (goal >= 3x)"
    ]
    return found, lines


def main() -> None:
    if len(sys.argv) == 3:  # one variant, in its own interpreter (from ``in_process``)
        print(json.dumps(run(sys.argv[2], int(sys.argv[1]))))
        return
    found, lines = results(int(sys.argv[1]) if len(sys.argv) > 1 else SIZE)
    print(table(found))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
