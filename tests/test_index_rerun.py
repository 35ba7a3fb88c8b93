"""A rerun over unchanged files costs a walk of the sources, not a walk per file.

The job plans once: the walk that finds the files gives their folders and
stamps, and the placement check (R3: the index never where sessions are read
from) walks each folder once, not once for every file found in it. Before,
2,000 files cost 4,002 walks, and a no-op rerun over 3,000 unchanged files
took 12.7 s."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import INPUT

from vis_export import sources
from vis_export.cli import main
from vis_export.jobs.indexing import index_sources
from vis_export.searchindex.directory import MANIFEST, PlacementRefused, check_placement


def _sessions(folder: Path, count: int, subfolders: int) -> None:
    base = json.loads((INPUT / "session.json").read_text(encoding="utf-8"))
    for n in range(count):
        sub = folder / f"part{n % subfolders}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"s{n}.json").write_text(json.dumps({**base, "id": f"s{n}"}), encoding="utf-8")


@pytest.mark.parametrize("subfolders", [1, 4])
def test_a_rerun_walks_each_folder_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subfolders: int
) -> None:
    source = tmp_path / "src"
    _sessions(source, 40, subfolders)
    index = tmp_path / "idx"
    assert CliRunner().invoke(main, ["index", str(source), "--index", str(index)]).exit_code == 0
    walks: list[Path] = []
    walk = sources._walk

    def counted(root: Path) -> object:
        walks.append(root)
        return walk(root)

    monkeypatch.setattr(sources, "_walk", counted)
    result = CliRunner().invoke(main, ["index", str(source), "--index", str(index)])
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (0, "0 added, 0 updated, 40 unchanged")
    # The command's check, the job's walk for files, and the job's check: one
    # walk of the source, and one of each folder it holds, never one per file.
    assert len(walks) <= 3 + subfolders, walks


def test_a_folder_walked_already_is_still_refused_as_the_index_s_place(tmp_path: Path) -> None:
    """Skipping the walk of a folder walked already keeps every refusal: the
    first source whose walk reaches the index names it, as before."""
    source = tmp_path / "src"
    _sessions(source, 3, 1)
    inside = source / "part0" / "idx"
    with pytest.raises(PlacementRefused, match=f"would be inside {source}, a folder sessions are read"):
        check_placement(inside, [str(source), str(source / "part0"), str(source / "part0" / "s0.json")])
    with pytest.raises(PlacementRefused, match="would hold the source"):
        check_placement(tmp_path, [str(source / "part0"), str(source / "part0" / "s1.json")])


def test_files_listed_per_folder_are_checked_as_the_index_s_sources(tmp_path: Path) -> None:
    """A job hands the check each file and its folder; the index may not hold either."""
    source = tmp_path / "src"
    _sessions(source, 5, 1)
    index_sources([str(source)], tmp_path / "idx")  # beside the folder: fine
    with pytest.raises(PlacementRefused, match="would hold the source"):
        index_sources([str(source / "part0" / "s0.json")], source)


def test_a_rerun_that_changes_nothing_leaves_the_manifest_as_it_was(tmp_path: Path) -> None:
    """Writing the same manifest again was most of a no-op rerun over thousands of files."""
    source = tmp_path / "src"
    _sessions(source, 3, 1)
    for file in (source / "part0").iterdir():  # older than a clock tick: a rerun trusts their stamps
        os.utime(file, ns=(time.time_ns() - 10**10, time.time_ns() - 10**10))
    index = tmp_path / "idx"
    index_sources([str(source)], index)
    manifest = index / MANIFEST
    before = manifest.stat()
    assert str(index_sources([str(source)], index)) == "0 added, 0 updated, 3 unchanged"
    after = manifest.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # written atomically: a new inode
    (source / "part0" / "s0.json").unlink()
    assert str(index_sources([str(source)], index, prune=True)) == "0 added, 0 updated, 2 unchanged, 1 removed"
    assert "s0" not in json.loads(manifest.read_text(encoding="utf-8"))["sessions"]
