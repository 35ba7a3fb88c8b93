"""Search conformance over both engines: same documents, same hits, same options;
code-aware matching, exact phrases, R2, incremental jobs, one writer, kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT, examples
from hypothesis import HealthCheck, given, settings, strategies as st
from sessions import message_of, session_of
from strategies import PRIVATE_CANARY, session_documents, small_blocks, small_code_blocks

from vis_export import load
from vis_export.jobs.indexing import index, index_sources as vis_export_index
from vis_export.model import Session
from vis_export.searchindex import IndexFailure, search
from vis_export.searchindex.conformance import CANARY, CODE_SESSION, check_engine
from vis_export.searchindex.directory import MANIFEST, writer_lock

ENGINES = ["tantivy", "whoosh"]
GOLDEN = list(load(INPUT))


CODE = {"messages": CODE_SESSION["messages"]}


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def code_index(tmp_path: Path, engine: str) -> Path:
    directory = tmp_path / "index"
    index([session_of({"id": "code", "title": "Code", **CODE})], directory, engine=engine, reasoning="visible")
    return directory


def ids(query: str, directory: Path, **filters: Any) -> set[str]:
    return {hit.block_id for hit in search(query, directory, limit=100, **filters)}


def test_conformance(tmp_path: Path, engine: str) -> None:
    check_engine(engine, tmp_path)


def test_private_reasoning_never_indexed(tmp_path: Path, engine: str) -> None:
    for reasoning in ("none", "visible"):
        directory = tmp_path / reasoning
        index([session_of({"id": "code", **CODE})], directory, engine=engine, reasoning=reasoning)
        assert search(CANARY, directory) == [] and search("secret", directory) == []
        everything = search("", directory, limit=1000)
        assert CANARY not in json.dumps([h.to_json() for h in everything])
        assert ("r1" in {h.block_id for h in everything}) == (reasoning == "visible")
    with pytest.raises(ValueError):
        index([], tmp_path / "all", engine=engine, reasoning="all")  # type: ignore[arg-type]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path


def test_engines_agree_on_the_golden_sessions(tmp_path: Path) -> None:
    queries = [
        "parse_config",
        "tests",
        "deploy",
        '"open(path) as f"',
        "run_tests",
        "unavailable",
        "Ünïcödé",
        "config",
        "stopped",
    ]
    results = {}
    for name in ENGINES:
        directory = tmp_path / name
        index(GOLDEN, directory, engine=name, reasoning="visible")
        results[name] = {
            q: sorted((h.session_id, h.block_id, h.snippet) for h in search(q, directory, limit=50)) for q in queries
        }
    assert results["tantivy"] == results["whoosh"]
    assert all(results["tantivy"][q] for q in queries)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(session_documents(st.one_of(small_code_blocks, small_blocks)), st.data())
def test_every_code_block_is_found_by_a_phrase_of_its_text(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any], data: st.DataObject
) -> None:
    from vis_export.searchindex.documents import indexed_view

    session = session_of(document)
    view = indexed_view(session, "visible")  # a code block the policy holds private is never indexed
    codes = [
        (m, b)
        for m, b in ((m, b) for m in view.messages for b in m.blocks)
        if b.type == "code" and b.text.strip() and '"' not in b.text
    ]
    for engine in ENGINES:
        directory = tmp_path_factory.mktemp(engine)
        index([session], directory, engine=engine, reasoning="visible")
        for message, block in codes:
            start = data.draw(st.integers(0, len(block.text) - 1))
            phrase = block.text[start : start + data.draw(st.integers(1, 30))]
            if not phrase.strip():
                continue
            hits = search(f'"{phrase}"', directory, limit=10_000)
            assert block.id in {h.block_id for h in hits if h.message_id == message.id}
            assert all(any(phrase in text for text in _texts(session, h.message_id, h.block_id)) for h in hits)
        assert PRIVATE_CANARY not in json.dumps([h.to_json() for h in search("", directory, limit=10_000)])


def _texts(session, message_id: str, block_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts of the blocks with these ids (generated ids need not be unique)."""
    from vis_export.searchindex.documents import text_of

    return [
        text_of(block) or ""
        for message in session.messages
        for block in message.blocks
        if message.id == message_id and block.id == block_id
    ]


def asked(session_id: str, markdown: str) -> Session:
    """A session ``session_id`` of one user message, its one prose block ``b``."""
    return session_of(
        {"id": session_id, "messages": [message_of({"id": "b", "type": "prose", "markdown": markdown}, role="user")]}
    )


