"""Search against hostile input: huge limits, damaged index files, queries of
symbols only, refused directories, sources that fail to load, forged stored
documents. Anything that could abort the interpreter runs in a subprocess."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT
from hypothesis import given, strategies as st
from sessions import session_of

from vis_export import load
from vis_export.jobs.indexing import index
from vis_export.searchindex import IndexFailure, search
from vis_export.searchindex.directory import LOCK, MANIFEST, open_index
from vis_export.searchindex.documents import documents
from vis_export.searchindex.engines import MAX_THREADS
from vis_export.searchindex.guard import engine_call
from vis_export.searchindex.query import MAX_TERMS

ENGINES = ["tantivy", "whoosh"]
GOLDEN = list(load(INPUT))
TIMEOUT = 120


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vis_export", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=TIMEOUT,
        env={**os.environ, "RUST_BACKTRACE": "1"},
    )


def one_line_failure(result: subprocess.CompletedProcess[str]) -> bool:
    return (
        result.returncode == 1
        and len(result.stderr.splitlines()) == 1
        and result.stderr.startswith("vis-export: ")
        and "Traceback" not in result.stderr
    )


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def golden_index(tmp_path: Path, engine: str) -> Path:
    directory = tmp_path / "index"
    index(GOLDEN, directory, engine=engine)
    return directory


# --- a huge limit ------------------------------------------------------------

LIMITED = """
import sys
from vis_export.searchindex import search
print(len(search(sys.argv[2], sys.argv[1], limit=int(sys.argv[3]))))
"""


@pytest.mark.parametrize("query", ["config", '"config"'])
def test_no_limit_aborts_the_host_program(golden_index: Path, query: str) -> None:
    expected = len(search(query, golden_index, limit=1000))
    for limit in (2**31 - 1, 2**63, 10**30):
        result = subprocess.run(
            [sys.executable, "-c", LIMITED, str(golden_index), query, str(limit)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert (result.returncode, result.stdout.strip(), result.stderr) == (0, str(expected), "")
    for limit in (0, -1):
        with pytest.raises(ValueError, match="limit must be 1 or more"):
            search(query, golden_index, limit=limit)


def test_the_cli_takes_any_limit(golden_index: Path) -> None:
    result = cli("search", "config", "--index", str(golden_index), "--limit", "2147483647", "--json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == len(search("config", golden_index, limit=1000)) > 0


# --- damaged index files -----------------------------------------------------


def _flip(data: bytes, start: int) -> bytes:
    return data[:start] + bytes(b ^ 0xFF for b in data[start : start + 16]) + data[start + 16 :]


DAMAGES: dict[str, Callable[[bytes], bytes]] = {
    "emptied": lambda data: b"",
    "cut in half": lambda data: data[: len(data) // 2],
    "zeroed": lambda data: bytes(len(data)),
    "flipped at the start": lambda data: _flip(data, 0),
    "flipped in the middle": lambda data: _flip(data, len(data) // 2),
}


def _damaged_copies(pristine: Path, work: Path, damages: list[str]) -> Any:
    """A copy of the index per (file, damage), each with one file damaged."""
    for path in sorted(p for p in pristine.rglob("*") if p.is_file() and p.stat().st_size and p.name != LOCK):
        for name in damages:
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(pristine, work)
            target = work / path.relative_to(pristine)
            target.write_bytes(DAMAGES[name](target.read_bytes()))
            yield f"{path.name} {name}"


@pytest.mark.slow
def test_a_damaged_index_fails_in_one_line(tmp_path: Path, golden_index: Path, engine: str) -> None:
    failed = []
    for case in _damaged_copies(golden_index, tmp_path / "copy", list(DAMAGES)):
        result = cli("search", "config", "--index", str(tmp_path / "copy"), "--limit", "100")
        assert result.returncode in (0, 1), (case, result.stderr)  # never a signal
        assert "Traceback" not in result.stderr and "panicked" not in result.stderr, (case, result.stderr)
        if result.returncode:  # damage that went unnoticed may still answer
            assert one_line_failure(result), (case, result.stderr)
            assert "is damaged" in result.stderr or MANIFEST in result.stderr, (case, result.stderr)
            failed.append(case)
    assert len(failed) >= 5, failed


def test_an_index_job_over_a_damaged_index_fails_in_one_line(tmp_path: Path, golden_index: Path, engine: str) -> None:
    for case in _damaged_copies(golden_index, tmp_path / "copy", ["cut in half"]):
        result = cli("index", str(INPUT), "--index", str(tmp_path / "copy"), "--engine", engine)
        assert result.returncode in (0, 1), (case, result.stderr)
        if result.returncode:
            assert one_line_failure(result), (case, result.stderr)


PANIC = """
import os, sys
from pathlib import Path
import tantivy
from vis_export.searchindex.engines.tantivy_engine import TantivyEngine
from vis_export.searchindex.guard import IndexFailure, engine_call

