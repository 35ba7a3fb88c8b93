"""Golden files: each golden input and its output in every format.

``pytest --update-golden`` rewrites the expected files; any drift fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import GOLDEN, INPUT

from vis_export.formats import get_format
from vis_export.formats.options import ExportOptions
from vis_export.sources import read

EXPECTED = GOLDEN / "expected"
INPUTS = ["session.json", "messages.jsonl", "events.jsonl", "lonis.jsonl", "store"]
VARIANTS = {
    "": ExportOptions(),
    "all": ExportOptions(
        reasoning="all", timestamps=True, front_matter=True, tool_output_limit=40, attachments=Path("attachments")
    ),
    "none": ExportOptions(reasoning="none", no_tools=True),
    "anthropic": ExportOptions(provider_format="anthropic", attachments=Path("attachments")),
}


def sessions_of(name: str, store: Path) -> list:
    path = store if name == "store" else INPUT / name
    results = list(read(path))
    assert all(r.ok for r in results), [p for r in results for p in r.problems]
    return [r.session for r in results]


def check(path: Path, actual: str, update: bool) -> None:
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="")
    assert path.exists(), f"{path} is missing: run pytest --update-golden"
    expected = path.read_bytes().decode("utf-8")
    assert actual == expected, f"{path.name} drifted; review, then pytest --update-golden"


# JSON takes only the reasoning option: its "none" variant would repeat "all".
CASES = [
    (fmt, variant)
    for fmt in ("json", "text", "markdown", "html")
    for variant in ("", "all", "none")
    if not (fmt == "json" and variant == "none")
] + [("provider", ""), ("provider", "anthropic")]


@pytest.mark.parametrize("name", INPUTS)
@pytest.mark.parametrize(("fmt", "variant"), CASES)
def test_golden_output(fmt: str, variant: str, name: str, golden_store: Path, update_golden: bool) -> None:
    out = get_format(fmt)
    options = VARIANTS[variant]
    for session in sessions_of(name, golden_store):
        stem = name.split(".")[0]
        suffix = f".{variant}" if variant else ""
        expected = EXPECTED / fmt / f"{stem}.{session.id}{suffix}.{out.extension}"
        check(expected, out.render(session, options), update_golden)
        if out.pieces is not None:
            assert "".join(out.pieces(session, options)) == out.render(session, options)
