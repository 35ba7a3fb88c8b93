"""R3 on a real read-only file system: sources in a read-only directory are
read, and nothing is created or changed. Root ignores permission bits, so the
command runs without the capabilities that let it (setpriv)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GOLDEN, INPUT
from visstore import build_store_with_wal

ROWS = json.loads((GOLDEN / "store" / "rows.json").read_text())


def without_override(args: list[str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "vis_export", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: permission bits cannot be enforced")
        command = [setpriv, "--bounding-set=-dac_override,-dac_read_search", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def read_only_sources(tmp_path: Path):
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(INPUT / "session.json", folder)
    shutil.copy(INPUT / "events.jsonl", folder)
    recent = {
        "session_turn_soul": [
            {
                "id": "turn_9",
                "session_state_id": "state_second",
                "position": 2,
                "user_request": "wal only",
                "created_at": 1740000009000,
            }
        ]
    }
    build_store_with_wal(folder / "vis.db", ROWS, recent)
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def test_read_only_directory_with_a_wal_store(read_only_sources: Path, tmp_path: Path) -> None:
    before = tree(read_only_sources)
    out = tmp_path / "out"
    result = without_override(["convert", str(read_only_sources), "--to", "json", "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "golden_events.json",
        "golden_session.json",
        "soul_main.json",
        "soul_second.json",
    ]
    second = json.loads((out / "soul_second.json").read_text())
    assert second["messages"][-1]["content"][0]["markdown"] == "wal only"
    assert tree(read_only_sources) == before
    assert sorted(os.listdir(read_only_sources)) == ["events.jsonl", "session.json", "vis.db", "vis.db-wal"]


def test_unreadable_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "secret.json"
    shutil.copy(INPUT / "session.json", path)
    path.chmod(0)
    result = without_override(["validate", str(path)])
    assert result.returncode == 1
    assert f"{path}: cannot read: Permission denied" in result.stderr.splitlines()
    assert "Traceback" not in result.stderr