directory = Path(sys.argv[1])
engine = TantivyEngine(directory / "engine", writable=False)
with engine_call(directory):
    os.write(2, b"kept\\n")  # what a call that succeeds writes goes through
try:
    with engine_call(directory):
        engine.index.searcher().search(tantivy.Query.all_query(), 0)  # tantivy panics on a limit of 0
except IndexFailure as failure:
    print(failure)
with engine_call(directory):  # the scratch file is reused: the panic's report is not replayed with this
    os.write(2, b"again ")
    with engine_call(directory):  # a call inside another has a scratch file of its own
        os.write(2, b"inside ")
    os.write(2, b"outside\\n")
print("after", file=sys.stderr)
"""


def test_a_rust_panic_becomes_one_line_and_its_report_stays_off_stderr(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    index(GOLDEN, directory)
    result = subprocess.run(
        [sys.executable, "-c", PANIC, str(directory)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "RUST_BACKTRACE": "1"},
    )
    assert result.returncode == 0
    assert (
        result.stdout.startswith(f"index {directory} is damaged: ") and "Limit must be greater than 0" in result.stdout
    )
    assert len(result.stdout.splitlines()) == 1
    assert result.stderr == "kept\nagain inside outside\nafter\n"


# --- indexing threads, and errors that are not damage -------------------------


@pytest.mark.parametrize(("option", "threads"), [("--threads", 9), ("--threads", 16), ("--jobs", MAX_THREADS)])
def test_any_number_of_indexing_threads_up_to_the_cap_indexes(tmp_path: Path, option: str, threads: int) -> None:
    """tantivy refuses less than 15 MB of writer memory a thread: with a fixed
    pool every --threads of 9 or more failed, and called the index damaged.
    ``--jobs``, the option's name before (it never meant jobs), is the same."""
    directory = tmp_path / "index"
    for expected in ("4 added, 0 updated, 0 unchanged", "0 added, 0 updated, 4 unchanged"):  # after a commit too
        result = cli("index", str(INPUT), "--index", str(directory), option, str(threads))
        assert (result.returncode, result.stderr.strip()) == (0, expected)
    assert search("config", directory)


def test_more_indexing_threads_than_the_cap_are_refused_in_one_line(tmp_path: Path) -> None:
    result = cli("index", str(INPUT), "--index", str(tmp_path / "index"), "--threads", str(MAX_THREADS + 1))
    assert result.returncode == 2 and f"is not in the range 0<=x<={MAX_THREADS}" in result.stderr
    assert not (tmp_path / "index").exists()
    with pytest.raises(ValueError, match=f"threads must be 0 to {MAX_THREADS}"):
        index(GOLDEN, tmp_path / "index", threads=MAX_THREADS + 1)


def _never_damaged(failure: pytest.ExceptionInfo[IndexFailure]) -> str:
    line = str(failure.value)
    assert "damaged" not in line and "remove it" not in line and len(line.splitlines()) == 1
    return line


