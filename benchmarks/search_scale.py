"""Query latency at scale: 1M blocks in 1,000 sessions of Zipf-distributed
words, through the API (``search``), warm (each query answered once first), on
tantivy and on PostgreSQL.

Queries a reader types, of the most common words: two ANDed (they match
nearly every block: all that can be ranked must be weighed), the two as a
quoted phrase (one block in seven or so holds them side by side: its words
are at its edges, so no engine can narrow it by position), and four as a
phrase (its two inner words side by side, which the engines narrow by).
The anchor is a rare word on the same index: what a query costs with little to
rank.

Building the index takes minutes (writing the session files, one
``vis-export index`` job per engine), so the files, the tantivy index and the
PostgreSQL cluster are kept in a folder (``--cache``, by default in the
temporary folder) and reused by the next run: a job on files unchanged since
is a no-op rerun. The server is started as the tests start theirs
(``tests/pgserver.py``, ``fsync`` off), on the kept cluster.

python -m benchmarks.search_scale [--blocks N] [--sessions N] [--engine tantivy|postgresql] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

from benchmarks.harness import Result, table
from benchmarks.search import index_command

BLOCKS = 1_000_000
SESSIONS = 1_000
VOCABULARY = 20_000
BLOCK_WORDS = (10, 60)  # words in a block, uniformly
BLOCKS_PER_MESSAGE = 10
REPEAT = 30
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def vocabulary(size: int = VOCABULARY) -> list[str]:
    """Distinct pronounceable words, most common first; none a stem of another
    (each is its own stem: syllables of a consonant and a vowel, a consonant
    after), so the query's words match exactly themselves."""
    words = []
    for n in range(size):
        syllables, rest = [], n
        while True:
            syllables.append(_SYLLABLES[rest % len(_SYLLABLES)])
            rest //= len(_SYLLABLES)
            if not rest:
                break
        words.append("".join(syllables) + "x")
    return words


