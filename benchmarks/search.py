"""Search benchmarks: our index job (loading included) against raw tantivy-py
adding the same texts, a no-op rerun, and query latency with snippets."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Result
from corpus import session
from vis_export.sources.stamp import RACY_NS

QUERIES = [
    "parse_config",
    "parseConfig",
    "config",
    "server request",
    '"toml.load(f)"',
    "deploy",
    "handler cache",
    "tests pass",
    '"JSON.parse(text)"',
    "index query",
]
# Phrases no word index can narrow: every block is a candidate for the exact check.
WORDLESS_PHRASES = ['"->"', '"&"', '"$"', '"::"']


def write_sessions(folder: Path, blocks: int) -> list[str]:
    """Session files holding about ``blocks`` blocks in all; their texts."""
    texts, made, n = [], 0, 0
    while made < blocks:
        document = session(160_000, seed=n)
        document["id"] = f"bench_{n}"
        (folder / f"bench_{n}.json").write_text(json.dumps(document))
        for message in document["messages"]:
            for block in message["content"]:
                text = block.get("markdown") or block.get("text") or block.get("tool")
                if text and not (block["type"] == "reasoning" and block.get("visibility") != "visible"):
                    texts.append(text)
                made += 1
        n += 1
    return texts


def raw_tantivy(texts: list[str], folder: Path) -> float:
    import tantivy

    schema = tantivy.SchemaBuilder()
    schema.add_text_field("body", stored=True)
    folder.mkdir()
    index = tantivy.Index(schema.build(), path=str(folder))
    start = time.perf_counter()
    writer = index.writer(128 * 1024 * 1024)
    for text in texts:
        writer.add_document(tantivy.Document(body=[text]))
    writer.commit()
    writer.wait_merging_threads()
    return time.perf_counter() - start


def index_command(sources: Path, index: str | Path, engine: str | None) -> list[str]:
    """The job as users run it: ``vis-export index`` in a process of its own
    (a database URI needs no ``--engine``)."""
    chosen = ["--engine", engine] if engine else []
    return [sys.executable, "-m", "vis_export", "index", str(sources), "--index", str(index), *chosen]


def our_job(sources: Path, index: str | Path, engine: str | None) -> float:
    start = time.perf_counter()
    subprocess.run(index_command(sources, index, engine), check=True, capture_output=True)
    return time.perf_counter() - start


def query_p95(folder: str | Path, queries: list[str] = QUERIES) -> float:
    """Latency of a searcher that has answered once (index open, parsers built):
    what a server or a long-lived program sees; the first query pays that setup."""
    from vis_export import search

    for query in queries:
        search(query, folder, limit=10)
    times = []
    for _ in range(5):
        for query in queries:
            start = time.perf_counter()
            search(query, folder, limit=10)
            times.append(time.perf_counter() - start)
    return statistics.quantiles(times, n=20)[18]


def run(blocks: int, engine: str) -> tuple[list[Result], str]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "sources").mkdir()
        texts = write_sessions(root / "sources", blocks)
        # Files changed within a clock tick of being stamped are read again
        # until they are older than that (``sources.stamp``): a rerun is of
        # files unchanged for longer, as when a job runs again later.
        time.sleep(RACY_NS / 1e9)
        raw = raw_tantivy(texts, root / "raw") if engine == "tantivy" else None
        full = our_job(root / "sources", root / "index", engine)
        rerun = our_job(root / "sources", root / "index", engine)
        p95 = query_p95(root / "index")
    label = f"{len(texts) // 1000}k blocks"
    results = []
    if raw is not None:
        results.append(Result(f"index {label} ({engine})", full, "raw tantivy adds", raw, "<= 3x"))
    results.append(Result(f"no-op rerun {label} ({engine})", rerun, "full index", full, "<= 0.02x"))
    line = (
        f"search ({engine}, {label}): throughput {len(texts) / full:,.0f} blocks/s"
        + (f" vs raw tantivy {len(texts) / raw:,.0f} blocks/s ({raw / full:.2f}x, goal >= 0.33x)" if raw else "")
        + f"; query p95 with snippets {p95 * 1000:.2f} ms (goal <= 2 ms)"
    )
    return results, line
