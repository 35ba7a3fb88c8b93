"""Reading other agents' transcripts counted in instructions (callgrind), which the
shared machine's load does not disturb: one read of the generated 300 KB Claude Code
and Codex files, and of the same conversations as Vis JSON Lines (the anchor).

python -m benchmarks.instructions          # needs valgrind; about a minute a path
python -m benchmarks.instructions --phases # each foreign read's decoding, mapping and building

Each path runs in a fresh interpreter (``PYTHONHASHSEED=0``) under callgrind twice:
once reading the file once (the first read: imports, compiled expressions and
caches warmed), once reading it twice; the second read's instructions are the
difference. The same on every run, on the same code and interpreter.

``--phases`` counts one phase at a time, in one run: callgrind collects only
inside one call (``functools.reduce``, which no reader uses) that wraps the
phase's second run. The mapping is counted with the decoding before it (whose
value it reads), then the decoding taken off; the building phase builds the
messages a mapping made before it, and frees the model.
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


# One phase of reading a foreign file: the importer's messages kept unbuilt by the
# mapping, for the building phase to build.
_PHASE = """
import functools
import sys
from pathlib import Path
from vis_export.collector import paused
from vis_export.contract.duplicates import recording
from vis_export.sources import foreign
from vis_export.sources.imported import foreign_lines
from vis_export.sources.jsontext import parse_lines
from vis_export.sources.result import LoadResult
text = Path(sys.argv[1]).read_text()
result = foreign.Transcript.result
made = []

def decode():
    parse_lines(text)

def mapping():
    def unbuilt(transcript, *args):
        made.append((transcript, args))
        return LoadResult("b", None, ())

    foreign.Transcript.result = unbuilt
    try:
        foreign_lines(parse_lines(text), [], text, "b", "b", False)
    finally:
        foreign.Transcript.result = result

def mapping_alone():
    mapping()
    made.clear()  # its messages freed, as a read frees them once it has built the model

def build():
    for transcript, args in made:
        assert result(transcript, *args).session is not None
    made.clear()

phase = {"decoding": decode, "mapping": mapping_alone, "building": build}[sys.argv[2]]
with paused(), recording():
    for counted in (False, True):  # the first run warms imports and caches
        if phase is build:
            mapping()
        if counted:
            functools.reduce(lambda _, __: phase(), [0, 0])
        else:
            phase()
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
    return _totals(out)


def _totals(out: Path) -> int:
    for line in out.read_text().splitlines():
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError("no totals in callgrind's output")


def phases(folder: Path) -> None:
    for label, path in files(folder).items():
        if "anchor" not in label:
            counts = {}
            for phase in ("decoding", "mapping", "building"):
                out = folder / "callgrind.out"
                command = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce"]
                command += [f"--callgrind-out-file={out}", sys.executable, "-c", _PHASE, str(path), phase]
                subprocess.run(command, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True, capture_output=True)
                counts[phase] = _totals(out)
            counts["mapping"] -= counts["decoding"]
            print(f"{label:<20} " + ", ".join(f"{phase} {n / 1e6:.2f} M" for phase, n in counts.items()), flush=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if "--phases" in sys.argv:
            phases(folder)
            return
        counts = {}
        for label, path in files(folder).items():
            counts[label] = instructions(path, 2, folder) - instructions(path, 1, folder)
            print(f"{label:<20} {counts[label] / 1e6:8.2f} M instructions", flush=True)
        for name in ("Claude Code", "Codex"):
            print(f"{name:<20} {counts[name] / counts[f'{name} anchor']:8.2f}x")


if __name__ == "__main__":
    main()
