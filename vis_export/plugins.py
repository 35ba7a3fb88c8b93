"""Formats and search engines that other packages add, through entry points
(as nbconvert's exporters are found).

A package declares, in its own ``pyproject.toml``::

    [project.entry-points."vis_export.formats"]
    slides = "my_package:slides_format"      # a callable returning a vis_export.formats.Format

    [project.entry-points."vis_export.engines"]
    lucene = "my_package:LuceneEngine"       # called as (directory, writable, threads)

and ``--to slides`` or ``--engine lucene`` work once it is installed. A plugin
cannot replace a built-in name. ``vis_export.searchindex.conformance`` is the
suite an engine must pass, importable from a plugin's own tests.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

FORMATS_GROUP = "vis_export.formats"
ENGINES_GROUP = "vis_export.engines"


@cache
def plugins(group: str, builtin: tuple[str, ...]) -> dict[str, EntryPoint]:
    """The installed entry points of ``group`` by name, built-in names left out."""
    return {point.name: point for point in _installed()[group] if point.name not in builtin}


@cache
def _installed() -> dict[str, list[EntryPoint]]:
    """The installed entry points of our groups, found at once: each search
    reads the metadata of every installed package, and the command line asks
    for both groups. (``importlib.metadata`` is imported here, when they are
    asked for: a command that takes no plugin's name does not load it.)"""
    from importlib.metadata import entry_points

    found = entry_points()
    return {group: list(found.select(group=group)) for group in (FORMATS_GROUP, ENGINES_GROUP)}
