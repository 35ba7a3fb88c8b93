"""Peak memory of a long PDF export, across every process it starts.

    python -m benchmarks.pdf_memory [MESSAGES] [ENGINE]   # default 10,000 short messages, weasyprint

The render runs in a child interpreter; its process tree (the parts' workers
included) is sampled every 0.2 s from /proc, and the largest sums of resident
and proportional set size are printed with the wall time. Too slow for the
test suite (about a minute on two cores), so it lives here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

RENDER = """
import json, sys
from vis_export.formats.options import ExportOptions
from vis_export.formats.pdf import render_pdf
from vis_export.sources.files import read_bytes
(loaded,) = read_bytes(sys.stdin.buffer.read(), "short", "short")
render_pdf(loaded.session, ExportOptions(pdf_engine=sys.argv[1]))
"""


def short_messages(count: int) -> bytes:
    messages = [
        {
            "id": f"m{i}",
            "role": "user" if i % 2 == 0 else "assistant",
            "status": "completed",
            "created_at": 1740000000000 + i * 1000,
            "content": [{"id": f"b{i}", "type": "prose", "markdown": f"Message {i}: the parser reads config files."}],
        }
        for i in range(count)
    ]
    return json.dumps({"id": "short", "title": "Short messages", "messages": messages}).encode()


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _memory_kb(pid: int) -> tuple[int, int]:
    """Resident and proportional set size (shared pages split among their sharers)."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]
    except OSError:
        return 0, 0
    fields = {line.split(":")[0]: int(line.split()[1]) for line in lines}
    return fields.get("Rss", 0), fields.get("Pss", 0)


def measure(count: int, engine: str = "weasyprint") -> dict[str, float]:
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", RENDER, engine], stdin=subprocess.PIPE)
    assert child.stdin is not None
    child.stdin.write(short_messages(count))
    child.stdin.close()
    rss = pss = largest = 0
    while child.poll() is None:
        sizes = [_memory_kb(pid) for pid in _tree(child.pid)]
        rss, pss = max(rss, sum(s[0] for s in sizes)), max(pss, sum(s[1] for s in sizes))
        largest = max([largest] + [s[0] for s in sizes])
        time.sleep(0.2)
    assert child.returncode == 0
    return {
        "messages": count,
        "seconds": round(time.perf_counter() - start, 1),
        "rss_mb": rss // 1024,
        "pss_mb": pss // 1024,
        "largest_process_mb": largest // 1024,
    }


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    print(json.dumps(measure(count, sys.argv[2] if len(sys.argv) > 2 else "weasyprint")))
