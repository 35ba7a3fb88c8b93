"""The Whoosh engine's own ways to its speed keep what Whoosh itself would
index and rank: the words its analyser finds, BM25F's scores, and an index of
an earlier layout refused in one line rather than merged into a broken one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT, examples
from hypothesis import example, given, settings, strategies as st

from vis_export import load
from vis_export.jobs.indexing import index
from vis_export.model import Session
from vis_export.searchindex import IndexFailure, search
from vis_export.searchindex.directory import ENGINE_DATA
from vis_export.searchindex.engines import whoosh_gathered
from vis_export.searchindex.engines.whoosh_engine import (
    LAYOUT_FILE,
    WORDS,
    WhooshEngine,
    _lengths,
    _query,
    analysed,
    q,
    restricted,
)
from vis_export.searchindex.engines.whoosh_scoring import _union, top_hits

# Words of every kind the analysis treats apart: letters of other scripts and
# cases (some lower to more characters), digits, underscores, Chinese (left out),
# and lengths about the longest indexed word.
_PIECES = st.sampled_from(
    ["a", "Parse", "PARSE", "config", "İ", "ǅ", "ß", "9", "_", "設定", "x" * 39, "y" * 40, "é", "Ⅻ"]
)
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=30).map(" ".join)


@given(_TEXT)
@example("Naïve naïve NAÏVE parse Parse")  # spellings of one word, in a text not ASCII
def test_the_indexed_words_are_whooshs_analysers(text: str) -> None:
    assert analysed(text) == Counter(token.text for token in WORDS(text))


@given(st.text())
def test_an_id_fields_posting_is_whooshs(value: str) -> None:
    from whoosh.fields import ID

    from vis_export.searchindex.engines.whoosh_engine import _Id

    try:
        expected = list(ID(stored=True).index(value))
    except UnicodeEncodeError:  # a lone surrogate: neither can write it
        with pytest.raises(UnicodeEncodeError):
            list(_Id(stored=True).index(value))
        return
    assert list(_Id(stored=True).index(value)) == expected


def test_scores_are_whooshs_bm25f(tmp_path: Path) -> None:
    """The engine's scoring reads lengths its own way: the same scores, in the same order."""
    from whoosh.scoring import BM25F

    index(list(load(INPUT)), tmp_path, engine="whoosh", reasoning="visible")
    engine = WhooshEngine(tmp_path / ENGINE_DATA, writable=False)
    with restricted():
        ours = engine._searcher()
        theirs = engine.index.searcher(weighting=BM25F())
        for word in ("the", "config", "test", "parse"):
            query = q.Or([q.Term("words", word), q.Term("terms", word)])
            found = [(hit.score, hit["key"]) for hit in ours.search(query, limit=None)]
            assert found == [(hit.score, hit["key"]) for hit in theirs.search(query, limit=None)]
            assert found, word
        theirs.close()
    engine.close()


def test_an_index_of_an_earlier_layout_is_refused(tmp_path: Path) -> None:
    sessions = list(load(INPUT))
    index(sessions[:1], tmp_path / "old", engine="whoosh")
    (tmp_path / "old" / ENGINE_DATA / LAYOUT_FILE).unlink()  # as every vis-export before layouts wrote it
    shutil.copytree(tmp_path / "old", tmp_path / "copy")  # a folder no search has opened yet
    attempts = {"old": lambda: index(sessions, tmp_path / "old"), "copy": lambda: search("the", tmp_path / "copy")}
    for folder, attempt in attempts.items():
        with pytest.raises(IndexFailure) as failure:
            attempt()
        assert str(failure.value) == (  # one line, as the engine says it
            f"{tmp_path / folder}: this Whoosh index was written by an earlier vis-export, in another layout; "
            "rebuild it in a new directory"
        )


def _many_blocks() -> Session:
    """A session of 400 blocks of 40 words of 70: postings of many blocks each."""
    from vis_export.sources.messages import session_document

    words = "parse config server request handler cache index query deploy tests".split()
    blocks = [
        {"id": f"b{n}", "type": "prose", "markdown": " ".join(words[(n * k) % 10] + str(k % 7) for k in range(40))}
        for n in range(400)
    ]
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": blocks}
    session = session_document({"id": "s", "messages": [message]}, "", "s").session
    assert session is not None
    return session


