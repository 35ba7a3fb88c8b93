"""Draw the figures of ``docs/benchmarks.md`` against their goals: ``docs/images/benchmarks.png``.

python -m benchmarks.plot       # needs matplotlib (pip install -e '.[plot]')

The figures are the ones the page's tables report (a test checks that each one
shown here is written there), so after a new run update both, then draw again.
Each bar is a figure divided by its goal, turned so that left of 1 is better:
a figure whose goal is a floor (throughput) is shown as goal / figure.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal, NamedTuple

OUT = Path(__file__).resolve().parent.parent / "docs" / "images" / "benchmarks.png"


class Figure(NamedTuple):
    path: str
    shown: str  # as docs/benchmarks.md writes it
    value: float
    goal: float
    better: Literal["lower", "higher"]
    unit: str = "x"

    @property
    def share(self) -> float:
        """The figure as a share of what its goal allows: 1 is exactly the goal, below 1 is met."""
        return self.value / self.goal if self.better == "lower" else self.goal / self.value

    @property
    def goal_text(self) -> str:
        sign = "≤" if self.better == "lower" else "≥"
        return f"{sign} {self.goal:g}{self.unit if self.unit == 'x' else ' ' + self.unit}"


FIGURES = (
    Figure("load+validate, 16 MB session", "1.42–1.50x", 1.43, 1.5, "lower"),
    Figure("load+validate, 1 MB", "1.68x", 1.68, 3, "lower"),
    Figure("load+validate, 100 KB", "2.02x", 2.02, 3, "lower"),
    Figure("read Claude Code, 300 KB / Vis JSONL, instructions", "2.38x", 2.38, 1.5, "lower"),
    Figure("read Codex, 300 KB / Vis JSONL, instructions", "2.14x", 2.14, 1.5, "lower"),
    Figure("text export, 16 MB", "1.57x", 1.57, 2, "lower"),
    Figure("Markdown export, 16 MB", "1.91x", 1.91, 2, "lower"),
    Figure("HTML export, 16 MB", "1.27x", 1.27, 1.2, "lower"),
    Figure("PDF (WeasyPrint) / plain <pre>, CPU", "0.53–0.66x CPU", 0.60, 1.2, "higher"),
    Figure("PDF, 10,000 messages, memory", "0.44–0.47 GB", 0.47, 1, "lower", "GB"),
    Figure("PDF Typst / WeasyPrint engine", "0.05x", 0.05, 0.33, "lower"),
    Figure("PDF Typst / hand-written Typst", "0.57x", 0.57, 2, "lower"),
    Figure("index (tantivy) / raw tantivy-py", "0.14–0.17x CPU", 0.16, 0.33, "higher"),
    Figure("index (tantivy) / SQLite FTS5", "0.16–0.25x CPU", 0.20, 1, "higher"),
    Figure("no-op rerun / full index (tantivy)", "0.011–0.019x wall", 0.019, 0.02, "lower"),
    Figure("query p95, 96k blocks (tantivy)", "3.13–3.27 ms CPU", 3.27, 2, "lower", "ms"),
    Figure("Whoosh index, 19k blocks", "5.6k per CPU-s", 5.6, 5, "higher", "k/s"),
    Figure("Whoosh query p95, 19k blocks", "16.7–17.6 ms CPU", 17.6, 20, "lower", "ms"),
    Figure("index (PostgreSQL) / tantivy job", "0.50x CPU", 0.50, 0.5, "higher"),
    Figure("two PostgreSQL jobs / one", "1.76x", 1.76, 1.3, "higher"),
    Figure("no-op rerun (PostgreSQL)", "0.011–0.012x CPU", 0.012, 0.02, "lower"),
    Figure("query p95 (PostgreSQL)", "6.8 ms", 6.8, 20, "lower", "ms"),
    Figure("query p95, 1M blocks, two words (tantivy)", "24.3–24.9 ms CPU", 24.9, 20, "lower", "ms"),
    Figure("query p95, 1M blocks, a phrase (tantivy)", "17.7–18.1 ms CPU", 18.1, 20, "lower", "ms"),
    Figure("query p95, 1M blocks, two words (PostgreSQL)", "2.7–3.4 ms CPU", 3.4, 20, "lower", "ms"),
    Figure("query p95, 1M blocks, a phrase (PostgreSQL)", "0.9–1.2 ms CPU", 1.2, 20, "lower", "ms"),
    Figure("serve: a 1 MB session's page, p95", "0.89 ms", 0.89, 50, "lower", "ms"),
    Figure("serve: /api/search p95", "5.2 ms", 5.2, 20, "lower", "ms"),
    Figure("serve: sessions page at 100k, p95", "9.0 ms", 9.0, 50, "lower", "ms"),
    Figure("import vis_export", "1.21x", 1.21, 2, "lower"),
    Figure("--redact, 16 MB, no secret", "0.42–0.47x", 0.47, 0.5, "lower"),
    Figure("--redact, 16 MB, with secrets", "0.66–0.68x", 0.68, 0.5, "lower"),
    Figure("Dask local:2 / in-process: PDF", "0.60x", 0.60, 0.625, "lower"),
    Figure("Dask local:2 / in-process: Markdown", "0.86x", 0.86, 1.5, "lower"),
    Figure("Dask local:2 / in-process: index", "1.03x", 1.03, 1, "lower"),
)


def draw(out: Path = OUT) -> None:
    import matplotlib

    matplotlib.use("Agg")  # a file, never a window
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter

    rows = list(reversed(FIGURES))  # the first figure on top
    fig, ax = plt.subplots(figsize=(9, 7.5), dpi=100)
    colours = ["#2e7d32" if f.share <= 1 else "#c62828" for f in rows]
    # Each bar runs from the goal (1) to the figure: leftwards when it is met.
    lefts = [min(f.share, 1.0) for f in rows]
    ax.barh(range(len(rows)), [abs(f.share - 1.0) for f in rows], left=lefts, color=colours)
    ax.set_xscale("log")
    ax.set_xlim(0.01, 30)
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.axvline(1, color="black", linewidth=1)
    ax.set_yticks(range(len(rows)), [f.path for f in rows], fontsize=9)
    for y, f in enumerate(rows):
        ax.text(max(f.share, 1.0) * 1.08, y, f"{f.shown} (goal {f.goal_text})", va="center", fontsize=8)
    ax.set_xlabel("figure / goal (floors turned: goal / figure); left of the line: goal met")
    ax.set_title("Benchmarks against their goals (2-core machines, 2026-11-30 to 12-02)", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(out, metadata={"Software": None})  # no version stamp: the same figures, the same file
    plt.close(fig)


if __name__ == "__main__":
    draw(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
    print(OUT if len(sys.argv) == 1 else sys.argv[1])
