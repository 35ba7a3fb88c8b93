"""Optional capabilities and the extras that install them.

PDF (WeasyPrint, pypdf), the search index (tantivy, Whoosh), its PostgreSQL
engine (psycopg), the terminal drawing of ``show`` (rich, mdit-py-plugins), the reading room
of ``serve`` (Starlette, uvicorn), the Typst PDF engine (typst) and jobs on a
Dask cluster (distributed) and redaction (detect-secrets, RE2) are extras: a user
who copies and converts text needs none of them. When one is missing, the
feature that needs it says which extra to install, in one line, instead of
failing with an ImportError deep inside.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

from vis_export.errors import VisExportError

# The top-level module each optional library provides, and its extra.
EXTRAS = {
    "weasyprint": "pdf",
    "pypdf": "pdf",
    "tantivy": "search",
    "whoosh": "search",
    "psycopg": "postgresql",
    "rich": "show",
    "mdit_py_plugins": "show",
    "starlette": "serve",
    "uvicorn": "serve",
    "typst": "typst",
    "distributed": "dask",
    "detect_secrets": "redact",
    "re2": "redact",
}


class MissingExtra(VisExportError, ImportError):
    """An optional library is not installed; the message names the extra."""

    def line(self) -> str:
        return f"vis-export: error: {self}"


def require(module: str, feature: str) -> ModuleType:
    """``module`` imported, or ``MissingExtra`` naming the extra ``feature`` needs."""
    try:
        return import_module(module)
    except ImportError:
        raise _missing(module, feature) from None


def require_installed(module: str, feature: str) -> None:
    """``require`` without importing ``module`` yet: its import is slow and
    happens later, or in another thread, where its absence would come too late."""
    if find_spec(module) is None:
        raise _missing(module, feature)


def _missing(module: str, feature: str) -> MissingExtra:
    extra = EXTRAS[module.split(".")[0]]
    return MissingExtra(
        f"{feature} needs the {extra!r} extra, which is not installed: pip install 'vis-export[{extra}]'"
    )