def test_a_job_larger_than_the_writers_memory_finds_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Postings beyond ``limitmb`` are sorted in runs on disk, read back through
    the restricted unpickler (empty bytes among them: the language of prose)."""
    from vis_export.searchindex.engines import whoosh_engine

    session = _many_blocks()
    index([session], tmp_path / "memory", engine="whoosh")
    monkeypatch.setitem(whoosh_engine.WRITER, "limitmb", 1)  # 6,000 postings of 16,000 or so
    index([session], tmp_path / "runs", engine="whoosh")
    for query in ("parse3", "config1 server2", "deploy0"):
        found = [(hit.block_id, hit.score) for hit in search(query, tmp_path / "runs", limit=50)]
        assert found == [(hit.block_id, hit.score) for hit in search(query, tmp_path / "memory", limit=50)]
        assert found, query


def test_postings_written_in_larger_blocks_find_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query reads each block of its terms whole: the index's blocks are of
    ``POSTING_BLOCK`` postings (fewer to unpickle than Whoosh's 128), and its hits
    and scores are those of an index in Whoosh's blocks."""
    from vis_export.searchindex.engines import whoosh_engine

    session = _many_blocks()
    index([session], tmp_path / "large", engine="whoosh")
    monkeypatch.setattr(whoosh_engine, "POSTING_BLOCK", 128)
    index([session], tmp_path / "whooshs", engine="whoosh")
    engine = WhooshEngine(tmp_path / "large" / ENGINE_DATA, writable=False)
    with restricted():
        segments = [reader.segment() for reader, _ in engine._searcher().reader().leaf_readers()]
    assert [segment.codec()._blocklimit for segment in segments] == [1024]
    engine.close()
    for query in ("parse3", "config1 server2", "deploy0", "query4 cache5"):
        found = [(hit.block_id, hit.score) for hit in search(query, tmp_path / "large", limit=50)]
        assert found == [(hit.block_id, hit.score) for hit in search(query, tmp_path / "whooshs", limit=50)]
        assert found, query


@given(st.lists(st.lists(st.integers(0, 40), unique=True).map(sorted), min_size=1, max_size=4))
def test_the_documents_of_a_union_are_numpys_union(parts: list[list[int]]) -> None:
    """A union's documents, found by a sort rather than ``np.union1d``'s hashing: the same array."""
    import numpy as np

    arrays = [np.array(part, np.int64) for part in parts]
    expected = arrays[0]
    for array in arrays[1:]:
        expected = np.union1d(expected, array)
    found = _union(arrays)
    assert found.dtype == expected.dtype and found.tolist() == expected.tolist()


_VOCABULARY = ["parse", "config", "parse_config", "parseConfig", "server", "request", "cache", "the", "tests"]
_LONE = "lonely"  # a word and a session of one document


def _whoosh_with_deletions(folder: Path) -> WhooshEngine:
    """An index of three commits (segments, unless Whoosh merges them) where
    documents were deleted after they were written, as a rerun leaves one."""
    from vis_export.searchindex.documents import code_terms

    engine = WhooshEngine(folder, writable=True)
    for commit in range(3):
        documents = []
        for n in range(60):
            text = " ".join(_VOCABULARY[(n * k + commit) % len(_VOCABULARY)] for k in range(1 + n % 13))
            text += f" {_LONE}" if (commit, n) == (2, 7) else ""
            key = f"s{commit}\x1fm\x1fb{n}"
            documents.append(
                {"key": key, "session_id": f"s{commit}", "session_title": "", "message_id": "m", "block_id": f"b{n}"}
                | {"role": ("user", "assistant")[n % 2], "block_type": ("prose", "code")[n % 3 == 0], "language": ""}
                | {"created_at": n, "text": text, "terms": code_terms(text)}
            )
        documents[7]["session_id"] = _LONE if commit == 2 else documents[7]["session_id"]
        if commit == 2:
            engine.delete_session("s1")
        engine.add(documents)
        engine.commit()
    return engine