def test_incremental_reruns_changes_and_prune(tmp_path: Path, engine: str) -> None:
    directory = tmp_path / "index"
    first = asked("a", "alpha")
    second = asked("b", "beta")
    assert str(index([first, second], directory, engine=engine)) == "2 added, 0 updated, 0 unchanged"
    assert str(index([first, second], directory, engine=engine)) == "0 added, 0 updated, 2 unchanged"
    changed = asked("a", "gamma")
    assert str(index([changed, second], directory, engine=engine)) == "0 added, 1 updated, 1 unchanged"
    assert ids("alpha", directory) == set() and ids("gamma", directory) == {"b"}
    assert str(index([second], directory, engine=engine)) == "0 added, 0 updated, 1 unchanged"
    assert ids("gamma", directory) == {"b"}  # without --prune, sessions stay
    assert str(index([second], directory, engine=engine, prune=True)) == "0 added, 0 updated, 1 unchanged, 1 removed"
    assert ids("gamma", directory) == set()
    assert sorted(json.loads((directory / MANIFEST).read_text())["sessions"]) == ["b"]


def test_engine_and_directory_mismatches_are_refused(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    index(GOLDEN, directory, engine="tantivy")
    with pytest.raises(IndexFailure, match="built with tantivy, not whoosh"):
        index(GOLDEN, directory, engine="whoosh")
    stranger = tmp_path / "photos"
    stranger.mkdir()
    (stranger / "cat.jpg").write_bytes(b"x")
    with pytest.raises(IndexFailure, match="not a vis-export index"):
        index(GOLDEN, stranger)
    with pytest.raises(IndexFailure, match="no index here"):
        search("x", tmp_path / "nothing")


def test_an_index_in_a_folder_it_cannot_enter_is_not_said_to_be_missing(tmp_path: Path) -> None:
    """A folder without search permission (its manifest cannot be looked at)
    holds an index all the same: the permission is reported, not "no index
    here (run vis-export index first)". As root, the search runs without the
    capabilities that pass over permissions (``setpriv``)."""
    import shutil

    directory = tmp_path / "index"
    index(GOLDEN, directory, engine="tantivy")
    os.chmod(directory, 0o600)
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    if drop and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot be withheld")
    script = "import sys; from vis_export.searchindex import search; search('x', sys.argv[1])"
    try:
        result = subprocess.run([*drop, sys.executable, "-c", script, str(directory)], capture_output=True, text=True)
    finally:
        os.chmod(directory, 0o700)
    assert result.returncode != 0 and "PermissionError" in result.stderr, result.stderr
    assert "no index here" not in result.stderr


def test_index_beside_a_named_file_but_never_inside_a_folder_that_is_read(tmp_path: Path) -> None:
    sources = tmp_path / "sessions"
    sources.mkdir()
    (sources / "s.json").write_text((INPUT / "session.json").read_text())

    def run(source: str, place: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "vis_export", "index", source, "--index", place],
            capture_output=True,
            text=True,
            cwd=sources,
        )

    result = run("s.json", ".")  # the index would hold the source
    assert result.returncode == 1 and "would hold the source s.json" in result.stderr, result.stderr
    for place in (str(sources), str(sources / "deep" / "index")):  # inside the folder being read
        result = run(str(sources), place)
        assert result.returncode == 1 and "a folder sessions are read from" in result.stderr, result.stderr
    assert sorted(p.name for p in sources.rglob("*")) == ["s.json"]
    assert run("s.json", "idx").stderr == "1 added, 0 updated, 0 unchanged\n"  # beside the file the user named
    assert run("s.json", "idx").stderr == "0 added, 0 updated, 1 unchanged\n"
    assert ids("parseConfig", sources / "idx") == {"a1b5"}
    result = run(str(sources), "idx")  # once the folder itself is read, its index is in the way
    assert result.returncode == 1 and "a folder sessions are read from" in result.stderr
    (sources / "idx" / "copy.json").write_text((sources / "s.json").read_text())
    result = run("idx/copy.json", "idx")
    assert result.returncode == 1 and "would hold the source idx/copy.json" in result.stderr


def test_an_index_beside_a_session_file_is_not_read_by_a_walk_of_its_folder(tmp_path: Path) -> None:
    """``index chat.json --index idx`` is allowed; a later walk of the folder
    skips the index (its manifest marks it) without a word, whatever JSON it holds."""
    (tmp_path / "chat.json").write_text((INPUT / "session.json").read_text())
    made = subprocess.run(
        [sys.executable, "-m", "vis_export", "index", "chat.json", "--index", "idx"], capture_output=True, cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    (tmp_path / "idx" / "stray.json").write_text("not a session")
    assert (tmp_path / "idx" / MANIFEST).is_file()
    result = subprocess.run(
        [sys.executable, "-m", "vis_export", "validate", "."], capture_output=True, text=True, cwd=tmp_path
    )
    assert (result.returncode, result.stderr) == (0, "1 file(s) valid, 1 session(s)\n")
    named = subprocess.run(
        [sys.executable, "-m", "vis_export", "validate", "idx"], capture_output=True, text=True, cwd=tmp_path
    )
    assert named.returncode == 1 and "stray.json" in named.stderr  # named, the folder itself is read


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    with writer_lock(directory, 0):
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "vis_export", "index", str(INPUT), "--index", str(directory), "--wait", "1"],
            capture_output=True,
            text=True,
        )
        assert time.monotonic() - started >= 1
    assert result.returncode == 1
    assert (
        result.stderr.strip() == f"vis-export: {directory}: another index job is writing to it (waited 1 s; see --wait)"
    )
    assert (
        subprocess.run(
            [sys.executable, "-m", "vis_export", "index", str(INPUT), "--index", str(directory)], capture_output=True
        ).returncode
        == 0
    )