def test_an_argument_tantivy_refuses_never_says_the_index_is_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call of ours that the engine refuses (the writer's memory of the old
    fixed pool, for 9 threads) is no damage: the index is left as it was."""
    from vis_export.searchindex.engines import tantivy_engine

    directory = tmp_path / "index"
    index(GOLDEN, directory)
    monkeypatch.setattr(tantivy_engine, "heap_for", lambda threads: tantivy_engine.HEAP)
    with pytest.raises(IndexFailure) as failure:
        open_index(directory, "tantivy", writable=True, threads=9)
    assert "The memory arena in bytes per thread" in _never_damaged(failure)
    assert search("config", directory)


def test_a_bug_of_ours_never_says_the_index_is_damaged(golden_index: Path, engine: str) -> None:
    opened = open_index(golden_index, engine, writable=True)
    try:
        with pytest.raises(IndexFailure) as failure:
            opened.search([None], {}, None, None, 10, 0)  # type: ignore[list-item]
        assert "the search engine failed, not the index" in _never_damaged(failure)
        with pytest.raises(IndexFailure) as failure:
            opened.add([{"unknown_field": "x"}])
        _never_damaged(failure)
    finally:
        opened.close()
    assert search("config", golden_index)


def test_an_engine_that_fails_to_write_never_says_the_index_is_damaged(tmp_path: Path) -> None:
    """Whoosh's own code refusing what it is asked to write (a field it does not know)."""
    directory = tmp_path / "index"
    index(GOLDEN, directory, engine="whoosh")
    opened = open_index(directory, "whoosh", writable=True)
    try:
        with pytest.raises(IndexFailure) as failure:
            opened.add([{"text": "x", "unknown_field": "x"}])
        assert "unknown_field" in _never_damaged(failure)
    finally:
        opened.close()


@pytest.mark.parametrize("reading", [True, False])
def test_the_machine_failing_never_says_the_index_is_damaged(tmp_path: Path, reading: bool) -> None:
    for error in (
        OSError(errno.ENOSPC, "No space left on device"),
        ValueError("An IO error occurred: 'Permission denied (os error 13)'"),
        MemoryError(),
    ):
        with pytest.raises(IndexFailure) as failure:
            with engine_call(tmp_path, reading):
                raise error
        assert f"cannot {'read' if reading else 'write to'} it" in _never_damaged(failure)


# --- a Whoosh index's pickles never run code ------------------------------------


class _Planted:
    """What a pickle planted in an index runs when it is loaded: ``os.system``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def _plant_toc(directory: Path, marker: Path, where: str) -> Path:
    """A next generation's ``_MAIN_<n>.toc`` in a Whoosh index whose schema or
    segment list, as Whoosh itself writes them, is a pickle that runs a command."""
    from whoosh import index as whoosh_index
    from whoosh.fields import Schema
    from whoosh.filedb.filestore import FileStorage

    class PlantedSchema(Schema):
        def __reduce__(self) -> tuple[Any, ...]:
            return _Planted(marker).__reduce__()

    storage = FileStorage(str(directory / "engine"))
    toc = whoosh_index.TOC.read(storage, "MAIN")
    generation = toc.generation + 1
    if where == "schema":
        planted = whoosh_index.TOC(PlantedSchema(**dict(toc.schema.items())), toc.segments, generation)
    else:
        planted = whoosh_index.TOC(toc.schema, [_Planted(marker)], generation)
    planted.write(storage, "MAIN")
    return directory / "engine" / f"_MAIN_{generation}.toc"


@pytest.mark.parametrize("where", ["schema", "segments"])
def test_a_planted_whoosh_table_of_contents_runs_nothing(tmp_path: Path, where: str) -> None:
    """A shared or unpacked index with a ``_MAIN_<n>.toc`` that unpickles into
    ``os.system``: the command never runs (before, opening the index ran it).
    The schema in it is never read (the engine has its own), so the index
    still searches; a planted segment list makes ``search``, ``serve --index``
    and ``index`` refuse the index in one line."""
    directory, marker = tmp_path / "index", tmp_path / "ran"
    index(GOLDEN, directory, engine="whoosh")
    assert _plant_toc(directory, marker, where).is_file() and not marker.exists()
    if where == "schema":
        assert search("config", directory)
        assert cli("search", "config", "--index", str(directory)).returncode == 0
    else:
        for args in (
            ("search", "config", "--index", str(directory)),
            ("index", str(INPUT / "session.json"), "--index", str(directory)),
            ("serve", str(INPUT / "session.json"), "--index", str(directory), "--port", "0"),
        ):
            result = cli(*args)
            assert one_line_failure(result), (args, result.stderr)
            assert f"index {directory} cannot be opened: its files name posix.system" in result.stderr
        with pytest.raises(IndexFailure, match="cannot be opened"):
            search("config", directory)
    assert not marker.exists()


def test_whoosh_unpickles_only_through_the_restricted_loaders() -> None:
    """Every Whoosh module, however it took ``pickle`` and whenever it is imported,
    reads pickles through the loaders that the engine restricts."""
    program = """
