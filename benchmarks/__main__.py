"""Run every benchmark and print each path beside its anchor, measured in the same run.

python -m benchmarks            # all sizes up to 16 MB
python -m benchmarks --quick    # small sizes only, for a smoke run
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess

from benchmarks.harness import Result, best_time, peak_mb, process_time, table
from corpus import session_bytes

SIZES = {"1 message": 1, "100 KB": 100_000, "1 MB": 1_000_000, "16 MB": 16_000_000}
PDF_SIZE = 620_000  # about 350 pages of A4


def load_validate(sizes: dict[str, int]) -> list[Result]:
    from benchmarks import load

    return load.run(sizes)


def exports(size: int, label: str) -> list[Result]:
    """Each export of a loaded session beside loading it (the anchor)."""
    from vis_export.formats.markdown import MarkdownProjector
    from vis_export.formats.text import TextProjector
    from vis_export.sources.files import read_bytes

    data = session_bytes(size)
    (loaded,) = read_bytes(data, "bench", "bench")
    session = loaded.session
    load = best_time(lambda: read_bytes(data, "bench", "bench"), 3)
    results = []
    for name, projector in (("text", TextProjector()), ("markdown", MarkdownProjector())):
        ours = best_time(lambda projector=projector: _drain(projector.pieces(session)), 3)
        peak = peak_mb(lambda projector=projector: _drain(projector.pieces(session)))
        results.append(Result(f"{name} export {label}", ours, "load+validate", load, "<= 2x", peak))
    return results


def _drain(pieces: object) -> None:
    """Consume the pieces as a file writer would, without holding them all."""
    for _ in pieces:  # type: ignore[attr-defined]
        pass


def clipboard_block() -> list[Result]:
    from vis_export.copying import clipboard
    from vis_export.model import block_from_json

    block = block_from_json({"id": "c", "type": "code", "language": "python", "text": "print('hi')\n" * 20})
    anchor = best_time(lambda: [json.loads('{"id": "c"}') for _ in range(1000)], 5) / 1000
    text_only = (
        best_time(lambda: [clipboard(block, flavours=("text/plain", "text/markdown")) for _ in range(1000)], 5) / 1000
    )
    clipboard(block)  # the HTML renderer's imports, once
    every = best_time(lambda: [clipboard(block) for _ in range(100)], 5) / 100
    return [
        Result("clipboard(code block) text+md", text_only, "json.loads(tiny)", anchor, "µs", None),
        Result("clipboard(code block) +html", every, "json.loads(tiny)", anchor, "< 1 ms", None),
    ]


def html_export(size: int, label: str) -> list[Result]:
    from benchmarks.render import in_process

    figures = in_process("html", str(size))
    results = [Result(f"html export {label}", figures["ours"], "mistune+Pygments", figures["anchor"], "<= 1.2x")]
    if shutil.which("pandoc"):  # the same Markdown through pandoc, where it is installed
        from vis_export.formats.markdown import to_markdown
        from vis_export.sources.files import read_bytes

        (loaded,) = read_bytes(session_bytes(size), "bench", "bench")
        markdown = to_markdown(loaded.session).encode("utf-8")
        pandoc = best_time(
            lambda: subprocess.run(
                ["pandoc", "-f", "gfm", "-t", "html"], input=markdown, capture_output=True, check=True
            ),
            1,
        )
        results.append(Result(f"html export {label}", figures["ours"], "pandoc gfm->html", pandoc, "report"))
    return results


def pdf_export(size: int) -> tuple[list[Result], list[str]]:
    from benchmarks.render import in_process

    runs = {variant: in_process("pdf", str(size), variant) for variant in ("ours", "naive", "plain")}
    pages = runs["ours"]["pages"]
    results = [
        Result(
            f"pdf {pages} pages (ours)",
            runs["ours"]["seconds"],
            "naive spans",
            runs["naive"]["seconds"],
            "faster",
            runs["ours"]["peak_mb"],
        ),
        Result(
            f"pdf {pages} pages (ours)",
            runs["ours"]["seconds"],
            "plain <pre>",
            runs["plain"]["seconds"],
            "faster",
            runs["plain"]["peak_mb"],
        ),
    ]
    speed = {variant: run["pages"] / run["seconds"] for variant, run in runs.items()}
    lines = [
        f"pdf pages/s: ours / plain <pre> {speed['ours'] / speed['plain']:.2f}x (goal >= 1.2x; CPU-s "
        f"{runs['ours']['cpu_seconds']:.1f} against {runs['plain']['cpu_seconds']:.1f}); "
        f"ours {pages / runs['ours']['seconds']:.1f} (goal >= 30, peak {runs['ours']['peak_mb']:.0f} MB)"
        f", naive Pygments spans {runs['naive']['pages'] / runs['naive']['seconds']:.1f} "
        f"(peak {runs['naive']['peak_mb']:.0f} MB), plain <pre> "
        f"{runs['plain']['pages'] / runs['plain']['seconds']:.1f} (peak {runs['plain']['peak_mb']:.0f} MB)"
    ]
    return results, lines


def import_time(repeat: int) -> list[Result]:
    ours = process_time("import vis_export", repeat)
    anchor = process_time("pass", repeat)
    return [Result("import vis_export", ours, "bare interpreter", anchor, "<= 2x")]


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes and fewer repeats")
    args = parser.parse_args()
    sizes = {k: v for k, v in SIZES.items() if not args.quick or v <= 1_000_000}
    biggest = max(sizes, key=sizes.__getitem__)
    pdf_results, pdf_lines = pdf_export(120_000 if args.quick else PDF_SIZE)
    from benchmarks import pdf_typst

    typst_results, typst_lines = pdf_typst.results(120_000 if args.quick else PDF_SIZE)
    from benchmarks import foreign, search as search_bench

    search_results, search_lines = [], []
    for engine, blocks in (("tantivy", 10_000 if args.quick else 100_000), ("whoosh", 2_000 if args.quick else 20_000)):
        found, line = search_bench.run(blocks, engine)
        search_results += found
        search_lines.append(line)
    from benchmarks import search_postgres

    found, line = search_postgres.run(10_000 if args.quick else 100_000)
    search_results += found
    search_lines.append(line)
    from benchmarks import serve as serve_bench

    serve_results, serve_lines = serve_bench.run(args.quick)
    from benchmarks import redact as redact_bench

    redact_results = redact_bench.speed(sizes[biggest])
    redact_lines = redact_bench.false_positives(100 if args.quick else 600, show=False)
    results = (
        load_validate(sizes)
        + foreign.run({k: v for k, v in sizes.items() if v >= 1_000_000})
        + exports(sizes[biggest], biggest)
        + html_export(sizes[biggest], biggest)
        + pdf_results
        + typst_results
        + search_results
        + clipboard_block()
        + serve_results
        + redact_results
        + import_time(5 if args.quick else 21)
    )
    print(table(results))
    print("\n".join(pdf_lines + typst_lines + search_lines + serve_lines + redact_lines))


if __name__ == "__main__":
    main()
