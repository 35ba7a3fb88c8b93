"""How a tool's input reads in every format, by tool name and input shape: an
edit as a diff with its file name, a shell call as its command line, a todo list
as a checklist (``docs/formats.md``). Coding agents' sessions are mostly such
calls; shown as JSON they hide what was done.

Views only choose what the rich formats show: the JSON projection keeps the
input exactly as stored. A view is keyed by shape as much as by name, so a Vis
tool block named ``edit`` with ``old_string``/``new_string`` reads as the same
diff as Claude Code's ``Edit``. The texts come from the stored strings without
change (a diff is built line by line from them), so code stays literal (R1).
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

SHELL_TOOLS = frozenset({"bash", "exec_command", "shell", "local_shell_call", "container.exec"})
WRITE_TOOLS = frozenset({"write", "create_file"})
TODO_TOOLS = frozenset({"todowrite", "update_plan"})
PATCH_STARTS = ("*** Begin Patch", "--- ", "diff --git ")
_MARKS = {"completed": "[x]", "in_progress": "[~]"}


class ViewPart(NamedTuple):
    """One labelled piece of a view: its text and the language it is highlighted as."""

    label: str
    text: str
    language: str | None


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]


def _diff(name: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(_lines(old), _lines(new), f"a/{name}", f"b/{name}"))


def _file(value: Mapping[str, Any]) -> str:
    for key in ("file_path", "path", "filename", "notebook_path"):
        if isinstance(value.get(key), str) and value[key]:
            return str(value[key])
    return "file"


def _edit(tool: str, value: Any) -> list[ViewPart] | None:
    if not isinstance(value, Mapping):
        return None
    name = _file(value)
    edits: Any = value["edits"] if isinstance(value.get("edits"), (list, tuple)) else [value]
    found = [(e.get("old_string"), e.get("new_string")) for e in edits if isinstance(e, Mapping)]
    pairs = [(old, new) for old, new in found if isinstance(old, str) and isinstance(new, str)]
    if pairs and len(pairs) == len(edits):
        return [ViewPart(f"Edit {name}", "".join(_diff(name, old, new) for old, new in pairs), "diff")]
    if tool.lower() in WRITE_TOOLS and isinstance(value.get("content"), str):
        return [ViewPart(f"Write {name}", _diff(name, "", value["content"]), "diff")]
    return None


def _patch(tool: str, value: Any) -> list[ViewPart] | None:
    text = value
    if isinstance(value, Mapping):
        text = next((value[k] for k in ("input", "patch") if isinstance(value.get(k), str)), None)
    if isinstance(text, str) and text.lstrip().startswith(PATCH_STARTS):
        return [ViewPart("Patch", text, "diff")]
    return None


def _shell(tool: str, value: Any) -> list[ViewPart] | None:
    if tool.lower() not in SHELL_TOOLS or not isinstance(value, Mapping):
        return None
    command = next((value[k] for k in ("command", "cmd") if k in value), None)
    if command is None and isinstance(value.get("action"), Mapping):
        command = value["action"].get("command")
    if isinstance(command, (list, tuple)) and all(isinstance(word, str) for word in command):
        command = shlex.join(command)
    return [ViewPart("Command", command, "bash")] if isinstance(command, str) else None


def _todo(tool: str, value: Any) -> list[ViewPart] | None:
    if tool.lower() not in TODO_TOOLS or not isinstance(value, Mapping):
        return None
    items = next((value[k] for k in ("todos", "plan") if isinstance(value.get(k), (list, tuple))), None)
    if items is None or not all(isinstance(item, Mapping) for item in items):
        return None
    lines = []
    for item in items:
        text = next((item[k] for k in ("content", "step") if isinstance(item.get(k), str)), "")
        lines.append(f"{_MARKS.get(str(item.get('status')), '[ ]')} {text}")
    return [ViewPart("Todo", "\n".join(lines), None)]


# In order: the first view that takes the input shows it.
VIEWS: list[Callable[[str, Any], list[ViewPart] | None]] = [_edit, _patch, _shell, _todo]


def input_view(tool: str, value: Any) -> list[ViewPart] | None:
    """The view of a tool's input, or ``None``: shown as stored data."""
    for view in VIEWS:
        parts = view(tool, value)
        if parts is not None:
            return parts
    return None
