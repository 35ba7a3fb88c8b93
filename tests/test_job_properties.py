"""Properties of the pieces a job on Dask is made of, over generated input.

A file rendered in memory (``rendered``, what a local cluster's job keeps for
a name) is the file ``export`` writes, byte for byte (R7), and shows no private
reasoning unless authorised (R2). The units a job sends out hold every part
of every source exactly once, in source order (R6: nothing is lost), in
batches that shrink towards the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import example, given, strategies as st
from sessions import session_of
from strategies import PRIVATE_CANARY, session_documents

from vis_export.exporting import export, rendered
from vis_export.formats.options import ExportOptions
from vis_export.sources import parts


@given(session_documents(), st.sampled_from(["markdown", "text", "html", "json"]))
def test_a_file_made_in_memory_is_the_file_written(document: dict[str, Any], to: str) -> None:
    import tempfile

    session = session_of(document)
    with tempfile.TemporaryDirectory() as folder:
        for reasoning in ("none", "visible", "all"):
            options = ExportOptions(reasoning=reasoning)
            made = rendered(session, to, options)
            assert isinstance(made, bytes)
            assert export(session, Path(folder) / "out", to, options) is None
            assert made == (Path(folder) / "out").read_bytes()
            if reasoning != "all":
                assert PRIVATE_CANARY.encode() not in made


SMALL = 100  # bytes: the files' own threshold (1 MB) in miniature


@given(st.lists(st.sampled_from([10, 10, 10, 200]), max_size=150), st.integers(min_value=1, max_value=8))
@example([10, 200, 10, 10, 10], 1)  # a batch cut short by a large file is smaller than the next
@example([10] * 40, 1)
def test_units_hold_every_file_once_in_order_in_batches_that_shrink(sizes: list[int], workers: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder, mock.patch.object(parts, "SMALL_FILE", SMALL):
        files = [(f"f{n:03}.json", Path(folder) / f"f{n:03}.json") for n in range(len(sizes))]
        for (_, path), size in zip(files, sizes, strict=True):
            path.write_bytes(b"x" * size)
        plan = parts.units(files, workers)
        assert [part.name for unit in plan for part in unit] == [name for name, _ in files]
        small = [all(parts.file_size(part.path) < SMALL for part in unit) for unit in plan]
        # a batch cut short by a large file, or by the end, may be smaller than the next; the others never grow
        full = [len(unit) for k, unit in enumerate(plan) if small[k] and k + 1 < len(plan) and small[k + 1]]
        assert full == sorted(full, reverse=True)
        assert all(len(unit) <= parts.MOST_PER_BATCH for unit in plan)
        assert all(len(unit) == 1 for k, unit in enumerate(plan) if not small[k])
