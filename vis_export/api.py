"""The functions ``import vis_export`` offers; the CLI is a thin layer over these."""

from __future__ import annotations

import os
from typing import Any

from vis_export.contract import check_message, check_session
from vis_export.copying import clipboard
from vis_export.formats.json import to_json
from vis_export.formats.markdown import to_markdown
from vis_export.formats.text import to_text
from vis_export.model import Session
from vis_export.problems import Problem
from vis_export.sources import load, read

__all__ = ["clipboard", "load", "read", "to_json", "to_markdown", "to_text", "validate"]


def validate(obj: Any) -> list[Problem]:
    """Every problem of ``obj`` (empty when valid).

    ``obj`` may be a path (file or directory), parsed JSON (a session object, a
    message, or a list of messages) or an already loaded ``Session``.
    """
    if isinstance(obj, Session):
        return []
    if isinstance(obj, (str, os.PathLike)):
        # Located with the file they are in: a directory holds many.
        return [p.at(result.source) for result in read(obj) for p in result.problems]
    problems: list[Problem] = []
    if isinstance(obj, dict) and "messages" in obj:
        check_session(obj, (), problems)
    elif isinstance(obj, dict):
        check_message(obj, (), problems)
    elif isinstance(obj, list):
        for index, message in enumerate(obj):
            check_message(message, (index,), problems)
    else:
        raise TypeError(f"cannot validate a {type(obj).__name__}")
    return problems
