"""``index`` over source files and folders: one job, run in this process or
on a Dask cluster.

The sources are walked once into batches (a file each, ``searchindex.job``),
their problems reported in source order, and the index job (``searchindex.job``:
hashes, the manifest, pruning) runs each batch here, or hands them to the
workers of a cluster (``distributed.indexing``), with the same counts and lines.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from vis_export.model import Session
from vis_export.searchindex.documents import IndexReasoning
from vis_export.searchindex.job import IndexCounts, IndexSettings, index_sessions, source_batches

if TYPE_CHECKING:
    from vis_export.redaction import Redaction
    from vis_export.reporting import Report


def index_sources(
    sources: Iterable[str | os.PathLike[str]],
    location: str | os.PathLike[str],
    engine: str | None = None,
    reasoning: IndexReasoning = "none",
    prune: bool = False,
    wait: float = 0.0,
    threads: int = 0,
    lenient: bool = False,
    origin: str | None = None,
    dask: str | None = None,
    report: Report | None = None,
    progress: Callable[[int], Callable[[], None]] | None = None,
    redact: Redaction | bool | None = None,
) -> IndexCounts:
    """``vis-export index``: the sessions of ``sources`` (files, folders) into the
    index at ``location``, each source file skipped when the index has it as it
    is; problems and warnings go to ``report`` (by default kept in a ``Lines``).
    ``dask`` (a scheduler's address or ``local[:N]``) has the workers of a Dask
    cluster read the sources and make the documents, with the same outcome.
    ``progress(total)`` returns what is called as each file (or, with ``dask``,
    each task) is done. ``redact``: index only the redacted view (``True`` for the
    built-in rules, or a ``Redaction``; R8), as ``--redact`` does."""
    from vis_export.reporting import redacting
    from vis_export.sources.result import report_lines

    settings = IndexSettings.given(locals())
    report = redacting(report, settings.redaction)
    names = [os.fspath(source) for source in sources]
    start = progress or (lambda total: lambda: None)
    tick = [lambda: None]

    def reported(results: list[Any]) -> list[Session]:
        for result in results:
            for fails, line in report_lines(result.source, result.session is not None, result.problems):
                (report.problem if fails else report.warning)(line)
        return [result.session for result in results if result.session is not None]

    batches = source_batches(names, lenient, reported, lambda: tick[0]())
    on_dask = None
    if dask is None:
        tick[0] = start(len(batches))
    else:
        from vis_export.distributed.indexing import Dask

        on_dask = Dask(dask, lenient, report, start)
    return index_sessions(batches, location, settings, warn=report.warning, elsewhere=on_dask)
