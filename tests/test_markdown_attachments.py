"""Markdown links to attachment files work from where the Markdown is written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from click.testing import CliRunner

from vis_export.cli import main

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def _session(prose: str) -> dict:
    return {
        "id": "s",
        "title": "t",
        "messages": [
            {
                "id": "m",
                "role": "user",
                "status": "completed",
                "created_at": 1,
                "content": [
                    {"id": "p", "type": "prose", "markdown": prose},
                    {
                        "id": "a",
                        "type": "attachment",
                        "attachment_id": "att 01",
                        "name": "shot.png",
                        "media_type": "image/png",
                    },
                    {
                        "id": "b",
                        "type": "attachment",
                        "attachment_id": "att_02",
                        "name": "log.txt",
                        "media_type": "text/plain",
                    },
                ],
            }
        ],
    }


def _export(tmp_path: Path, prose: str, output: str) -> str:
    (tmp_path / "files").mkdir(exist_ok=True)
    (tmp_path / "files" / "att 01").write_bytes(PNG)  # att_02's bytes are missing
    source = tmp_path / "s.json"
    source.write_text(json.dumps(_session(prose)))
    result = CliRunner().invoke(
        main,
        ["convert", str(source), "--to", "md", "--attachments", str(tmp_path / "files"), "-o", str(tmp_path / output)],
    )
    assert result.exit_code == 0, result.output
    return (tmp_path / output).read_text()


def _targets(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)]+)\)", markdown)


def test_links_are_relative_to_the_output_file(tmp_path: Path) -> None:
    written = _export(tmp_path, "hello", "out/deeper/s.md")
    (target,) = _targets(written)
    assert (tmp_path / "out" / "deeper" / unquote(target)).resolve() == (tmp_path / "files" / "att 01").resolve()


def test_missing_bytes_are_named_not_linked(tmp_path: Path) -> None:
    written = _export(tmp_path, "hello", "s.md")
    assert "*Attachment:* log.txt (text/plain)" in written and "att_02" not in written


def test_attachment_references_in_prose_point_at_the_file(tmp_path: Path) -> None:
    written = _export(tmp_path, "See ![shot](attachment:shot.png) and ![same](attachment:att%2001).", "out/s.md")
    assert "attachment:" not in written
    for target in _targets(written):
        assert (tmp_path / "out" / unquote(target)).resolve() == (tmp_path / "files" / "att 01").resolve()


def test_a_reference_in_code_stays_as_written(tmp_path: Path) -> None:
    prose = "See ![shot](attachment:shot.png), written `![shot](attachment:shot.png)`."
    assert prose in _export(tmp_path, prose, "s.md")
