"""Golden files: each golden input and its canonical JSON output.

``pytest --update-golden`` rewrites the expected files; any drift fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import GOLDEN
from vis_export.formats import get_format
from vis_export.sources import read

EXPECTED = GOLDEN / "expected"
INPUTS = ["session.json", "messages.jsonl", "events.jsonl", "store"]


def sessions_of(name: str, store: Path) -> list:
    path = store if name == "store" else GOLDEN / name
    results = list(read(path))
    assert all(r.ok for r in results), [p for r in results for p in r.problems]
    return [r.session for r in results]


def check(path: Path, actual: str, update: bool) -> None:
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run pytest --update-golden"
    assert actual == path.read_text(encoding="utf-8"), f"{path.name} drifted; review, then pytest --update-golden"


@pytest.mark.parametrize("name", INPUTS)
@pytest.mark.parametrize("fmt", ["json"])
def test_golden_output(name: str, fmt: str, golden_store: Path, update_golden: bool) -> None:
    out = get_format(fmt)
    for session in sessions_of(name, golden_store):
        stem = name.split(".")[0]
        check(EXPECTED / fmt / f"{stem}.{session.id}.{out.extension}", out.render(session), update_golden)