import importlib, pkgutil, sys
import whoosh
from vis_export.searchindex.engines import whoosh_engine
from vis_export.searchindex.engines.whoosh_pickle import unsafe_loaders
for info in pkgutil.walk_packages(whoosh.__path__, "whoosh."):
    try:
        importlib.import_module(info.name)
    except Exception:  # a module whoosh-reloaded cannot import cannot read an index either
        pass
print(unsafe_loaders())
"""
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


def test_every_pickle_whoosh_reads_in_the_engine_is_restricted(tmp_path: Path) -> None:
    """Not only the table of contents: stored fields, postings and column headers
    are pickles too; each loader Whoosh reads them with refuses a callable."""
    import io
    import pickle

    import whoosh.codec.whoosh3
    import whoosh.columns
    import whoosh.compat
    import whoosh.filedb.structfile
    import whoosh.formats

    from vis_export.searchindex.engines import whoosh_engine  # noqa: F401 - installs the loaders
    from vis_export.searchindex.engines.whoosh_pickle import restricted
    from vis_export.searchindex.guard import ForeignIndex

    marker = tmp_path / "ran"
    planted = pickle.dumps(_Planted(marker))
    loaders = [whoosh.compat.loads, whoosh.columns.loads, whoosh.formats.loads, whoosh.codec.whoosh3.loads]
    with restricted():
        for loads in loaders:
            with pytest.raises(ForeignIndex, match="posix.system"):
                loads(planted)
        with pytest.raises(ForeignIndex):
            whoosh.filedb.structfile.StructFile(io.BytesIO(planted)).read_pickle()
    assert not marker.exists()


def test_whoosh_outside_the_engine_unpickles_as_before(tmp_path: Path) -> None:
    """The restriction holds only while the engine works: another user of Whoosh
    in the process opens an index (its schema's analyzers and all) as always."""
    from whoosh import index as whoosh_index

    from vis_export.searchindex.engines import whoosh_engine  # noqa: F401 - installs the loaders

    directory = tmp_path / "index"
    index(GOLDEN, directory, engine="whoosh")
    with whoosh_index.open_dir(str(directory / "engine")).searcher() as searcher:
        assert searcher.doc_count() > 0


@pytest.mark.parametrize(
    "manifest",
    [
        [],
        {"engine": "lucene"},
        {"engine": "tantivy", "schema_version": 1},
        {"engine": "tantivy", "schema_version": 1, "sessions": {}, "files": {"a.json": {"stamp": [1, 2]}}},
    ],
)
def test_a_forged_manifest_is_refused(tmp_path: Path, manifest: Any) -> None:
    directory = tmp_path / "index"
    index(GOLDEN, directory)
    (directory / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(IndexFailure, match="not a vis-export index manifest"):
        search("config", directory)
    with pytest.raises(IndexFailure, match="not a vis-export index manifest"):
        index(GOLDEN, directory)


def test_a_forged_stored_document_is_damage(tmp_path: Path) -> None:
    from whoosh import index as whoosh_index

    directory = tmp_path / "index"
    index(GOLDEN, directory, engine="whoosh")
    writer = whoosh_index.open_dir(str(directory / "engine")).writer()
    writer.add_document(key="k", session_id="s", words="forged", text="forged")
    writer.commit()
    with pytest.raises(IndexFailure, match="is damaged: stored document 'k' lacks fields"):
        search("forged", directory)


# --- what a search returns ---------------------------------------------------


def _message(message_id: str, *blocks: dict[str, Any], created_at: int = 1740000000000) -> dict[str, Any]:
    return {
        "id": message_id,
        "role": "assistant",
        "status": "completed",
        "created_at": created_at,
        "content": list(blocks),
    }


SYMBOLS = session_of(
    {
        "id": "symbols",
        "title": "Symbols",
        "messages": [
            _message(
                "m",
                *(
                    {
                        "id": f"b{n}",
                        "type": "code" if n % 2 else "prose",
                        **({"text": text, "language": "text"} if n % 2 else {"markdown": text}),
                    }
                    for n, text in enumerate(
                        [
                            "if a != b: return x -> y",
                            "fn(*args, **kwargs)",
                            "std::vec::Vec<u8>",
                            "price: 5 € + 3 $ = ?",
                            "emoji 🙂 and 🚀 launched 🙂🙂",
                            "a -> b => c |> d",
                            "/* comment */ // done",
                            "@decorator #tag %s ^ & ~",
                            "**bold** and *em* and `tick`",
                            "© ® ™ → ← ≠ ≤ ≥ ∞",
                            "__init__ and __ and _",
                            "!!! ??? ... ,,, ;;;",
                            "no symbols here at all",
                            "{[()]} <tag/> '' \\ \\n",
                        ]
                    )
                ),
            )
        ],
    }
)
CORPUS = [SYMBOLS, *GOLDEN]
STORED = {doc["key"]: doc["text"] for session in CORPUS for doc in documents(session, "none")}
CORPUS_SYMBOLS = sorted(
    {c for text in STORED.values() for c in text if not c.isspace() and not c.isalnum() and c != '"'}
)


@pytest.fixture(scope="module")
def symbol_indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    indexes = {}
    for name in ENGINES:
        indexes[name] = tmp_path_factory.mktemp(name) / "index"
        index(CORPUS, indexes[name], engine=name)
    return indexes


symbol_tokens = st.text(
    st.one_of(st.sampled_from(CORPUS_SYMBOLS), st.characters(categories=["P", "S"], exclude_characters='"')),
    min_size=1,
    max_size=3,
)


@given(st.lists(symbol_tokens, min_size=1, max_size=2))
def test_a_query_of_symbols_finds_exactly_the_blocks_that_hold_it(
    symbol_indexes: dict[str, Path], tokens: list[str]
) -> None:
    expected = {key for key, text in STORED.items() if all(token in text for token in tokens)}
    for name, directory in symbol_indexes.items():
        hits = search(" ".join(tokens), directory, limit=10_000)
        assert {"\x1f".join((h.session_id, h.message_id, h.block_id)) for h in hits} == expected, name


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("!=", {"b0"}),
        ("->", {"b0", "b5"}),
        ("**", {"b1", "b8"}),
        ("::", {"b2"}),
        ("🙂", {"b4"}),
        ("*", {"b1", "b6", "b8"}),
        ("→", {"b9"}),
        ("_", {"b10"}),
        ("__", {"b10"}),
        ("-> =>", {"b5"}),
        ("return ->", {"b0"}),
        ("∉", set()),
    ],
)
def test_symbol_queries(symbol_indexes: dict[str, Path], query: str, expected: set[str]) -> None:
    for directory in symbol_indexes.values():
        assert {h.block_id for h in search(query, directory, limit=100, session="symbols")} == expected


