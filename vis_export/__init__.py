"""vis-export: turn stored Vis agent conversations into text, Markdown, HTML, PDF,
JSON and a search index.

Importing the package is cheap: the API is loaded on first use (PEP 562), so a
copy button that calls one function pays only for what that function needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "load": "vis_export.api",
    "read": "vis_export.api",
    "validate": "vis_export.api",
    "to_json": "vis_export.api",
    "to_text": "vis_export.formats.text",
    "to_markdown": "vis_export.formats.markdown",
    "clipboard": "vis_export.clipboard",
    "to_html": "vis_export.formats.html",
    "to_pdf": "vis_export.formats.pdf",
    "index": "vis_export.search",
    "search": "vis_export.search",
    "Session": "vis_export.model",
    "Message": "vis_export.model",
    "Block": "vis_export.model",
    "Problem": "vis_export.problems",
    "InvalidInput": "vis_export.problems",
}

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:
    from vis_export.api import load, read, to_json, validate
    from vis_export.clipboard import clipboard
    from vis_export.formats.html import to_html
    from vis_export.formats.markdown import to_markdown
    from vis_export.formats.pdf import to_pdf
    from vis_export.search import index, search
    from vis_export.formats.text import to_text
    from vis_export.model import Block, Message, Session
    from vis_export.problems import InvalidInput, Problem


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vis_export' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