KILLED_JOB = """
import sys, time
from vis_export import load
from vis_export.jobs.indexing import index
from vis_export.model import Session
from vis_export.searchindex.target import FolderTarget
FolderTarget.commit_every = 50
sessions = list(load(sys.argv[1]))
def slow(session):
    time.sleep(0.01)
index(sessions, sys.argv[2], engine=sys.argv[3], progress=slow)
"""


@pytest.mark.parametrize("delay", [0.6, 1.2])
@pytest.mark.slow
def test_a_job_killed_at_any_moment_leaves_a_usable_index(tmp_path: Path, engine: str, delay: float) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    base = json.loads((INPUT / "session.json").read_text())
    for n in range(120):
        (sources / f"s{n:03}.json").write_text(json.dumps({**base, "id": f"s{n:03}"}))
    directory = tmp_path / "index"
    job = subprocess.Popen([sys.executable, "-c", KILLED_JOB, str(sources), str(directory), engine])
    deadline = time.monotonic() + 60  # on a busy machine the job takes a while to start writing
    while not (directory / MANIFEST).exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(delay)
    job.send_signal(signal.SIGKILL)
    job.wait()
    search("config", directory)  # opens and searches whatever was committed
    rerun = subprocess.run(
        [sys.executable, "-m", "vis_export", "index", str(sources), "--index", str(directory), "--engine", engine],
        capture_output=True,
        text=True,
    )
    assert rerun.returncode == 0, rerun.stderr
    hits = search("parse_config", directory, limit=10_000, type="code")
    assert sorted(h.session_id for h in hits) == [f"s{n:03}" for n in range(120)]
    again = subprocess.run(
        [sys.executable, "-m", "vis_export", "index", str(sources), "--index", str(directory), "--engine", engine],
        capture_output=True,
        text=True,
    )
    assert again.stderr.strip() == "0 added, 0 updated, 120 unchanged"