def test_a_query_of_many_terms_is_refused_at_once(golden_index: Path) -> None:
    """On CPU (0.15 s alone): 5 s of wall time ran out in a whole run at load average 15."""
    started = time.process_time()
    with pytest.raises(ValueError, match=f"at most {MAX_TERMS}"):
        search(" ".join(f"w{n}" for n in range(100_000)), golden_index)
    assert time.process_time() - started < 5


def test_a_long_pasted_phrase_is_found(tmp_path: Path, engine: str) -> None:
    code = " + ".join(f"value_{n}" for n in range(300))
    directory = tmp_path / "index"
    index(
        [session_of({"id": "long", "messages": [_message("m", {"id": "c", "type": "code", "text": code})]})],
        directory,
        engine=engine,
    )
    assert [h.block_id for h in search(f'"{code[40:-40]}"', directory)] == ["c"]


def test_time_bounds_of_any_size(golden_index: Path) -> None:
    def keys(hits: list[Any]) -> set[tuple[str, str, str]]:
        return {(h.session_id, h.message_id, h.block_id) for h in hits}

    everything = keys(search("config", golden_index, limit=100))
    assert keys(search("config", golden_index, limit=100, since=-(10**30), until=10**30)) == everything
    assert search("config", golden_index, since=10**30) == [] == search("config", golden_index, until=-(10**30))
    result = cli("search", "config", "--index", str(golden_index), "--since", str(10**30))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "no hits\n")


