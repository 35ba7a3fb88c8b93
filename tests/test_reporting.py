"""One report loop (issue 23): what reading a source found becomes the same
lines, problems and warnings in source order, redacted alike, whichever job
or sink reads it (``reporting.report_reading``): convert to files, convert to
standard output, and index say the same about the same sources."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from corpus import session
from vis_export.formats.options import ExportOptions
from vis_export.jobs.conversion import convert, convert_to_stream
from vis_export.jobs.indexing import index_sources
from vis_export.reporting import Lines

SECRET = "sk-" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4"


def _sources(root: Path) -> Path:
    folder = root / "sources"
    folder.mkdir()
    (folder / "a_good.json").write_text(json.dumps({**session(500), "id": "good"}))
    (folder / "b_broken.json").write_text('{"messages": [')
    # A contract error whose location names a key holding a secret, refused unless lenient.
    document = {**session(500, seed=3), "id": "keyed"}
    document["messages"][0]["content"][0][SECRET] = "x"
    (folder / "c_keyed.json").write_text(json.dumps(document))
    bad = {"id": "m", "role": "User", "status": "completed", "created_at": 1, "content": []}
    (folder / "d_bad.json").write_text(json.dumps(bad))
    return folder


@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize("redact", [False, True])
def test_convert_and_index_report_the_same_lines(tmp_path: Path, lenient: bool, redact: bool) -> None:
    folder = _sources(tmp_path)
    said: dict[str, Lines] = {name: Lines() for name in ("files", "stream", "index")}
    convert([folder], "json", tmp_path / "out", lenient=lenient, redact=redact, report=said["files"])
    stream = io.TextIOWrapper(io.BytesIO())
    options = ExportOptions(redact=redact)
    convert_to_stream([folder], "json", stream, options, lenient=lenient, report=said["stream"])
    index_sources([folder], tmp_path / "index", lenient=lenient, redact=redact, report=said["index"])
    files = said["files"]
    assert files.problems and (files.warnings or not lenient)
    assert (SECRET in "".join(files.problems + files.warnings)) != redact
    for name in ("stream", "index"):
        assert (said[name].problems, said[name].warnings) == (files.problems, files.warnings), name
