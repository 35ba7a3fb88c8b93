"""Where the package's own files are, installed or in a source checkout."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def builtin_templates() -> Path:
    """The built-in templates: ``vis_export/templates`` when installed from a
    wheel; the checkout's top-level ``templates/`` in an editable install, where
    that folder exists only in the wheel's layout."""
    installed = Path(__file__).resolve().parent / "templates"
    if (installed / "document.html.j2").is_file():
        return installed
    return Path(__file__).resolve().parent.parent / "templates"