def test_hits_are_plain_data(tmp_path: Path, engine: str) -> None:
    """Control characters from data reach a ``Hit`` as they are (the terminal
    is the command line's business), and every field has its plain type."""
    hostile = "\x1b]52;c;cGF5bG9hZA==\x07 \x1b[2J zebra \x9b31m"
    directory = tmp_path / "index"
    index(
        [
            session_of(
                {
                    "id": "s\x1b[1m",
                    "title": hostile,
                    "messages": [_message("m", {"id": "p", "type": "prose", "markdown": hostile})],
                }
            )
        ],
        directory,
        engine=engine,
    )
    (hit,) = search("zebra", directory)
    assert hit.session_title == hostile and hit.session_id == "s\x1b[1m"
    types = {name: type(value) for name, value in hit.to_json().items()}
    assert types == {**dict.fromkeys(hit.to_json(), str), "created_at": int, "score": float}


# --- refused directories -----------------------------------------------------


def test_a_refused_directory_is_not_even_created(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(INPUT / "session.json", elsewhere / "s.json")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "sub").symlink_to(elsewhere)  # a folder read through a link: the index may not go in it
    result = cli("index", str(linked), "--index", str(elsewhere / "deep" / "index"))
    assert one_line_failure(result) and "a folder sessions are read from" in result.stderr
    # A caller's sessions may come from walking their file's folder (load(folder)): it counts as read.
    with pytest.raises(IndexFailure, match="a folder sessions are read from"):
        index(load(elsewhere), elsewhere / "new" / "index")
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["s.json"]


def test_an_empty_folder_read_through_a_link_takes_no_index(tmp_path: Path) -> None:
    """With no session file in the linked folder yet, the index would still be
    read back by the next walk of the source: refused, and nothing created."""
    source, elsewhere = tmp_path / "src", tmp_path / "elsewhere"
    source.mkdir()
    elsewhere.mkdir()
    shutil.copy(INPUT / "session.json", source / "s.json")
    (source / "link").symlink_to(elsewhere)
    result = cli("index", str(source), "--index", str(source / "link" / "idx"))
    assert one_line_failure(result), result.stderr
    assert f"inside {source} (through a link, {elsewhere.resolve()}), a folder sessions are read" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_file_read_through_a_link_leaves_its_folder_free(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(INPUT / "session.json", elsewhere / "s.json")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "s.json").symlink_to(elsewhere / "s.json")  # the file is read, its folder is not
    result = cli("index", str(linked), "--index", str(elsewhere / "index"))
    assert (result.returncode, result.stderr) == (0, "1 added, 0 updated, 0 unchanged\n")


def test_a_link_loop_among_the_sources_is_a_line_not_a_failed_job(tmp_path: Path) -> None:
    """Planning the job resolved each file's path, which raised on a loop of
    links (``Symlink loop from ...``) and stopped the job before any file."""
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(INPUT / "session.json", source / "a.json")
    (source / "b.json").symlink_to(source / "c.json")
    (source / "c.json").symlink_to(source / "b.json")
    for sources in ([str(source)], [str(source / "b.json"), str(source / "a.json")]):
        index_folder = tmp_path / f"index{len(sources)}"
        result = cli("index", *sources, "--index", str(index_folder))
        assert result.returncode == 1, result.stderr
        assert f"{source / 'b.json'}: no such file or directory" in result.stderr.splitlines()
        assert result.stderr.endswith("1 added, 0 updated, 0 unchanged\n"), result.stderr


def test_a_directory_of_other_files_gets_no_lock_file(tmp_path: Path) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"x")
    result = cli("index", str(INPUT), "--index", str(photos))
    assert one_line_failure(result) and "not a vis-export index" in result.stderr
    assert sorted(p.name for p in photos.iterdir()) == ["cat.jpg"]


# --- --prune and sources that fail to load -----------------------------------


def _two_sources(tmp_path: Path) -> Path:
    sources = tmp_path / "sources"
    sources.mkdir()
    base = json.loads((INPUT / "session.json").read_text())
    for name in ("a", "b"):
        base["messages"][0]["content"][0]["markdown"] = f"Only in {name}: zebra{name}"
        (sources / f"{name}.json").write_text(json.dumps({**base, "id": name}))
    return sources


