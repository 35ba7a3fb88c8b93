"""A rerun over unchanged files costs a walk of the sources, not a walk per file.

The job plans once: the walk that finds the files gives their folders and
stamps, and the placement check (R3: the index never where sessions are read
from) walks each folder once, not once for every file found in it. Before,
2,000 files cost 4,002 walks, and a no-op rerun over 3,000 unchanged files
took 12.7 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import INPUT

from vis_export import sources
from vis_export.cli import main
from vis_export.jobs.indexing import index_sources
from vis_export.searchindex.directory import MANIFEST, PlacementRefused, check_placement
from vis_export.sources.stamp import RACY_NS


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
    # One walk of the source gives the files, their stamps and the folders the
    # placement check needs: the check walks nothing again.
    assert walks == [source]


_OPENED: list[str] | None = None  # the files opened while a test listens (an audit hook cannot be removed)


def _listen(event: str, args: tuple[object, ...]) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_listen)


def test_a_no_op_rerun_opens_no_session_file(tmp_path: Path) -> None:
    """Stamps compared with the manifest decide: an unchanged file is never
    opened, and the engine is not asked for its sessions."""
    global _OPENED
    source = tmp_path / "src"
    _sessions(source, 12, 3)
    index = tmp_path / "idx"
    past = time.time_ns() - 2 * RACY_NS  # files changed within a clock tick of their stamp are read again
    for file in source.rglob("*.json"):
        os.utime(file, ns=(past, past))
    assert CliRunner().invoke(main, ["index", str(source), "--index", str(index)]).exit_code == 0
    _OPENED = []
    try:
        result = CliRunner().invoke(main, ["index", str(source), "--index", str(index)])
        opened = _OPENED
    finally:
        _OPENED = None
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (0, "0 added, 0 updated, 12 unchanged")
    assert [name for name in opened if name.startswith(str(source))] == []


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


def test_a_source_folder_linked_into_the_index_is_refused_without_a_second_walk(tmp_path: Path) -> None:
    """The folders the job's one walk went through are checked too: a link in
    a source folder to a folder inside the index directory is refused."""
    source, index = tmp_path / "src", tmp_path / "idx"
    _sessions(index / "kept", 2, 1)
    source.mkdir()
    (source / "link").symlink_to(index / "kept")
    with pytest.raises(PlacementRefused, match="would hold the source"):
        index_sources([str(source)], index)


def _unchanged_index(tmp_path: Path) -> tuple[Path, Path]:
    """A source folder, indexed, whose files are older than a clock tick."""
    source, index = tmp_path / "src", tmp_path / "idx"
    _sessions(source, 6, 2)
    past = time.time_ns() - 2 * RACY_NS
    for file in source.rglob("*.json"):
        os.utime(file, ns=(past, past))
    index_sources([str(source)], index)
    return source, index


def test_a_no_op_rerun_leaves_the_engine_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to write, no writer: the engine is opened to write when a file changed."""
    from vis_export.searchindex import target
    from vis_export.searchindex.directory import open_index

    source, index = _unchanged_index(tmp_path)
    opened: list[Path] = []

    def counted(directory: Path, *args: object, **named: object) -> object:
        if named["writable"]:
            opened.append(directory)
        return open_index(directory, *args, **named)  # type: ignore[arg-type]

    monkeypatch.setattr(target, "open_index", counted)
    assert str(index_sources([str(source)], index)) == "0 added, 0 updated, 6 unchanged"
    assert opened == []
    changed = source / "part0" / "s0.json"
    changed.write_text(json.dumps({**json.loads(changed.read_text()), "title": "changed"}))
    assert str(index_sources([str(source)], index)) == "0 added, 1 updated, 5 unchanged"
    assert opened == [index]


@pytest.mark.parametrize("engine", [[], ["--engine", "tantivy"]])
def test_a_no_op_rerun_imports_no_reader_and_no_renderer(tmp_path: Path, engine: list[str]) -> None:
    """The command in a process of its own, as users run it: a no-op rerun
    pays for none of the readers, the formats (their registry too) nor scratch files, nor for tantivy
    (its files are checked without it: a damaged index is refused, as before), nor for the model,
    the policy, the contract or the index's documents (a fifth of its instructions, with their
    dataclasses made and expressions compiled): it compares stamps with the manifest. A built-in
    engine named (as the benchmark names it) looks up no installed package's entry points
    (``importlib.metadata``: 66 M instructions of the 455 M such a rerun took)."""
    heavy = [
        "tantivy",
        "whoosh",
        "msgspec",
        "jiter",
        "vis_export.formats",
        "tempfile",
        "importlib.resources",
        "hashlib",
        "vis_export.sources.files",
        "jinja2",
        "mistune",
        "pygments",
        "markdown_it",
        "jsonschema",
        "rich",
        "vis_export.model",
        "vis_export.policy",
        "vis_export.contract",
        "vis_export.problems",
        "vis_export.running",
        "vis_export.searchindex.documents",
        "vis_export.sources.result",
        "importlib.metadata",
    ]
    last, out = _rerun_in_a_process(tmp_path, f"print(sorted(set({heavy!r}) & set(sys.modules)))", engine)
    assert (last, out) == ("0 added, 0 updated, 6 unchanged", "[]\n")