@given(
    st.lists(st.sampled_from([*_VOCABULARY, _LONE]), max_size=3),  # none: every document (a phrase's candidates)
    st.sampled_from([{}, {"role": "user"}, {"block_type": "code"}, {"session_id": _LONE}]),
    st.integers(1, 200),
)
def test_the_top_hits_are_whooshs_exact_ranking(
    tmp_path_factory: pytest.TempPathFactory, words: list[str], filters: dict[str, str], limit: int
) -> None:
    """Scored a block at a time, the hits are Whoosh's scores of every match,
    best first and the lower document number of equals: its whole ranking cut
    at ``limit`` (its top collector's skipping can miss a hit, which this does not)."""
    folder = tmp_path_factory.getbasetemp() / "whoosh-deletions"
    engine = WhooshEngine(folder, writable=False) if folder.exists() else _whoosh_with_deletions(folder)
    with restricted():
        searcher = engine._searcher()
        assert searcher.reader().has_deletions()
        query = _query(words, filters, None, None)
        found = top_hits(searcher, query, limit, _lengths)
        every = sorted(
            ((hit.score, hit.docnum) for hit in searcher.search(query, limit=None)), key=lambda h: (-h[0], h[1])
        )
        assert found == every[:limit]
    engine.close()


def test_an_empty_index_is_searched_again_and_then_filled(tmp_path: Path) -> None:
    """Whoosh cannot refresh an empty index's reader (it has no segments): the
    engine's second search of an empty index (``serve``, the API in one process)
    said the index was damaged. It finds nothing each time, then what is added."""
    engine = WhooshEngine(tmp_path, writable=True)
    engine.commit()
    assert engine.count() == 0
    assert engine.search(["parse"], {}, None, None, 5, 0) == []
    assert engine.search([], {}, None, None, 5, 0) == []
    engine.add([_document("s", 0, "parse the config")])
    engine.commit()
    assert [doc["key"] for _, doc in engine.search(["parse"], {}, None, None, 5, 0)] == ["s\x1fm\x1fb0"]
    engine.close()


def test_a_session_deleted_is_not_found_by_the_kept_searcher(tmp_path: Path) -> None:
    """Whoosh's ``refresh`` keeps the reader of a segment it knew, with the deletions
    it had: after a commit that only deletes (a session pruned), the engine's kept
    searcher still found the session's documents."""
    engine = WhooshEngine(tmp_path, writable=True)
    engine.add([_document("gone", 0, "parse the config"), _document("kept", 1, "parse it")])
    engine.commit()
    assert len(engine.search(["parse"], {}, None, None, 5, 0)) == 2
    engine.delete_session("gone")
    engine.commit()
    assert [doc["session_id"] for _, doc in engine.search(["parse"], {}, None, None, 5, 0)] == ["kept"]
    assert engine.count() == 1
    engine.close()


def _document(session: str, n: int, text: str) -> dict[str, Any]:
    from vis_export.searchindex.documents import code_terms

    return (
        {"key": f"{session}\x1fm\x1fb{n}", "session_id": session, "session_title": "", "message_id": "m"}
        | {"block_id": f"b{n}", "role": "user", "block_type": "prose", "language": "", "created_at": n, "text": text}
        | {"terms": code_terms(text)}
    )


def test_a_search_finds_the_best_hits(tmp_path: Path) -> None:
    """Whoosh's top collector skips documents by bounds on their scores that
    are not bounds (its lengths are stored a byte each, rounded): a search of
    this index for the best 3 missed a better hit in a quarter of these
    queries. The engine's hits are the best of Whoosh's scores of every match."""
    from itertools import combinations

    engine = _whoosh_with_deletions(tmp_path)
    with restricted():
        searcher = engine._searcher()
        for words in [[], *([word] for word in [*_VOCABULARY, _LONE]), *combinations(_VOCABULARY, 2)]:
            for filters in ({}, {"role": "user"}, {"block_type": "code"}, {"session_id": _LONE}):
                every = searcher.search(_query(list(words), filters, None, None), limit=None)
                best = sorted(((hit.score, hit["key"], hit.docnum) for hit in every), key=lambda h: (-h[0], h[2]))
                found = engine.search(list(words), filters, None, None, 3, 0)
                assert [(score, doc["key"]) for score, doc in found] == [hit[:2] for hit in best[:3]], (words, filters)
    engine.close()


