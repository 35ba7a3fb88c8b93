"""The one base of the failures vis-export expects and explains: each carries
the one line the command line prints for it (``line``), so the command line
catches this base once, not each module's own exception one by one."""

from __future__ import annotations


class VisExportError(Exception):
    """A failure that is one line for a person, not a bug: the command line
    prints ``line()`` and exits with ``status`` (1; 2 for a command asked for
    what cannot be done, as a usage error), with no traceback."""

    status = 1

    def line(self) -> str:
        return f"vis-export: {self}"
