"""Redaction: its cost beside a load of the same session, and its false positives on a real corpus.

python -m benchmarks.redact              # the 16 MB session, and the corpus
python -m benchmarks.redact --quick      # 1 MB, and a smaller corpus
python -m benchmarks.redact --show       # also each find on the corpus, with its context (for tuning)

The corpus is what this machine holds that reads like real sessions and holds
no secret: the golden sessions, the standard library's Python sources and
documentation-like text of the installed packages (READMEs, METADATA), each
file wrapped as a session (source as a code block, text as prose). A find there
is a false positive unless it is personal data the rules mean to take out (an
author's e-mail address in a header): the kinds are counted apart.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.harness import Result, table
from corpus import session_bytes

ROOT = Path(__file__).resolve().parent.parent
# Kinds that real text holds by right: personal data the rules (docs/redact.md) take out on purpose.
PERSONAL = ("email", "home-user")


def _planted(data: bytes, every: int) -> bytes:
    """The benchmark session with a secret in one block of ``every`` (how a session with secrets costs)."""
    document = json.loads(data)
    n = 0
    for message in document["messages"]:
        for block in message["content"]:
            n += 1
            if n % every == 0 and block["type"] == "prose":
                block["markdown"] += f" key sk-proj-Ab3dEfGh{n:08d}IjKlMnOpQrStUvWx mail dev{n}@example.com"
    return json.dumps(document).encode()


def speed(size: int, repeat: int = 9) -> list[Result]:
    """CPU time of ``--redact`` (the redacted view of a loaded session) beside a load of
    the same session, interleaved in the same run: the median of ``repeat`` ratios
    (CPU time, so other processes on a shared machine count less), with its range."""
    import gc
    import os
    import statistics
    import time

    from vis_export.policy import visible_session
    from vis_export.redaction import Redaction
    from vis_export.sources.files import read_bytes

    def cpu(fn: Any) -> float:
        gc.collect()
        start = time.process_time()
        fn()
        return time.process_time() - start

    results = []
    for label, data in (("no secret", session_bytes(size)), ("1 block in 50", _planted(session_bytes(size), 50))):
        (loaded,) = read_bytes(data, "bench", "bench")
        assert loaded.session is not None
        view = visible_session(loaded.session)
        pairs = [
            (
                cpu(lambda data=data: read_bytes(data, "bench", "bench")),
                cpu(lambda view=view: visible_session(view, "visible", Redaction())),
            )
            for _ in range(repeat)
        ]
        ratios = sorted(ours / load for load, ours in pairs)
        load, ours = statistics.median(load for load, _ in pairs), statistics.median(ours for _, ours in pairs)
        results.append(
            Result(
                f"--redact {len(data) / 1e6:.0f} MB ({label}; ratios {ratios[0]:.2f}-{ratios[-1]:.2f}, "
                f"median {statistics.median(ratios):.2f}, load average {os.getloadavg()[0]:.1f})",
                ours,
                "load+validate (CPU, medians)",
                load,
                "<= 0.5x",
            )
        )
    return results


def corpus(limit: int) -> list[tuple[str, str, str]]:
    """(name, block type, text) of real files: golden sessions' strings, stdlib sources, package texts."""
    rng = random.Random(7)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources = sorted(p for p in stdlib.rglob("*.py") if "test" not in p.parts and "site-packages" not in p.parts)
    site = Path(sysconfig.get_paths()["purelib"])
    texts = sorted(
        p for pattern in ("*.dist-info/METADATA", "**/README*", "**/*.md", "**/*.rst") for p in site.glob(pattern)
    )
    picked = rng.sample(sources, min(limit // 2, len(sources))) + rng.sample(texts, min(limit // 2, len(texts)))
    out = []
    for path in picked:
        try:
            text = path.read_text(encoding="utf-8")[:200_000]
        except (OSError, UnicodeDecodeError):
            continue
        out.append((str(path), "code" if path.suffix == ".py" else "prose", text))
    for path in sorted((ROOT / "golden" / "input").glob("*")):
        out.append((str(path), "code", path.read_text(encoding="utf-8")))
    return out


def _session(name: str, kind: str, text: str) -> Any:
    from vis_export.model import session_from_json

    block = {
        "id": "b",
        "type": kind,
        **({"language": "python", "text": text} if kind == "code" else {"markdown": text}),
    }
    message = {"id": "m", "role": "assistant", "status": "completed", "created_at": 1, "content": [block]}
    return session_from_json({"id": name, "messages": [message]}, name)


def false_positives(limit: int, show: bool) -> list[str]:
    from vis_export.redaction import Redaction
    from vis_export.redaction.detect import Detector
    from vis_export.redaction.redact import Redactor

    files = corpus(limit)
    sessions_with: Counter[str] = Counter()
    finds: Counter[str] = Counter()
    detector = Detector(Redaction())
    for name, kind, text in files:
        redactor = Redactor(Redaction())
        redactor.session(_session(name, kind, text))
        kinds = {finding.kind for finding in redactor.findings}
        finds.update(finding.kind for finding in redactor.findings)
        if kinds - set(PERSONAL):
            sessions_with["secret kinds"] += 1
        if kinds:
            sessions_with["any kind"] += 1
        if show and kinds:
            for start, end, found in detector.spans(text):
                print(f"{name}: {found}: {text[max(0, start - 40) : end + 20]!r}", file=sys.stderr)
    total = len(files)
    return [
        f"redaction false positives: {total} real files as sessions; with a marker of a secret kind: "
        f"{sessions_with['secret kinds']} ({100 * sessions_with['secret kinds'] / total:.1f}%); with any marker "
        f"(personal data included): {sessions_with['any kind']}; finds by kind: {dict(sorted(finds.items()))}"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.redact", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1 MB and 100 files")
    parser.add_argument("--show", action="store_true", help="print each find on the corpus with its context")
    args = parser.parse_args()
    print(table(speed(1_000_000 if args.quick else 16_000_000)))
    print("\n".join(false_positives(100 if args.quick else 600, args.show)))


if __name__ == "__main__":
    main()
