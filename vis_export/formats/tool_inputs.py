"""How a tool's input reads in every format, by tool name and input shape: an
edit as a diff with its file name, a shell call as its command line, a todo list
as a checklist (``docs/formats.md``). Coding agents' sessions are mostly such
calls; shown as JSON they hide what was done.

Forms only choose what the rich formats show: the JSON projection keeps the
input exactly as stored, and whatever a form does not show of a map (a shell
call's ``description``, an edit's ``replace_all``) is still shown as data. A
form is keyed by shape as much as by name, so a Vis tool block named ``edit``
with ``old_string``/``new_string`` reads as the same diff as Claude Code's
``Edit``. A diff is built line by line from the stored strings, which it never
changes (R1).
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
_FILE_KEYS = ("file_path", "path", "filename", "notebook_path")
_MARKS = {"completed": "[x]", "in_progress": "[~]"}


class InputPart(NamedTuple):
    """One labelled piece of a form: its text and the language it is highlighted as."""

    label: str
    text: str
    language: str | None


class InputForm(NamedTuple):
    """What a form shows, and which keys of a map input it shows (the rest is shown as data)."""

    parts: list[InputPart]
    shown: frozenset[str] = frozenset()


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]


def _diff(before: str, after: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(_lines(old), _lines(new), before, after))


def _file(value: Mapping[str, Any]) -> tuple[str, str | None]:
    """The file an edit is about, and the key that names it."""
    for key in _FILE_KEYS:
        if isinstance(value.get(key), str) and value[key]:
            return str(value[key]), key
    return "file", None


def _edit(tool: str, value: Any) -> InputForm | None:
    if not isinstance(value, Mapping):
        return None
    name, key = _file(value)
    named = frozenset({key} if key else ())
    edits: Any = value["edits"] if isinstance(value.get("edits"), (list, tuple)) else [value]
    found = [(e.get("old_string"), e.get("new_string")) for e in edits if isinstance(e, Mapping)]
    pairs = [(old, new) for old, new in found if isinstance(old, str) and isinstance(new, str)]
    if pairs and len(pairs) == len(edits):
        text = "".join(_diff(name, name, old, new) for old, new in pairs)
        keys = {"edits"} if "edits" in value else {"old_string", "new_string"}
        return InputForm([InputPart(f"Edit {name}", text, "diff")], named | keys)
    if tool.lower() in WRITE_TOOLS and isinstance(value.get("content"), str):
        text = _diff("/dev/null", name, "", value["content"])
        return InputForm([InputPart(f"Write {name}", text, "diff")], named | {"content"})
    return None


def _patch(tool: str, value: Any) -> InputForm | None:
    key = next((k for k in ("input", "patch") if isinstance(value, Mapping) and isinstance(value.get(k), str)), None)
    text = value[key] if key else value
    if isinstance(text, str) and text.lstrip().startswith(PATCH_STARTS):
        return InputForm([InputPart("Patch", text, "diff")], frozenset({key} if key else ()))
    return None


def _shell(tool: str, value: Any) -> InputForm | None:
    if tool.lower() not in SHELL_TOOLS or not isinstance(value, Mapping):
        return None
    key = next((k for k in ("command", "cmd") if k in value), None)
    command = value[key] if key else None
    if key is None and isinstance(value.get("action"), Mapping):
        key, command = "action", value["action"].get("command")
    if isinstance(command, (list, tuple)) and all(isinstance(word, str) for word in command):
        command = shlex.join(command)
    if not isinstance(command, str) or key is None:
        return None
    return InputForm([InputPart("Command", command, "bash")], frozenset({key}))


def _todo(tool: str, value: Any) -> InputForm | None:
    if tool.lower() not in TODO_TOOLS or not isinstance(value, Mapping):
        return None
    key = next((k for k in ("todos", "plan") if isinstance(value.get(k), (list, tuple))), None)
    if key is None or not all(isinstance(item, Mapping) for item in value[key]):
        return None
    lines = []
    for item in value[key]:
        text = next((item[k] for k in ("content", "step") if isinstance(item.get(k), str)), "")
        lines.append(f"{_MARKS.get(str(item.get('status')), '[ ]')} {text}")
    return InputForm([InputPart("Todo", "\n".join(lines), None)], frozenset({key}))


# In order: the first form that takes the input shows it.
FORMS: list[Callable[[str, Any], InputForm | None]] = [_edit, _patch, _shell, _todo]


def input_form(tool: str, value: Any) -> tuple[list[InputPart], Any] | None:
    """The form of a tool's input and what it leaves to show as data (``None``:
    nothing), or ``None`` when no form takes it: it is shown as stored data."""
    for form in FORMS:
        found = form(tool, value)
        if found is not None:
            rest = {k: v for k, v in value.items() if k not in found.shown} if isinstance(value, Mapping) else {}
            return found.parts, rest or None
    return None