def _written(folder: Path) -> list[Any]:
    """Every term's statistics and each of its blocks as written: what a
    segment's postings hold, whatever its files are named."""
    engine = WhooshEngine(folder, writable=False)
    found: list[Any] = []
    with restricted():
        reader = engine._searcher().reader()
        for field, text in reader.all_terms():
            info = reader.term_info(field, text)
            statistics = ("weight", "doc_frequency", "min_length", "max_length", "max_weight", "min_id", "max_id")
            postings, blocks = reader.postings(field, text), []
            while postings.is_active():
                postings._read_data()
                header = (postings._blocklength, postings._maxid, postings._maxweight, postings._compression)
                blocks.append((*header, postings._minlength, postings._maxlength, postings._data))
                postings._next_block()
            found.append((field, text, *(getattr(info, name)() for name in statistics), blocks))
    engine.close()
    return found


@pytest.mark.parametrize("gathered", [True, False])
def test_the_postings_written_are_whooshs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gathered: bool) -> None:
    """The writer's postings, gathered per term as documents are added or (past
    its memory) pooled and sorted, are written a block at a time as Whoosh's
    ``add_document``, pool, ``add_postings`` and ``add_posting`` write them,
    and its postings writer's small ids and weights are Whoosh's."""
    from whoosh.codec.whoosh3 import W3PostingsWriter

    from vis_export.searchindex.engines import whoosh_engine

    monkeypatch.setattr(whoosh_engine, "POSTING_BLOCK", 128)  # Whoosh's: postings of several blocks
    if not gathered:
        monkeypatch.setattr(whoosh_gathered, "POSTING_BYTES", 1 << 30)  # handed to the pool at the first document
    sessions = [*load(INPUT), _many_blocks()]
    index(sessions, tmp_path / "ours", engine="whoosh", reasoning="visible")
    monkeypatch.setattr(whoosh_engine._Writer, "add", lambda writer, document: writer.add_document(**document))
    monkeypatch.setattr(whoosh_engine, "_add_postings", lambda writer, *args: type(writer).add_postings(writer, *args))
    monkeypatch.setattr(whoosh_engine, "_PostingsWriter", W3PostingsWriter)  # and Whoosh's own postings writer
    index(sessions, tmp_path / "whooshs", engine="whoosh", reasoning="visible")
    ours = _written(tmp_path / "ours" / ENGINE_DATA)
    assert max(len(term[-1]) for term in ours) > 2  # postings of several blocks
    assert ours == _written(tmp_path / "whooshs" / ENGINE_DATA)