def test_search_cli(code_index: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "vis_export", "search", "parseConfig", "--index", str(code_index), "--json"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0
    assert [h["block_id"] for h in json.loads(result.stdout)] == ["py"]
    empty = subprocess.run(
        [sys.executable, "-m", "vis_export", "search", "zzzz", "--index", str(code_index)],
        capture_output=True,
        text=True,
    )
    assert empty.returncode == 0 and empty.stdout == "" and empty.stderr.strip() == "no hits"
    dated = subprocess.run(
        [
            sys.executable,
            "-m",
            "vis_export",
            "search",
            "deploy",
            "--index",
            str(code_index),
            "--since",
            "2025-05-01",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert {h["block_id"] for h in json.loads(dated.stdout)} == {"p2", "r1"}


def test_the_package_api(tmp_path: Path) -> None:
    import vis_export

    counts = vis_export.index(vis_export.load(INPUT / "session.json"), tmp_path / "i")
    assert (counts.added, counts.updated, counts.unchanged) == (1, 0, 0)
    hits = vis_export.search("parseConfig", tmp_path / "i", type="code")
    assert [h.block_id for h in hits] == ["a1b5"]


def _aged(path: Path, seconds: float = 3600) -> None:
    """Its last change an hour ago: a file changed a moment ago is read again (see ``sources.stamp``)."""
    os.utime(path, ns=(path.stat().st_atime_ns, time.time_ns() - int(seconds * 1e9)))


def test_a_rerun_does_not_read_unchanged_files(tmp_path: Path) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    for name in ("a", "b"):
        (sources / f"{name}.json").write_text(
            json.dumps({**json.loads((INPUT / "session.json").read_text()), "id": name})
        )
        _aged(sources / f"{name}.json")
    directory = tmp_path / "index"
    command = [sys.executable, "-m", "vis_export", "index", str(sources), "--index", str(directory)]
    assert subprocess.run(command, capture_output=True, text=True).stderr.strip() == "2 added, 0 updated, 0 unchanged"
    (sources / "a.json").chmod(0)  # unreadable now: a rerun that read it would fail (root reads it anyway)
    assert subprocess.run(command, capture_output=True, text=True).stderr.strip() == "0 added, 0 updated, 2 unchanged"
    (sources / "a.json").chmod(0o644)
    time.sleep(0.01)
    document = json.loads((sources / "b.json").read_text())
    document["messages"][0]["content"][0]["markdown"] = "A brand new request about zebras."
    (sources / "b.json").write_text(json.dumps(document))
    assert subprocess.run(command, capture_output=True, text=True).stderr.strip() == "0 added, 1 updated, 1 unchanged"
    assert ids("zebras", directory) == {"u1b1"}
    (sources / "b.json").unlink()
    pruned = subprocess.run([*command, "--prune"], capture_output=True, text=True).stderr.strip()
    assert pruned == "0 added, 0 updated, 1 unchanged, 1 removed"
    assert ids("zebras", directory) == set()


def _same_size_and_time(path: Path, old: str, new: str) -> None:
    """``old`` replaced by ``new`` (as long) in the file, its time as it was:
    a rewrite within one tick of the file system's clock."""
    assert len(old) == len(new)
    before = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_file_rewritten_at_the_same_size_within_a_clock_tick_is_read_again(tmp_path: Path) -> None:
    """Size and time are all a rerun compares: a stamp taken just after a change
    is not trusted (the file may change again within the tick), so the next
    run reads the file. A file whose last change is old is not read again,
    even when a rewrite kept its size and set its time back."""
    sources = tmp_path / "sources"
    sources.mkdir()
    path = sources / "a.json"
    path.write_text(json.dumps({**json.loads((INPUT / "session.json").read_text()), "id": "a"}))
    directory = tmp_path / "index"
    assert str(vis_export_index([sources], directory)) == "1 added, 0 updated, 0 unchanged"
    _same_size_and_time(path, "Parse the config", "Parse the zebra!")
    assert str(vis_export_index([sources], directory)) == "0 added, 1 updated, 0 unchanged"
    assert ids("zebra", directory) == {"u1b1"}
    _aged(path)
    assert str(vis_export_index([sources], directory)) == "0 added, 0 updated, 1 unchanged"  # read: a new stamp
    _same_size_and_time(path, "Parse the zebra!", "Parse the koala!")
    assert str(vis_export_index([sources], directory)) == "0 added, 0 updated, 1 unchanged"  # not read
    assert ids("koala", directory) == set()


def test_a_file_dated_in_the_future_is_not_read_again_by_a_rerun(tmp_path: Path) -> None:
    """A modification time ahead of the clock (a copy from a machine whose clock
    runs ahead, an archive unpacked as dated) is a skewed clock, not a change a
    moment ago: a rerun does not read the file again, as for any file whose
    stamp is unchanged (it was read at every run until the clock caught up)."""
    sources = tmp_path / "sources"
    sources.mkdir()
    path = sources / "a.json"
    path.write_text(json.dumps({**json.loads((INPUT / "session.json").read_text()), "id": "a"}))
    _aged(path, -3600)  # an hour ahead
    directory = tmp_path / "index"
    assert str(vis_export_index([sources], directory)) == "1 added, 0 updated, 0 unchanged"
    _same_size_and_time(path, "Parse the config", "Parse the koala!")
    assert str(vis_export_index([sources], directory)) == "0 added, 0 updated, 1 unchanged"  # not read
    assert ids("koala", directory) == set()


def test_jobs_hold_after_a_commit(tmp_path: Path) -> None:
    """``--threads 1`` means one indexing thread for the whole job, not only until the first commit."""
    script = f"""
import os, time
from pathlib import Path
from vis_export.searchindex.engines.tantivy_engine import TantivyEngine

def indexing_threads():
    names = [open(f"/proc/self/task/{{t}}/comm").read() for t in os.listdir("/proc/self/task")]
    return sum(name.startswith("thrd-tantivy-in") for name in names)

engine = TantivyEngine(Path({str(tmp_path / "i")!r}), True, threads=1)
engine.commit()
time.sleep(0.5)
print(indexing_threads())
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "1", result.stderr


def test_a_tantivy_reader_reloads_only_after_a_commit(tmp_path: Path) -> None:
    """A search reloads the reader (reading ``meta.json``, opening every segment
    again) only when a commit has changed the index; after one it sees the commit."""
    from vis_export.searchindex.documents import documents
    from vis_export.searchindex.engines.tantivy_engine import TantivyEngine

    engine = TantivyEngine(tmp_path / "i", writable=True, threads=1)
    reloads: list[None] = []
    index = engine.index

    class Counted:
        def __getattr__(self, name: str) -> Any:
            return getattr(index, name)

        def reload(self) -> None:
            reloads.append(None)
            index.reload()

    engine.index = Counted()
    found: list[int] = []
    for n in range(2):
        engine.add(list(documents(asked(f"s{n}", "parse the koala config"), "visible")))
        engine.commit()
        for _ in range(3):
            found.append(len(engine.search(["koala"], {}, None, None, 10, 0)))
    assert found == [1, 1, 1, 2, 2, 2]
    assert len(reloads) == 2


def test_a_tantivy_searcher_sees_a_commit_that_leaves_meta_json_s_stat_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tantivy writes ``meta.json`` anew at each commit; ext4 gives the new file
    the inode the one before last freed (two inodes alternate), its size is the
    same while the segments' count is, and a file system of one-second times
    (ext4 of 128-byte inodes, ext3, FAT, HFS+) gives commits within a second the
    same times. A long-lived searcher (``serve``'s) judging by that stat kept the
    reader of a commit two commits back: a pruned or redacted session still
    found. Here the times are those of a file system that keeps none."""
    from vis_export.searchindex.documents import documents
    from vis_export.searchindex.engines.tantivy_engine import TantivyEngine

    real = os.stat

    def timeless(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        found = real(path, *args, **kwargs)
        times = {f"st_{kind}time{unit}": 0 for kind in "amc" for unit in ("", "_ns")}
        return os.stat_result(tuple(found)[:7] + (0, 0, 0), times)

    monkeypatch.setattr(os, "stat", timeless)
    writer = TantivyEngine(tmp_path / "i", writable=True, threads=1)
    reader = TantivyEngine(tmp_path / "i", writable=False)
    words = ("koala", "wombat", "emu", "quokka")
    found: list[list[int]] = []
    for n in range(12):  # the searcher asked after every other commit
        writer.delete_session("s")
        writer.add(list(documents(asked("s", f"parse the {words[n % 4]} config"), "visible")))
        writer.commit()
        if n % 2:
            found.append([len(reader.search([w], {}, None, None, 10, 0)) for w in words])
    assert found == [[0, 1, 0, 0], [0, 0, 0, 1]] * 3


def test_snippets_mark_words_not_parts_of_words() -> None:
    from vis_export.searchindex.query import SnippetMaker

    def marked(word: str, text: str) -> list[str]:
        return [piece for piece, hit in SnippetMaker((word,), ())(text).pieces if hit]

    assert marked("a", "I ate an apple at a home") == ["a"]
    assert marked("form", "platform information form forms") == ["form", "forms"]
    assert marked("config", "parse_config parseConfig configured reconfig") == ["config", "Config", "configured"]


# Letters whose case folds are odd (Kelvin sign, long s, dotted and dotless i,
# sharp s), an underscore and hyphen that join an identifier's parts, CJK.
_SNIPPET_ALPHABET = list('aKkKſsSİıiIßẞ_-. \n"日本語の') + ["Config", "parse", "HTTP", "Server"]
_ASCII_ALPHABET = list('aKkSsiI_-. \n"0') + ["Config", "parse", "HTTP", "Server", "configured", "a1", "ks0"]


_QUERY_WORDS = ["config", "Config", "parse", "server", "a", "ks", "ſerver", "日本", "HTTPServer", "parse_config"]
_QUERY_WORDS.append('"g_x"')  # a phrase


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from(_QUERY_WORDS), min_size=1, max_size=4).map(" ".join)
    | st.lists(st.sampled_from(_SNIPPET_ALPHABET), min_size=1, max_size=12).map("".join),
    st.lists(st.sampled_from(_SNIPPET_ALPHABET), max_size=60).map("".join)
    | st.lists(st.sampled_from(_ASCII_ALPHABET), max_size=60).map("".join),
)
def test_a_snippet_pattern_finds_what_its_alternatives_find(query: str, text: str) -> None:
    """The pattern a snippet uses for a text (its first character read by a
    class of those a match can start with, each alternative checking it behind;
    on ASCII text, with ASCII classes where the classes of every script cost
    milliseconds to compile) finds exactly what the alternatives alone, each
    starting where it is (``_WORD_START``), with every script's classes, find."""
    import re

    from vis_export.searchindex.query import _LETTER, _WORD_REST, _WORD_START, SnippetMaker, parse

    parsed = parse(query)
    maker = SnippetMaker(parsed.words, parsed.phrases)
    pattern, groups = maker._pattern(text), maker._alternatives(_LETTER, _WORD_REST)
    plain = "|".join(
        f"(?P<t{n}>"
        + "|".join((_WORD_START if started else "") + re.escape(first) + rest for started, first, rest in ways)
        + ")"
        for n, ways in enumerate(groups)
    )

    def found(p: re.Pattern[str] | None) -> list[tuple[int, int, str | None]]:
        return [(m.start(), m.end(), m.lastgroup) for m in p.finditer(text)] if p else []

    assert found(pattern) == found(re.compile(plain, re.IGNORECASE) if groups else None)


def test_a_snippet_of_ascii_text_leaves_every_scripts_classes_uncompiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A query not searched before pays for compiling its pattern: over ASCII
    text (most), not for the classes of every script (3-7 ms, more than the
    rest of the query); searched again, for neither."""
    from vis_export.searchindex import query

    compiled: list[str] = []
    compile_pattern = query.SnippetMaker._compile

    def noted(maker: query.SnippetMaker, letter: str, word_rest: str) -> Any:
        compiled.append(letter)
        return compile_pattern(maker, letter, word_rest)

    monkeypatch.setattr(query.SnippetMaker, "_compile", noted)
    query._pattern_of.cache_clear()
    maker = query.SnippetMaker(("index", "queries", "a"), ('"x"',))
    assert maker.of_prose("An index of queries, a **x** and more").text.startswith("An **index** of **queries**")
    maker("an index\nof code")
    assert compiled == [query._ASCII_LETTER]
    assert maker("日本語の index").text == "日本語の **index**"
    assert compiled == [query._ASCII_LETTER, query._LETTER]
    again = query.SnippetMaker(("index", "queries", "a"), ('"x"',))
    assert (again("an index").text, again("日本語の index").text) == ("an **index**", "日本語の **index**")
    assert compiled == [query._ASCII_LETTER, query._LETTER]


def test_a_phrase_past_many_candidates_is_found_once(tmp_path: Path, engine: str) -> None:
    """Candidates for a phrase come in longer and longer lists: one that only
    the fourth list reaches is found, and no hit comes twice."""
    blocks = [{"id": f"b{n}", "type": "prose", "markdown": f"alpha gamma alpha {n}"} for n in range(700)]
    blocks.append({"id": "wanted", "type": "prose", "markdown": "gamma alpha beta"})
    session = session_of(
        {
            "id": "many",
            "messages": [{"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": blocks}],
        }
    )
    index([session], tmp_path / "i", engine=engine)
    assert [hit.block_id for hit in search('alpha "alpha beta"', tmp_path / "i", limit=5)] == ["wanted"]
    hits = search("alpha", tmp_path / "i", limit=1000)
    assert len(hits) == len({hit.block_id for hit in hits}) == 701


@given(
    st.lists(st.sampled_from(list("aZ09_ -.\n\t\x00\x1f\x7f'é\u0130ß") + ["x" * 39, "y" * 40])).map("".join)
    | st.text(st.characters(max_codepoint=127))
    | st.text()
)
def test_the_distinct_words_of_a_text_are_those_of_its_analysis(text: str) -> None:
    """The ASCII short cuts of ``analysed_words``, ``distinct_analysed_words``
    and ``counted_words`` (which measures only the distinct words) change nothing."""
    import re
    from collections import Counter

    from vis_export.searchindex.cjk import WORD_PATTERN
    from vis_export.searchindex.documents import LONGEST_WORD, analysed_words, counted_words, distinct_analysed_words

    assert analysed_words(text) == [w.lower() for w in re.findall(WORD_PATTERN, text) if len(w.lower()) <= LONGEST_WORD]
    assert distinct_analysed_words(text) == set(analysed_words(text))
    assert counted_words(text) == Counter(analysed_words(text))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(session_documents(small_blocks), st.sampled_from(["none", "visible"]), st.booleans())
def test_r2_a_first_copy_written_again_keeps_private_reasoning_out(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any], reasoning: str, from_file: bool
) -> None:
    """R2: the first copy of a session that a Dask job writes again once its
    workers are done (``IndexJob.restore``: read again from its file, or kept as
    read from standard input) is the index's own view of it: the same
    documents an ordinary job writes, and never private reasoning."""
    from vis_export.jobs.index_job import IndexJob
    from vis_export.searchindex.target import target_for

    folder = tmp_path_factory.mktemp("restore")
    (folder / "sources").mkdir()
    source = folder / "sources" / "first.json"  # not a folder an index may go in
    source.write_text(json.dumps(document))
    session = session_of(document, str(source))
    ordinary, restored = folder / "ordinary", folder / "restored"
    index([session], ordinary, engine="tantivy", reasoning=reasoning)
    target = target_for(restored, "tantivy", None)
    with target.writing("tantivy", 0.0, 0) as (writer, manifest):
        job = IndexJob(writer, target, manifest, reasoning, None, None)  # type: ignore[arg-type]
        job.firsts = {session.id: str(source) if from_file else session}
        job.restore(session.id, lenient=False)
        job.commit()
    found = [h.to_json() for h in search("", restored, limit=10_000)]
    assert PRIVATE_CANARY not in json.dumps(found)
    assert found == [h.to_json() for h in search("", ordinary, limit=10_000)]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from(_QUERY_WORDS), min_size=1, max_size=4).map(" ".join),
    st.lists(st.sampled_from(_SNIPPET_ALPHABET), max_size=80).map("".join)
    | st.lists(st.sampled_from(_ASCII_ALPHABET), max_size=80).map("".join)
    | st.lists(st.sampled_from([*_QUERY_WORDS, " ", ". "]), max_size=30).map("".join),  # on one line
)
def test_a_snippet_shows_the_match_its_rule_chooses(query: str, text: str) -> None:
    """The match shown (its shortcuts for one word, and for a text of one line,
    included) is the rule's: of the query's word or phrase the text holds fewest
    times, on the line holding most of them, the first of equals; each match
    marked line by line."""
    from collections import Counter

    from vis_export.searchindex.query import SnippetMaker, parse

    parsed = parse(query)
    maker = SnippetMaker(parsed.words, parsed.phrases)
    pattern = maker._pattern(text)
    matches = [m for m in pattern.finditer(text) if m.end() > m.start()] if pattern else []
    chosen = maker._best_match(text)
    if not matches:
        assert chosen is None
        return
    counts = Counter(m.lastgroup for m in matches)
    line = [text.count("\n", 0, m.start()) for m in matches]
    on_line = {n: {m.lastgroup for m, at in zip(matches, line, strict=True) if at == n} for n in set(line)}
    rare = [n for n, m in enumerate(matches) if counts[m.lastgroup] == min(counts.values())]
    best = max(rare, key=lambda n: (len(on_line[line[n]]), -n))
    assert chosen is not None and chosen.span() == matches[best].span()
    snippet = maker(text)
    assert snippet.text == "".join(
        [snippet.before]
        + [
            "\n".join(f"**{x}**" if x else x for x in piece.split("\n")) if hit else piece
            for piece, hit in snippet.pieces
        ]
        + [snippet.after]
    )


@settings(max_examples=examples(50), deadline=None)
@given(st.integers(2, 400), st.data())
def test_a_snippet_shows_the_line_of_the_rarest_query_word(lines: int, data: st.DataObject) -> None:
    """Whichever line holds the query's rarest word, the snippet shows it (not the
    first line where a common word of the query matches) and marks it."""
    from vis_export.searchindex.query import SnippetMaker, parse

    rare = data.draw(st.integers(0, lines - 1))
    text = "\n".join(f"processed batch {'zeta' if n == rare else n}" for n in range(lines))
    query = parse(data.draw(st.sampled_from(["processed batch zeta", "zeta batch", "batch zeta processed"])))
    snippet = SnippetMaker(query.words, query.phrases)(text)
    assert "**zeta**" in snippet.text


def test_a_hit_shows_the_line_of_the_rarest_query_word(tmp_path: Path, engine: str) -> None:
    log = "\n".join(f"processed batch {n}" for n in range(4000))
    session = session_of(
        {
            "id": "log",
            "messages": [
                {
                    "id": "m",
                    "role": "tool",
                    "status": "completed",
                    "created_at": 1,
                    "content": [{"id": "out", "type": "code", "language": "text", "text": log}],
                }
            ],
        }
    )
    index([session], tmp_path / "i", engine=engine)
    (hit,) = search("processed batch 3999", tmp_path / "i")
    assert hit.snippet.endswith("\n**processed** **batch** **3999**")


_CJK_PIECES = [*"日本語の会話天気設定ファイル한국어中文", " ", "。", "ab", "x_y", "Config", "1"]
_CJK_TEXT = st.lists(st.sampled_from(_CJK_PIECES), min_size=1, max_size=30).map("".join)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_CJK_TEXT, min_size=1, max_size=4), st.data())
def test_any_piece_of_a_cjk_run_finds_its_block_on_every_engine(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], data: st.DataObject
) -> None:
    """Whatever piece of a run of Chinese, Japanese or Korean a query holds (one
    character or more), every block holding that piece is found, the same on
    tantivy and Whoosh; a block without it only where it holds every bigram."""
    from vis_export.searchindex.cjk import query_grams, runs

    pieces = [run for text in texts for run in runs(text)]
    if not pieces:
        return
    run = data.draw(st.sampled_from(pieces))
    start = data.draw(st.integers(0, len(run) - 1))
    piece = run[start : data.draw(st.integers(start + 1, len(run)))]
    blocks = [{"id": f"b{n}", "type": "prose", "markdown": text} for n, text in enumerate(texts)]
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": blocks}
    session = session_of({"id": "cjk", "messages": [message]})
    holding = {f"b{n}" for n, text in enumerate(texts) if piece in text}
    every_gram = {f"b{n}" for n, text in enumerate(texts) if all(g in text for g in query_grams(piece))}
    found = {}
    for engine in ENGINES:
        directory = tmp_path_factory.mktemp(engine)
        index([session], directory, engine=engine)
        found[engine] = ids(piece, directory)
        assert holding <= found[engine] <= every_gram, (engine, piece)
        assert ids(f'"{piece}"', directory) == holding
    assert found["tantivy"] == found["whoosh"]


@given(
    st.lists(
        st.sampled_from(["parse_config", "parseConfig", "HTTPServer", "ID", "x1", "_", "a_B", "日本語", "é", " ", "\n"])
        | st.sampled_from(list("aZ09_ -.(\t\x00\x1c\x85\u3000\u3164'é\u0130ß"))
    ).map("".join)
    | st.text(st.characters(max_codepoint=127))
    | st.text()
)
def test_the_code_terms_of_a_text_are_those_of_its_identifiers_and_runs(text: str) -> None:
    """``code_terms`` splits a text at white space and caches each token's
    terms: the same terms as its definition over the whole text (every
    identifier with an underscore or mixed case, its key and words; every
    character and bigram of a ``cjk`` run)."""
    import re

    from vis_export.searchindex.cjk import index_grams
    from vis_export.searchindex.documents import code_terms, identifier_key, identifier_words

    expected: set[str] = set(index_grams(text))
    for identifier in re.findall(r"[A-Za-z0-9_]+", text):
        if "_" in identifier or not (identifier.islower() or identifier.isupper() or identifier.isdigit()):
            expected.update(w for w in (identifier_key(identifier), *identifier_words(identifier)) if w)
    assert code_terms(text) == " ".join(sorted(expected))


_WORDY = st.lists(
    st.sampled_from(["parse", "parsing", "Configured", "x" * 45, "toml", "load", "f", "a1", " ", ".", "(", "_", "\n"])
    | st.just("日本"),
    min_size=1,
    max_size=30,
).map("".join)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_WORDY, min_size=1, max_size=6), st.data())
def test_a_phrase_finds_every_block_that_holds_it(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], data: st.DataObject
) -> None:
    """tantivy narrows a phrase by its inner words side by side, stemmed, at
    the positions it holds: every block holding the phrase is still found,
    where a word at the phrase's edge is part of a longer one in the text, or a
    word too long to be indexed leaves a gap in the positions."""
    blocks = [{"id": f"b{n}", "type": "code", "language": "text", "text": text} for n, text in enumerate(texts)]
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": blocks}
    directory = tmp_path_factory.mktemp("phrases")
    index([session_of({"id": "s", "title": "", "messages": [message]})], directory, engine="tantivy")
    source = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, len(source) - 1))
    phrase = source[start : start + data.draw(st.integers(1, 40))]
    if phrase.strip():
        found = {hit.block_id for hit in search(f'"{phrase}"', directory, limit=100)}
        assert found == {block["id"] for block in blocks if phrase in block["text"]}


def test_the_index_is_named_a_location_a_folder_or_a_database(tmp_path: Path) -> None:
    """``index`` and ``search`` take the index as ``location``, as ``index_sources``
    does: it is a folder or a ``postgresql://`` URI, not always a directory."""
    counts = index(load(INPUT / "session.json"), location=tmp_path / "index")
    assert counts.added == 1
    assert search("config", location=tmp_path / "index")


def test_a_job_stopped_between_its_engine_commit_and_its_manifest_leaves_nothing_prune_cannot_reach(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C lands as the engine's commit returns (Python runs a signal's
    handler once the native call is done), before the manifest is written:
    the index then holds sessions the manifest had not named. Those must stay
    within reach: once their file is gone, ``--prune`` removes them, and no
    search finds a session that no source holds."""
    from vis_export.searchindex.guard import GuardedEngine

    sources = tmp_path / "sources"
    sources.mkdir()
    base = json.loads((INPUT / "session.json").read_text())
    (sources / "kept.json").write_text(json.dumps({**base, "id": "kept"}))
    directory = tmp_path / "index"
    vis_export_index([sources], directory, engine=engine)
    (sources / "gone.json").write_text(json.dumps({**base, "id": "gone"}))
    committed = GuardedEngine.commit

    def stopped(self: GuardedEngine) -> None:
        committed(self)
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(GuardedEngine, "commit", stopped)
        with pytest.raises(KeyboardInterrupt):
            vis_export_index([sources], directory, engine=engine)
    assert {h.session_id for h in search("config", directory, limit=100)} == {"kept", "gone"}
    (sources / "gone.json").unlink()
    counts = vis_export_index([sources], directory, prune=True)
    assert counts.removed == 1
    assert {h.session_id for h in search("config", directory, limit=100)} == {"kept"}
