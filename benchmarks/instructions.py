"""Reading other agents' transcripts counted in instructions (callgrind), which the
shared machine's load does not disturb: one read of the generated 300 KB Claude Code
and Codex files, and of the same conversations as Vis JSON Lines (the anchor).

python -m benchmarks.instructions        # needs valgrind; about a minute a path

Each path runs in a fresh interpreter (``PYTHONHASHSEED=0``) under callgrind twice:
once reading the file once (the first read: imports, compiled expressions and
caches warmed), once reading it twice; the second read's instructions are the
difference. The same on every run, on the same code and interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from corpus import claude_code_bytes, codex_bytes

SIZE = 300_000
_READ = """
import sys
from pathlib import Path
from vis_export.sources.files import read_bytes
data = Path(sys.argv[1]).read_bytes()
for _ in range(int(sys.argv[2])):
    (loaded,) = read_bytes(data, "b.jsonl", "b")
    assert loaded.session is not None, loaded.problems
"""


def files(folder: Path) -> dict[str, Path]:
    """The four files read: each foreign one and its anchor."""
    from vis_export.sources.files import read_bytes

    out = {}
    for name, data in (("Claude Code", claude_code_bytes(SIZE)), ("Codex", codex_bytes(SIZE))):
        (loaded,) = read_bytes(data, "b.jsonl", "b")
        assert loaded.session is not None
        vis = "".join(json.dumps(m.to_json()) + "\n" for m in loaded.session.messages).encode()
        for label, raw in ((name, data), (f"{name} anchor", vis)):
            path = folder / (label.replace(" ", "_") + ".jsonl")
            path.write_bytes(raw)
            out[label] = path
    return out


def instructions(path: Path, reads: int, folder: Path) -> int:
    out = folder / "callgrind.out"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", _READ]
    subprocess.run([*command, str(path), str(reads)], env=env, check=True, capture_output=True)
    for line in out.read_text().splitlines():
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError("no totals in callgrind's output")


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        counts = {}
        for label, path in files(folder).items():
            counts[label] = instructions(path, 2, folder) - instructions(path, 1, folder)
            print(f"{label:<20} {counts[label] / 1e6:8.2f} M instructions", flush=True)
        for name in ("Claude Code", "Codex"):
            print(f"{name:<20} {counts[name] / counts[f'{name} anchor']:8.2f}x")


if __name__ == "__main__":
    main()
