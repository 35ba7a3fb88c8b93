"""Sphinx settings for the documentation site (``sphinx-build -W docs site``).

The pages are Markdown (MyST), readable on their own; the command-line reference
comes from click itself (sphinx-click) and the API reference from the docstrings
(autodoc), so neither can drift from the code.
"""

from __future__ import annotations

import re
from typing import Any

from vis_export import __version__

project = "vis-export"
author = "the vis-export authors"
copyright = "the vis-export authors"
version = release = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx_click"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["images/make.sh"]
myst_heading_anchors = 3  # links to a section of another page: [PostgreSQL](searching.md#postgresql)
myst_enable_extensions = ["deflist"]
smartquotes = False  # option names keep their two hyphens: --to, not an en dash
highlight_language = "none"

autodoc_typehints = "signature"
autodoc_member_order = "bysource"

html_theme = "furo"
html_title = f"vis-export {__version__}"
html_static_path: list[str] = []

_INLINE = re.compile(r"([\\*`|_])")


def _plain(line: str) -> str:
    """Click help is plain text: nothing in it may become reStructuredText markup."""
    return _INLINE.sub(r"\\\1", line)


def _click_help_as_written(app: Any, ctx: Any, lines: list[str]) -> None:
    r"""A command's help as ``--help`` shows it: prose as text, and each ``\b``
    paragraph (sphinx-click makes it a line block) as a shell example block."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        if not lines[index].startswith("| "):
            out.append(_plain(lines[index]))
            index += 1
            continue
        block: list[str] = []
        while index < len(lines) and lines[index].startswith("| "):
            block.append(lines[index][2:])
            index += 1
        if not block[0].startswith(" "):
            out += [_plain(block.pop(0)), ""]
        out += [".. code-block:: sh", ""] + ["    " + line.strip() for line in block] + [""]
    lines[:] = out


def setup(app: Any) -> None:
    from pygments.lexers.data import JsonLexer

    app.add_lexer("jsonc", JsonLexer)  # JSON with comments, as GitHub names it; Pygments' JSON lexer reads them
    app.connect("sphinx-click-process-description", _click_help_as_written)