def _rerun_in_a_process(tmp_path: Path, then: str, options: Sequence[str] = ()) -> tuple[str, str]:
    """A no-op rerun's last line, and what ``then`` prints after it in the same process."""
    source, index = _unchanged_index(tmp_path)
    script = (
        "import sys\nfrom vis_export.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        + then
    )
    command = [sys.executable, "-c", script, "index", str(source), "--index", str(index), *options]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return result.stderr.splitlines()[-1], result.stdout


def test_a_no_op_rerun_makes_only_the_dataclasses_it_uses(tmp_path: Path) -> None:
    """A dataclass is made by compiling its methods, near a millisecond each:
    what a no-op rerun imports holds only those it uses (the walk's plan, the
    runner of the work, the placement check's input and the command's report
    are named tuples or plain classes, and a reading's result is not made; a
    search's hit and a database's part for Dask workers are made in modules of
    their own, when first asked for)."""
    then = (
        "import dataclasses\n"
        "print(sorted(f'{m}.{k}' for m, module in list(sys.modules.items()) if m.startswith('vis_export')"
        " for k, v in vars(module).items() if dataclasses.is_dataclass(v) and v.__module__ == m))"
    )
    last, out = _rerun_in_a_process(tmp_path, then)
    made = [
        "vis_export.jobs.index_job.Batch",
        "vis_export.jobs.index_job.IndexCounts",
        "vis_export.jobs.index_job.IndexSettings",
        "vis_export.reporting.Lines",
    ]
    assert (last, out) == ("0 added, 0 updated, 6 unchanged", f"{made}\n")