def test_an_index_job_does_not_import_numpy(tmp_path: Path) -> None:
    """NumPy scores a search's hits; an index job does without it (its import
    was 0.11 CPU-s of a job of 3.2): the postings are put in order by C loops."""
    script = (
        "import sys\nfrom vis_export.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'numpy')[:1])"
    )
    command = [sys.executable, "-c", script, "index", str(INPUT), "--index", str(tmp_path / "i"), "--engine", "whoosh"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert "added" in result.stderr and result.stdout == "[]\n"
    assert search("config", tmp_path / "i")  # and a search, which imports it, finds


def test_the_postings_gathered_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Postings gathered per term take at most half of the writer's ``limitmb``
    (Whoosh's pool, which sorts runs on disk past it, takes them beyond)."""
    from vis_export.searchindex.engines import whoosh_engine

    sizes: list[int] = []
    finish = whoosh_gathered.Gathered.finish

    def finished(gathered: whoosh_gathered.Gathered, docnum: int) -> None:
        finish(gathered, docnum)
        sizes.append(gathered.size())

    monkeypatch.setattr(whoosh_gathered.Gathered, "finish", finished)
    monkeypatch.setitem(whoosh_engine.WRITER, "limitmb", 1)
    session = _many_blocks()
    index([session], tmp_path / "runs", engine="whoosh")
    half = 1024 * 1024 // 2
    largest = max(b - a for a, b in zip([0, *sizes], sizes, strict=False))  # a document's postings
    assert half < max(sizes) <= half + largest and len(sizes) < len(session.messages[0].blocks)
    sizes.clear()
    monkeypatch.setitem(whoosh_engine.WRITER, "limitmb", 256)
    index([session], tmp_path / "memory", engine="whoosh")
    assert len(sizes) == len(session.messages[0].blocks)  # every document's gathered


def _stored(folder: Path) -> list[Any]:
    """Each document's stored fields and field lengths, and each field's total length."""
    engine = WhooshEngine(folder, writable=False)
    with restricted():
        reader = engine._searcher().reader()
        scored = ("words", "terms")
        found = [
            (reader.stored_fields(n), [reader.doc_field_length(n, name) for name in scored])
            for n in range(reader.doc_count_all())
        ]
        found.append([reader.field_length(name) for name in scored])
    engine.close()
    return found


def test_the_documents_written_are_whooshs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's own ``add`` pools the postings and writes the fields and
    lengths that Whoosh's ``add_document`` does, in every script; a document
    with a field the schema lacks is Whoosh's to refuse."""
    from whoosh.fields import UnknownFieldError

    from vis_export.searchindex.engines import whoosh_engine

    sessions = [*load(INPUT), _many_blocks(), _unicode_session()]
    index(sessions, tmp_path / "ours", engine="whoosh", reasoning="visible")
    monkeypatch.setattr(whoosh_engine._Writer, "add", lambda writer, document: writer.add_document(**document))
    index(sessions, tmp_path / "whooshs", engine="whoosh", reasoning="visible")
    ours, whooshs = tmp_path / "ours" / ENGINE_DATA, tmp_path / "whooshs" / ENGINE_DATA
    assert _written(ours) == _written(whooshs)
    assert _stored(ours) == _stored(whooshs)
    monkeypatch.undo()
    engine = WhooshEngine(tmp_path / "other", writable=True)
    with pytest.raises(UnknownFieldError):
        engine.add([{**_document("s", 1, "text"), "colour": "red"}])
    engine.close()


def test_lengths_measured_and_written_by_whoosh_in_one_segment_are_whooshs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lengths the writer measures are written in one piece before a
    document Whoosh writes itself (one without a language: not of the engine's
    own form), whose lengths and those after it Whoosh writes, and the blocks'
    lengths are Whoosh's, in a commit that merges an earlier segment too."""
    from vis_export.searchindex.engines import whoosh_engine

    texts = ["parse the config " * n for n in range(1, 40)] + ["", "a " * 300]
    batches = [
        [_document("s", n, text) for n, text in enumerate(texts)],
        [_document("t", n, text) for n, text in enumerate(texts[:5])],
        [{k: v for k, v in _document("t", 9, "config server").items() if k != "language"}],
        [_document("t", n, text) for n, text in enumerate(texts[5:], 10)],
    ]

    def written(folder: Path) -> tuple[list[Any], list[Any]]:
        engine = WhooshEngine(folder, writable=True)
        engine.add(batches[0])
        engine.commit()
        for batch in batches[1:]:
            engine.add(batch)
        with restricted():
            engine.writer.commit(optimize=True)  # the first segment merged into the second
        engine.writer = None
        engine.close()
        return _written(folder), _stored(folder)

    ours = written(tmp_path / "ours")
    monkeypatch.setattr(whoosh_engine._Writer, "add", lambda writer, document: writer.add_document(**document))
    assert ours == written(tmp_path / "whooshs")
    assert len(ours[1]) == 2 * len(texts) + 2  # every document, and the fields' totals


def _unicode_session() -> Session:
    """Words lowered to other lengths, long words about the limit, repeated words (frequencies above one)."""
    from vis_export.sources.messages import session_document

    texts = [
        "İstanbul " * 300 + "x" * 39 + " " + "İ" * 39,
        "Straße naïve Naïve ǅemal 東京 parse_config " * 3,
        "a " * 400,
    ]
    blocks = [{"id": f"b{n}", "type": "prose", "markdown": text} for n, text in enumerate(texts)]
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 2, "content": blocks}
    session = session_document({"id": "unicode", "messages": [message]}, "", "unicode").session
    assert session is not None
    return session


_UNICODE_WORDS = ["naïve", "東京", "données", "über", "Straße", "strasse", "İstanbul", "ǅemal", "parse_config", "the"]
_Commits = list[tuple[list[list[str]], list[int]]]
_COMMITS = st.lists(
    st.tuples(
        st.lists(st.lists(st.sampled_from(_UNICODE_WORDS), min_size=1, max_size=12), max_size=40),
        st.lists(st.integers(0, 4), max_size=2),  # sessions deleted before the commit's documents are added
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=examples(25), deadline=None)
@given(_COMMITS, st.lists(st.sampled_from(_UNICODE_WORDS), max_size=3), st.integers(1, 60))
def test_the_top_hits_are_whooshs_ranking_after_any_commits(
    tmp_path_factory: pytest.TempPathFactory,
    commits: list[tuple[list[list[str]], list[int]]],
    words: list[str],
    limit: int,
) -> None:
    """Over indexes of one to four commits (segments), with sessions deleted and written
    again between them, empty or of one document, in words of any script: the hits are
    Whoosh's ranking of every match, cut at ``limit``."""
    from timelimit import time_limit

    engine = WhooshEngine(tmp_path_factory.mktemp("whoosh-commits"), writable=True)
    with time_limit(30):
        n = 0
        for texts, deleted in commits:
            for session in deleted:
                engine.delete_session(f"s{session}")
            engine.add([_document(f"s{(n + k) % 5}", n + k, " ".join(text)) for k, text in enumerate(texts)])
            n += len(texts)
            engine.commit()
        with restricted():
            searcher = engine._searcher()
            query = _query(words, {}, None, None)
            found = top_hits(searcher, query, limit, _lengths)
            every = sorted(
                ((h.score, h.docnum) for h in searcher.search(query, limit=None)), key=lambda h: (-h[0], h[1])
            )
            assert found is None or found == every[:limit]
            assert [score for score, _ in engine.search(words, {}, None, None, limit, 0)] == [
                s for s, _ in every[:limit]
            ]
    engine.close()


def test_stored_fields_are_compressed_quickly_and_read_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document's stored fields are a zlib stream of a quicker level than
    Whoosh's own 3 (compressing them was a tenth of a job's CPU), near its size
    (level 0 doubled the index), and an index whose stored fields Whoosh
    compressed at level 3 (an index written before) reads the same fields."""
    from vis_export.searchindex.engines import whoosh_engine

    assert 0 < whoosh_engine.STORED_LEVEL < 3
    sessions = [*load(INPUT), _many_blocks()]
    index(sessions, tmp_path / "stored", engine="whoosh", reasoning="visible")
    monkeypatch.setattr(whoosh_engine, "STORED_LEVEL", 3)
    index(sessions, tmp_path / "compressed", engine="whoosh", reasoning="visible")

    def segment(name: str) -> bytes:
        return b"".join(path.read_bytes() for path in (tmp_path / name / ENGINE_DATA).glob("*.seg"))

    assert _stored(tmp_path / "stored" / ENGINE_DATA) == _stored(tmp_path / "compressed" / ENGINE_DATA)
    assert len(segment("compressed")) <= len(segment("stored")) <= 1.1 * len(segment("compressed"))


def test_a_document_whoosh_cannot_write_leaves_no_postings(tmp_path: Path) -> None:
    """A document refused mid-way (a lone surrogate in its session id, after
    its time's and role's terms were gathered; a text that is no string, after
    its terms were counted and measured) is not found, by any term, and
    leaves no length, and the documents around it are found."""
    engine = WhooshEngine(tmp_path / "refused", writable=True)
    engine.add([_document("s", 0, "parse the config")])
    with pytest.raises(UnicodeEncodeError):
        engine.add([{**_document("s", 1, "config lonely"), "session_id": "\ud800"}])
    with pytest.raises((AttributeError, TypeError)):  # no ``isascii``, no ``len``
        engine.add([{**_document("s", 1, "config lonely"), "terms": "parse_config lonely", "text": 5}])
    engine.add([_document("s", 2, "config again")])
    engine.commit()
    assert [doc["key"] for _, doc in engine.search(["config"], {}, None, None, 5, 0)] == [
        "s\x1fm\x1fb2",
        "s\x1fm\x1fb0",
    ]
    assert engine.search(["lonely"], {}, None, None, 5, 0) == []
    assert len(engine.search(["config"], {"role": "user"}, None, None, 5, 0)) == 2
    engine.close()
    engine = WhooshEngine(tmp_path / "written", writable=True)
    engine.add([_document("s", 0, "parse the config"), _document("s", 2, "config again")])
    engine.commit()
    engine.close()
    assert _stored(tmp_path / "refused") == _stored(tmp_path / "written")