def test_prune_keeps_the_sessions_of_a_source_that_failed_to_load(tmp_path: Path, engine: str) -> None:
    sources = _two_sources(tmp_path)
    directory = tmp_path / "index"
    command = ["index", str(sources), "--index", str(directory), "--engine", engine, "--prune"]
    assert cli(*command).returncode == 0
    (sources / "a.json").write_text("{broken")
    for _ in range(2):  # and again: the file is still known to hold its session
        result = cli(*command)
        assert result.returncode == 1
        assert [line.split(":")[0] for line in result.stderr.splitlines()] == [
            str(sources / "a.json"),
            str((sources / "a.json").resolve()),
            "0 added, 0 updated, 1 unchanged",
        ]
        assert "not read in full, so its sessions stay in the index" in result.stderr
        assert [h.session_id for h in search("zebraa", directory)] == ["a"]
    (sources / "a.json").unlink()
    assert cli(*command).stderr.strip() == "0 added, 0 updated, 1 unchanged, 1 removed"
    assert search("zebraa", directory) == [] and [h.session_id for h in search("zebrab", directory)] == ["b"]


def _missing(source: Path) -> None:
    source.rename(source.with_name("elsewhere"))


def _emptied(source: Path) -> None:  # an unmounted share: its mount point stays
    moved = source.with_name("elsewhere")
    moved.mkdir()
    for path in source.iterdir():
        path.rename(moved / path.name)


def _a_file_now(source: Path) -> None:
    _missing(source)
    source.write_text("{not a folder")


UNREADABLE: dict[str, Callable[[Path], None]] = {"missing": _missing, "empty": _emptied, "a file": _a_file_now}


@pytest.mark.parametrize("damage", list(UNREADABLE))
def test_a_named_source_that_cannot_be_read_prunes_nothing(tmp_path: Path, engine: str, damage: str) -> None:
    """A folder named as a source that is gone, empty or no folder now (an
    unmounted share, a typo) says nothing of what it held: nothing is pruned,
    from it or from the other sources, and the other sources are still indexed."""
    from vis_export.jobs.indexing import index_sources
    from vis_export.reporting import Lines

    share = _two_sources(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (share / "b.json").rename(other / "b.json")
    directory = tmp_path / "index"
    assert str(index_sources([share, other], directory, engine=engine, prune=True)) == "2 added, 0 updated, 0 unchanged"
    UNREADABLE[damage](share)
    lines = Lines()
    counts = index_sources([share, other], directory, engine=engine, prune=True, report=lines)
    assert (counts.removed, counts.unchanged) == (0, 1)
    assert lines.problems and all(line.startswith(str(share)) for line in lines.problems)
    assert f"{share}: could not be read, so nothing is pruned" in lines.warnings
    assert [h.session_id for h in search("zebraa", directory)] == ["a"]
    assert [h.session_id for h in search("zebrab", directory)] == ["b"]


def test_a_named_file_that_cannot_be_read_prunes_nothing(tmp_path: Path, engine: str) -> None:
    sources = _two_sources(tmp_path)
    directory = tmp_path / "index"
    named = [str(sources / "a.json"), str(sources / "b.json")]
    command = ["index", *named, "--index", str(directory), "--engine", engine, "--prune"]
    assert cli(*command).returncode == 0
    (sources / "a.json").unlink()
    result = cli(*command)
    assert result.returncode == 1
    assert f"{sources / 'a.json'}: could not be read, so nothing is pruned" in result.stderr
    assert result.stderr.splitlines()[-1] == "0 added, 0 updated, 1 unchanged"
    assert [h.session_id for h in search("zebraa", directory)] == ["a"]
    # Named no more, its session goes.
    assert cli(*command[:1], named[1], *command[3:]).stderr.strip() == "0 added, 0 updated, 1 unchanged, 1 removed"


def test_prune_with_an_unreadable_standard_input_prunes_nothing(tmp_path: Path) -> None:
    sources = _two_sources(tmp_path)
    directory = tmp_path / "index"
    assert cli("index", str(sources), "--index", str(directory)).returncode == 0
    result = cli("index", str(sources / "b.json"), "-", "--index", str(directory), "--prune", stdin="{broken")
    assert result.returncode == 1 and "<stdin>: not read in full, so nothing is pruned" in result.stderr
    assert [h.session_id for h in search("zebraa", directory)] == ["a"]