def test_a_no_op_rerun_stats_each_source_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One ``lstat`` says that a file found is a file, gives its stamp and says
    it is no link (so its real path is its folder's and its name), and its
    folder's listing whether a ``-wal`` is beside it: a no-op rerun made four
    of each file and one of a ``-wal`` that was not there, then two."""
    source, index = _unchanged_index(tmp_path)
    stats: list[str] = []

    def counted(stat: Callable[..., os.stat_result]) -> Callable[..., os.stat_result]:
        def call(path: str | os.PathLike[str], *args: object, **named: object) -> os.stat_result:
            stats.append(os.fspath(path))
            return stat(path, *args, **named)

        return call

    for name in ("stat", "lstat"):  # a file that is no link: its lstat is its stat
        monkeypatch.setattr(os, name, counted(getattr(os, name)))
    assert str(index_sources([str(source)], index)) == "0 added, 0 updated, 6 unchanged"
    files = sorted(str(file) for file in source.rglob("*.json"))
    found = [path for path in stats if path.endswith((".json", "-wal")) and not path.endswith(MANIFEST)]
    # Once: its stamp (an lstat, which is its stat when it is no link, and says
    # where it is). The manifests looked for are each folder's, once: the walk
    # skips an index.
    assert sorted(found) == sorted(files)


def test_a_rerun_under_another_reasoning_level_is_not_unchanged(tmp_path: Path) -> None:
    """The file stamps hold the policy: indexed with visible reasoning, then
    rerun with none, the reasoning's words leave the index (the rerun skipped
    every file unread, said "1 unchanged" and left them searchable)."""
    source = tmp_path / "src"
    source.mkdir()
    document = json.loads((INPUT / "session.json").read_text(encoding="utf-8"))
    message = {"id": "mz", "role": "assistant", "status": "completed", "created_at": 1704067200000}
    message["content"] = [{"id": "bz", "type": "reasoning", "visibility": "visible", "text": "zebraword thought"}]
    document["messages"].append(message)
    file = source / "s.json"
    file.write_text(json.dumps(document), encoding="utf-8")
    past = time.time_ns() - 2 * RACY_NS
    os.utime(file, ns=(past, past))
    index = tmp_path / "idx"
    for level, last in [("visible", "1 added"), ("none", "0 added, 1 updated"), ("none", "0 added, 0 updated, 1")]:
        result = CliRunner().invoke(main, ["index", str(source), "--index", str(index), "--reasoning", level])
        assert result.exit_code == 0 and result.stderr.splitlines()[-1].startswith(last), result.stderr
    found = CliRunner().invoke(main, ["search", "zebraword", "--index", str(index)])
    assert "zebraword" not in found.stdout


def test_sessions_named_by_files_not_utf8_are_indexed_apart(tmp_path: Path) -> None:
    """A session with no id takes its file's name; a name of bytes that are not
    UTF-8 gave an id holding a lone surrogate, and the whole job failed
    ('the search engine failed ... Value unsupported'), on every rerun."""
    source = tmp_path / "src"
    source.mkdir()
    document = json.loads((INPUT / "session.json").read_text(encoding="utf-8"))
    del document["id"]
    for name in (b"nameless-\xfe.json", b"nameless-\xff.json", b"nameless-\xc3\xa9.json"):
        Path(os.fsdecode(os.fsencode(source) + b"/" + name)).write_text(json.dumps(document), encoding="utf-8")
    index = tmp_path / "idx"
    result = CliRunner().invoke(main, ["index", str(source), "--index", str(index)])
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (0, "3 added, 0 updated, 0 unchanged"), result.stderr
    ids = {session.id for file in sorted(source.iterdir()) for session in sources.load(file)}
    assert ids == {"nameless-\\xfe", "nameless-\\xff", "nameless-é"}


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _other_fields(path: Path) -> None:
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["schema"] = meta["schema"][:-1]
    path.write_text(json.dumps(meta), encoding="utf-8")


def _segment_twice(path: Path) -> None:
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["segments"] = meta["segments"] * 2
    path.write_text(json.dumps(meta), encoding="utf-8")


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


DAMAGES = {
    "meta.json cut in half": ("meta.json", _cut),
    "meta.json nested too deep": ("meta.json", lambda path: path.write_text("[" * 100_000)),
    "meta.json listing a segment twice": ("meta.json", _segment_twice),
    "a segment's terms cut in half": ("*.term", _cut),
    "a segment's store cut by its last byte": ("*.store", lambda path: path.write_bytes(path.read_bytes()[:-1])),
    "a directory in place of a segment's positions": ("*.pos", _directory),
    "meta.json without a field": ("meta.json", _other_fields),
    "meta.json removed": ("meta.json", Path.unlink),
    "a segment's terms removed": ("*.term", Path.unlink),
    "a segment's store emptied": ("*.store", lambda path: path.write_bytes(b"")),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_no_op_rerun_still_refuses_a_damaged_index(tmp_path: Path, damage: str) -> None:
    """Tantivy is not opened when nothing changed, yet the index is checked:
    one line saying it is damaged, as when it was opened to read."""
    source, index = _unchanged_index(tmp_path)
    pattern, harm = DAMAGES[damage]
    harm(next((index / "engine").glob(pattern)))
    result = CliRunner().invoke(main, ["index", str(source), "--index", str(index)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"vis-export: index {index} is damaged: "), result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_a_no_op_rerun_passes_an_index_with_deletes_and_merged_segments(tmp_path: Path) -> None:
    """Deletions (``.del`` files) and the segments many commits leave are a healthy index's: never refused."""
    source, index = _unchanged_index(tmp_path)
    past = time.time_ns() - 2 * RACY_NS
    for round in range(6):
        for file in sorted(source.rglob("*.json"))[: round + 1]:
            data = json.loads(file.read_text(encoding="utf-8"))
            file.write_text(json.dumps({**data, "title": f"round {round}"}), encoding="utf-8")
            os.utime(file, ns=(past, past))
        index_sources([str(source)], index)
    assert list((index / "engine").glob("*.del")), "no deletes: the test tests nothing"
    result = CliRunner().invoke(main, ["index", str(source), "--index", str(index)])
    assert result.exit_code == 0, result.stderr
    assert "6 unchanged" in result.output


def test_the_files_check_knows_tantivy_s_schema(tmp_path: Path) -> None:
    """The fields the check expects are the ones tantivy writes: a whole index passes."""
    from vis_export.searchindex.engines.tantivy_files import FIELDS, check_files

    _, index = _unchanged_index(tmp_path)
    check_files(index / "engine")
    meta = json.loads((index / "engine" / "meta.json").read_text(encoding="utf-8"))
    assert tuple(field["name"] for field in meta["schema"]) == FIELDS


@pytest.mark.parametrize("twice", ["a link beside it", "the folder and the file in it"])
def test_a_file_read_under_two_names_keeps_its_sessions_on_a_pruning_rerun(tmp_path: Path, twice: str) -> None:
    """One file, two names in one job (a link in the folder, or the folder and
    the file named both): the manifest keys a file by its real path, and the
    second reading (every session a repeat, so none of its own) took the
    entry over; the next job found the file unchanged with no sessions, and
    ``--prune`` removed a session its file still holds."""
    source = tmp_path / "src"
    _sessions(source, 2, 1)
    folder = source / "part0"
    sources = [str(source)]
    if twice == "a link beside it":
        (folder / "link.json").symlink_to("s0.json")
    else:
        sources.append(str(folder / "s0.json"))
    past = time.time_ns() - 2 * RACY_NS  # older than a clock tick: a rerun trusts their stamps
    for file in folder.iterdir():
        os.utime(file, ns=(past, past), follow_symlinks=False)
    index = tmp_path / "idx"
    assert str(index_sources(sources, index)) == "2 added, 0 updated, 0 unchanged"
    assert str(index_sources(sources, index, prune=True)) == "0 added, 0 updated, 2 unchanged"
    assert set(json.loads((index / MANIFEST).read_text(encoding="utf-8"))["sessions"]) == {"s0", "s1"}
