"""R2 against disguises: reasoning that is mis-cased, mislabelled or salvaged stays private.

Each case is a whole session through the real command line, in every format
and the search index, strict and ``--lenient`` alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from strategies import PRIVATE_CANARY

from vis_export.cli import main
from vis_export.formats import FORMATS

SECRET = f"{PRIVATE_CANARY} the plan nobody may read"

# (block, valid to the strict contract?)
DISGUISES: list[tuple[dict[str, Any], bool]] = [
    ({"type": "Reasoning", "text": SECRET}, True),
    ({"type": "REASONING", "text": SECRET, "visibility": "visible"}, True),
    ({"type": "thinking", "text": SECRET}, True),
    ({"type": "summary", "text": SECRET, "visibility": "private"}, True),
    ({"type": "reasoning", "text": SECRET, "visibility": "Private"}, False),
    ({"type": "reasoning", "text": SECRET, "visibility": "hidden"}, False),
    ({"type": "reasoning", "text": SECRET, "visibility": None}, False),
    ({"type": "reasoning", "text": SECRET, "visibility": "Visible"}, False),
    ({"type": "reasoning", "text": [SECRET]}, False),
    ({"type": "wrapper", "items": [{"inner": {"type": "reasoning", "text": SECRET}}]}, True),
    ({"type": 7, "text": SECRET}, False),
    ({"text": SECRET}, False),
]


def _session(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "s",
        "title": "t",
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "status": "completed",
                "created_at": 1,
                "content": [{"id": "p1", "type": "prose", "markdown": "question"}],
            },
            {
                "id": "m2",
                "role": "assistant",
                "status": "completed",
                "created_at": 2,
                "content": [{"id": "b1", **block}, {"id": "p2", "type": "prose", "markdown": "the answer"}],
            },
        ],
    }


def _leaks(path: Path) -> bool:
    data = path.read_bytes()
    if PRIVATE_CANARY.encode() in data:
        return True
    if path.suffix == ".pdf":
        from pypdf import PdfReader

        return any(PRIVATE_CANARY in (page.extract_text() or "") for page in PdfReader(path).pages)
    return False


@pytest.mark.parametrize("block,strict_valid", DISGUISES, ids=lambda v: json.dumps(v) if isinstance(v, dict) else "")
def test_no_format_shows_disguised_reasoning(tmp_path: Path, block: dict[str, Any], strict_valid: bool) -> None:
    source = tmp_path / "in" / "chat.json"
    source.parent.mkdir()
    source.write_text(json.dumps(_session(block)))
    runner = CliRunner()
    for lenient in [False, True] if strict_valid else [True]:
        flags = ["--lenient"] if lenient else []
        for name in FORMATS:
            for reasoning in ("none", "visible"):
                out = tmp_path / f"out-{name}-{reasoning}-{lenient}"
                result = runner.invoke(
                    main, ["convert", str(source), "--to", name, "--reasoning", reasoning, "-o", str(out), *flags]
                )
                assert result.exit_code == 0, result.output
                assert not _leaks(out), (name, reasoning, lenient)
                assert PRIVATE_CANARY not in result.output
        index = tmp_path / f"index-{lenient}"
        result = runner.invoke(main, ["index", str(source), "--index", str(index), "--reasoning", "visible", *flags])
        assert result.exit_code == 0, result.output
        assert not any(PRIVATE_CANARY.encode() in f.read_bytes() for f in index.rglob("*") if f.is_file())
        hits = runner.invoke(main, ["search", "plan", "--index", str(index), "--json"])
        assert PRIVATE_CANARY not in hits.output and json.loads(hits.stdout) == []