def write_corpus(folder: Path, blocks: int, sessions: int) -> None:
    """``sessions`` session files of ``blocks`` blocks in all (prose, a message
    of ``BLOCKS_PER_MESSAGE`` blocks per turn), written once: a ``done`` marker
    says they are complete."""
    if (folder / "done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    words = vocabulary()
    weights = list(accumulate(1 / rank for rank in range(1, len(words) + 1)))
    rng = random.Random(26)
    per_session = blocks // sessions
    for n in range(sessions):
        messages = []
        for m in range(0, per_session, BLOCKS_PER_MESSAGE):
            content = [
                {
                    "id": f"b{m + b}",
                    "type": "prose",
                    "markdown": " ".join(rng.choices(words, cum_weights=weights, k=rng.randint(*BLOCK_WORDS))),
                }
                for b in range(min(BLOCKS_PER_MESSAGE, per_session - m))
            ]
            created = 1740000000000 + n * 10_000_000 + m * 1000
            messages.append(
                {
                    "id": f"m{m}",
                    "role": "user" if m // BLOCKS_PER_MESSAGE % 2 == 0 else "assistant",
                    "status": "completed",
                    "content": content,
                    "created_at": created,
                }
            )
        session = {"id": f"scale_{n}", "title": f"Scale {n}", "created_at": 1740000000000, "messages": messages}
        (folder / f"scale_{n}.json").write_text(json.dumps(session))
    (folder / "done").write_text("")


def queries() -> dict[str, str]:
    words = vocabulary()
    return {
        "two common words ANDed": f"{words[0]} {words[1]}",
        "a phrase of two common words": f'"{words[0]} {words[1]}"',
        "a phrase of four common words": f'"{" ".join(words[:4])}"',
        "a rare word": words[len(words) // 2],
    }


def p95(location: str | Path, query: str, repeat: int = REPEAT) -> tuple[float, float]:
    """Wall and CPU p95 of ``search(query)`` after a first answer (in seconds).
    CPU is this process's (tantivy's threads included) and, for a database,
    the server process's that serves the connection (its ``schedstat``, in
    nanoseconds): what a query costs, which a loaded machine's wall time hides."""
    from vis_export import search

    assert search(query, location, limit=10), f"{query!r} finds nothing in {location}"
    server = _server_cpu(location)
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu, served = time.perf_counter(), time.process_time(), server()
        search(query, location, limit=10)
        cpus.append(time.process_time() - cpu + server() - served)
        walls.append(time.perf_counter() - wall)
    return statistics.quantiles(walls, n=20)[18], statistics.quantiles(cpus, n=20)[18]


def _server_cpu(location: str | Path) -> Callable[[], float]:
    """CPU seconds of the server process behind a database's search connection (0 for a folder)."""
    from vis_export.searchindex import _DATABASES

    engine = _DATABASES.get(str(location))
    if engine is None:
        return lambda: 0.0
    stat = Path(f"/proc/{engine.connection.info.backend_pid}/schedstat")
    return lambda: int(stat.read_text().split()[0]) / 1e9


def _job(sources: Path, index: str | Path, engine: str | None) -> float:
    start = time.perf_counter()
    subprocess.run(index_command(sources, index, engine), check=True, capture_output=True)
    return time.perf_counter() - start


def measure(engine: str, location: str | Path, sources: Path, label: str) -> tuple[list[Result], str]:
    job = _job(sources, location, "tantivy" if engine == "tantivy" else None)
    found = {name: p95(location, query) for name, query in queries().items()}
    anchor = found.pop("a rare word")
    results = [
        Result(f"{name}, {label} ({engine}), CPU", cpu, "a rare word", anchor[1], "<= 20 ms")
        for name, (_, cpu) in found.items()
    ]
    line = f"search at scale ({engine}, {label}; job {job:.0f} s, 0 when unchanged): " + "; ".join(
        f"{name} p95 {wall * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU"
        for name, (wall, cpu) in {**found, "a rare word": anchor}.items()
    )
    return results, line


def run(
    blocks: int = BLOCKS,
    sessions: int = SESSIONS,
    engines: tuple[str, ...] = ("tantivy", "postgresql"),
    cache: Path | None = None,
) -> tuple[list[Result], list[str]]:
    from vis_export.searchindex.documents import SCHEMA_VERSION

    root = (cache or Path(tempfile.gettempdir()) / "vis-search-scale") / f"{blocks}-{sessions}"
    sources = root / "sources"
    write_corpus(sources, blocks, sessions)
    label = f"{blocks // 1000:,}k blocks" if blocks < 1_000_000 else f"{blocks / 1e6:g}M blocks"
    results, lines = [], [f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"]
    steps: dict[str, Callable[[], tuple[list[Result], str]]] = {
        "tantivy": lambda: measure("tantivy", root / f"tantivy-{SCHEMA_VERSION}", sources, label),
        "postgresql": lambda: _postgresql(root / "postgresql", sources, label),
    }
    for engine in engines:
        found, line = steps[engine]()
        results += found
        lines.append(line)
    lines.append(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return results, lines


def _postgresql(kept: Path, sources: Path, label: str) -> tuple[list[Result], str]:
    from tests.pgserver import running, unavailable

    reason = unavailable()
    if reason is not None:
        return [], f"search at scale (postgresql): skipped: {reason}"
    with running(kept) as server:
        if not server.sql("SELECT 1 FROM pg_database WHERE datname = 'scale'").strip():
            server.sql("CREATE DATABASE scale")
        return measure("postgresql", server.uri("scale"), sources, label)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=BLOCKS)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--engine", choices=("tantivy", "postgresql"), action="append")
    parser.add_argument("--cache", type=Path, help="where the corpus and indexes are kept between runs")
    args = parser.parse_args()
    results, lines = run(args.blocks, args.sessions, tuple(args.engine or ("tantivy", "postgresql")), args.cache)
    print(table(results))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
