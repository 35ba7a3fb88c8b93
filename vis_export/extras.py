"""Optional capabilities and the extras that install them.

PDF (WeasyPrint, pypdf), the search index (tantivy, Whoosh), its PostgreSQL
engine (psycopg) and jobs on a Dask cluster (distributed) are extras: a
user who copies and converts text needs neither. When one is missing, the
feature that needs it says which extra to install, in one line, instead of
failing with an ImportError deep inside.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

# The top-level module each optional library provides, and its extra.
EXTRAS = {"weasyprint": "pdf", "pypdf": "pdf", "tantivy": "search", "whoosh": "search", "psycopg": "postgresql", "distributed": "dask"}


class MissingExtra(ImportError):
    """An optional library is not installed; the message names the extra."""


def require(module: str, feature: str) -> ModuleType:
    """``module`` imported, or ``MissingExtra`` naming the extra ``feature`` needs."""
    try:
        return import_module(module)
    except ImportError:
        extra = EXTRAS[module.split(".")[0]]
        raise MissingExtra(
            f"{feature} needs the {extra!r} extra, which is not installed: pip install 'vis-export[{extra}]'"
        ) from None
