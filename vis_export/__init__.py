"""vis-export: turn stored Vis agent conversations into text, Markdown, HTML, PDF,
JSON and a search index.

Importing the package is cheap: the API is loaded on first use (PEP 562), so a
copy button that calls one function pays only for what that function needs.
No module of the package is named like a public name (``copying`` holds
``clipboard``, ``searchindex`` holds ``search``, ``jobs`` holds ``index``): importing a
submodule binds its name on the package, and would hide the function.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from vis_export.version import __version__

_LAZY = {
    "load": "vis_export.api",
    "read": "vis_export.api",
    "validate": "vis_export.api",
    "to_json": "vis_export.api",
    "to_text": "vis_export.formats.text",
    "to_markdown": "vis_export.formats.markdown",
    "clipboard": "vis_export.copying",
    "to_html": "vis_export.formats.html",
    "to_pdf": "vis_export.formats.pdf",
    "to_provider": "vis_export.formats.provider",
    "index": "vis_export.jobs.indexing",
    "index_sources": "vis_export.jobs.indexing",
    "convert": "vis_export.jobs.conversion",
    "search": "vis_export.searchindex",
    "Session": "vis_export.model",
    "Message": "vis_export.model",
    "Block": "vis_export.model",
    "Problem": "vis_export.problems",
    "InvalidInput": "vis_export.problems",
    "VisExportError": "vis_export.errors",
    "ExportOptions": "vis_export.formats.options",
}

__all__ = [
    "Block",
    "ExportOptions",
    "InvalidInput",
    "Message",
    "Problem",
    "Session",
    "VisExportError",
    "__version__",
    "clipboard",
    "convert",
    "index",
    "index_sources",
    "load",
    "read",
    "search",
    "to_html",
    "to_json",
    "to_markdown",
    "to_pdf",
    "to_provider",
    "to_text",
    "validate",
]

if TYPE_CHECKING:
    from vis_export.api import load, read, to_json, validate
    from vis_export.copying import clipboard
    from vis_export.errors import VisExportError
    from vis_export.formats.html import to_html
    from vis_export.formats.markdown import to_markdown
    from vis_export.formats.options import ExportOptions
    from vis_export.formats.pdf import to_pdf
    from vis_export.formats.provider import to_provider
    from vis_export.formats.text import to_text
    from vis_export.jobs.conversion import convert
    from vis_export.jobs.indexing import index, index_sources
    from vis_export.model import Block, Message, Session
    from vis_export.problems import InvalidInput, Problem
    from vis_export.searchindex import search


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vis_export' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
