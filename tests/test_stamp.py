"""A source's stamp, the one that index, ``serve`` and Dask workers take to
mean "unchanged", includes a Vis store's ``-wal``: the store's recent turns
live there, and its main file does not change while they are written."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import GOLDEN
from visstore import RECENT, build_store, insert

from vis_export.sources.parts import Part, read_part_kept

ROWS = json.loads((GOLDEN / "store" / "rows.json").read_text())
AN_HOUR_AGO = 3600


@contextmanager
def _turns_in_the_wal(store: Path, past: int) -> Iterator[None]:
    """The application, still running, writes two turns that stay in the store's
    ``-wal``: its main file keeps the size and the time it had."""
    writer = sqlite3.connect(store)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        insert(writer, RECENT)
        writer.commit()
        os.utime(store, ns=(past, past))
        assert Path(f"{store}-wal").stat().st_size > 0
        yield
    finally:
        writer.close()


def _main_messages(part: Part) -> int:
    main = next(r.session for r in read_part_kept(part, False) if r.session is not None and r.session.id == "soul_main")
    return len(main.messages)


def test_a_worker_reads_a_store_again_once_its_wal_grew(tmp_path: Path) -> None:
    """A Dask worker keeps the sessions of the files it read for its next
    tasks, however many jobs later (``parts.read_part_kept``): after the
    application wrote two messages to the store's ``-wal`` (the main file the
    same size and time as before), the worker still gave the old messages."""
    store = build_store(tmp_path / "vis.db", ROWS)
    past = os.stat(store).st_mtime_ns - AN_HOUR_AGO * 10**9
    os.utime(store, ns=(past, past))
    part = Part(str(store), str(store))
    before = _main_messages(part)
    with _turns_in_the_wal(store, past):
        assert _main_messages(part) == before + 2


def test_a_store_reached_by_a_link_is_read_again_once_its_wal_grew(tmp_path: Path) -> None:
    """SQLite keeps a store's ``-wal`` beside the file a link leads to, and the
    reader reads it there (the store's path resolved): a stamp that looked
    beside the link, where none is, said a store gathered into the sessions'
    folder by a link unchanged while its new turns were written, and a rerun
    left them out of the index (as ``serve``'s and a worker's caches did)."""
    from vis_export.jobs.indexing import index_sources
    from vis_export.sources.stamp import source_stamp

    (tmp_path / "elsewhere").mkdir()
    store = build_store(tmp_path / "elsewhere" / "vis.db", ROWS)
    past = os.stat(store).st_mtime_ns - AN_HOUR_AGO * 10**9
    os.utime(store, ns=(past, past))
    sources = tmp_path / "sessions"
    sources.mkdir()
    (sources / "vis.db").symlink_to(store)
    index = tmp_path / "index"
    assert " 0 updated" in str(index_sources([str(sources)], index))
    before = source_stamp(sources / "vis.db")
    with _turns_in_the_wal(store, past):
        assert source_stamp(sources / "vis.db") != before
        assert "0 added, 1 updated" in str(index_sources([str(sources)], index))
