"""The search index serve keeps of its sources when none is given (``--index``).

It lives in a temporary folder for the life of the server and is updated by
the ordinary incremental job: a file whose size and modification time are
unchanged is not read again, a changed one is re-indexed, a session no
source holds any more is pruned. Private reasoning is never indexed; visible
reasoning is, unless the server's policy is ``none``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vis_export.jobs.index_job import NOT_PRUNED, Batch, IndexCounts, IndexSettings, index_sessions
from vis_export.policy import IndexReasoning, Reasoning, index_level
from vis_export.searchindex.directory import Placement
from vis_export.searchindex.guard import IndexFailure

if TYPE_CHECKING:
    from vis_export.redaction import Redaction


class IndexKeeper:
    def __init__(
        self, reasoning: Reasoning, warn: Callable[[str], None] | None = None, redaction: Redaction | None = None
    ):
        self.folder = tempfile.TemporaryDirectory(prefix="vis-export-serve-")
        self.directory = Path(self.folder.name) / "index"
        self.reasoning: IndexReasoning = index_level(reasoning)
        self.warn = warn
        self.redaction = redaction
        self.built = False

    def update(
        self, batches: Sequence[Batch], prune: bool = True, placement: Placement | None = None
    ) -> IndexCounts | None:
        """Index what changed (``prune``: ``batches`` are all the sources, and
        sessions none of them holds go); ``placement``: what the walk that
        found the batches found (``planned_batches``), so the check walks
        nothing. The first update (at start) raises ``IndexFailure``; a later
        one that fails is told and leaves the index as it was, so the pages
        stay current even when their search falls behind."""
        try:
            settings = IndexSettings(reasoning=self.reasoning, prune=prune, redaction=self.redaction)
            counts = index_sessions(batches, self.directory, settings, warn=self._warn, placement=placement)
        except IndexFailure as failure:
            if not self.built:
                raise
            if self.warn is not None:
                self.warn(f"vis-export: the search index was not updated: {failure}")
            return None
        self.built = True
        return counts

    def _warn(self, line: str) -> None:
        """A job's line, but for the note that a source it could not read kept it from
        pruning: the catalogue has said that the source cannot be read, and the
        index it keeps is serve's own."""
        if self.warn is not None and not line.endswith(NOT_PRUNED):
            self.warn(line)

    def close(self) -> None:
        self.folder.cleanup()
