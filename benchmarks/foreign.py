"""Reading other agents' transcripts beside reading the same conversation as Vis
JSON Lines (goal: at most 1.5x).

A coding agent's session is mostly tool calls: the generated Claude Code file
and Codex rollout alternate a prompt, thinking or reasoning, a few tool calls
with their results (one entry each, as the tools write them) and an answer.
The anchor is the imported session written as Vis JSON Lines (one message a
line) and read back: the same conversation, in the toolkit's own format.

python -m benchmarks.foreign          # the figures at 1 MB and 16 MB (CPU time, best of 15 and 5)
python -m benchmarks.foreign --phases # where the 1 MB reads' time goes (CPU time, medians of 31)
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from functools import partial

from benchmarks.harness import Result, best_time, cpu_medians, table
from corpus import claude_code_bytes, codex_bytes


def run(sizes: dict[str, int]) -> list[Result]:
    from vis_export.sources.files import read_bytes

    results = []
    for label, size in sizes.items():
        for name, data in (("Claude Code", claude_code_bytes(size)), ("Codex", codex_bytes(size))):
            (loaded,) = read_bytes(data, "bench.jsonl", "bench")
            assert loaded.session is not None, loaded.problems
            vis = "".join(json.dumps(m.to_json()) + "\n" for m in loaded.session.messages).encode()
            repeat = 5 if size > 2_000_000 else 15
            ours = best_time(partial(read_bytes, data, "bench.jsonl", "bench"), repeat, time.process_time)
            anchor = best_time(partial(read_bytes, vis, "vis.jsonl", "vis"), repeat, time.process_time)
            results.append(Result(f"read {name} {label}", ours, "same as Vis JSONL", anchor, "<= 1.5x"))
    return results


def phases(size: int, repeat: int = 31) -> str:
    """Where each read's CPU time goes (medians, every path in turn in one run): decoding
    its lines (``parse_lines``), the reader (an importer's mapping, checking and
    building; the anchor's checking and building), and the rest (the quick reading
    of the whole file, which JSON Lines fails, and finding what the file is)."""
    from vis_export.collector import paused
    from vis_export.contract.duplicates import recording
    from vis_export.sources.files import read_bytes
    from vis_export.sources.imported import foreign_lines
    from vis_export.sources.jsontext import parse_lines
    from vis_export.sources.messages import message_lines

    def decode(text: str) -> None:
        with paused(), recording():  # as ``read_bytes`` reads
            parse_lines(text)

    def importer(text: str) -> None:
        with paused(), recording():
            results = foreign_lines(parse_lines(text), [], text, "b", "b", False)
        assert results is not None and results[0].session is not None

    def anchor(text: str) -> None:
        with paused(), recording():
            assert message_lines(parse_lines(text), "v", "v", owned=True).session is not None

    out = [f"{'path':<24} {'total':>8} {'decode':>8} {'reader':>8} {'rest':>8}  (ms CPU, medians of {repeat})"]
    for name, data in (("Claude Code", claude_code_bytes(size)), ("Codex", codex_bytes(size))):
        (loaded,) = read_bytes(data, "bench.jsonl", "bench")
        assert loaded.session is not None
        vis = "".join(json.dumps(m.to_json()) + "\n" for m in loaded.session.messages).encode()
        paths: list[Callable[[], object]] = []
        for raw, reader in ((data, importer), (vis, anchor)):
            text = raw.decode()
            paths += [partial(read_bytes, raw, "b.jsonl", "b"), partial(decode, text), partial(reader, text)]
        times = cpu_medians(paths, repeat)
        for label, (total, decoding, read) in ((name, times[:3]), (f"{name} anchor", times[3:])):
            cells = (total, decoding, read - decoding, total - read)
            out.append(f"{label:<24} " + " ".join(f"{t * 1000:8.2f}" for t in cells))
    return "\n".join(out)


if __name__ == "__main__":
    if "--phases" in sys.argv:
        print(phases(1_000_000))
        sys.exit()
    sizes = {"1 MB": 1_000_000} if "--quick" in sys.argv else {"1 MB": 1_000_000, "16 MB": 16_000_000}
    print(table(run(sizes)))
