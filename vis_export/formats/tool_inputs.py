"""How a tool's input reads in every format, by tool name and input shape: an
edit as a diff with its file name, a shell call as its command line, a todo list
as a checklist (``docs/formats.md``). Coding agents' sessions are mostly such
calls; shown as JSON they hide what was done. ``tool_summary`` says in one line
what a call did, for the heading of a folded tool block: a reader scanning 200
calls saw only "Bash, Read, Edit" and had to open each.

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
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from vis_export.strings import data_label

SHELL_TOOLS = frozenset({"bash", "exec_command", "shell", "local_shell_call", "container.exec"})
WRITE_TOOLS = frozenset({"write", "create_file"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
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


def _patch_text(value: Any) -> tuple[str | None, str] | None:
    """A patch given as the input or under ``input``/``patch``: the key (``None``: the input) and the patch."""
    key = next((k for k in ("input", "patch") if isinstance(value, Mapping) and isinstance(value.get(k), str)), None)
    text = value[key] if key else value
    if isinstance(text, str) and text.lstrip().startswith(PATCH_STARTS):
        return key, text
    return None


def _patch(tool: str, value: Any) -> InputForm | None:
    found = _patch_text(value)
    if found is None:
        return None
    key, text = found
    return InputForm([InputPart("Patch", text, "diff")], frozenset({key} if key else ()))


def _command(tool: str, value: Any) -> tuple[str | list[str], str] | None:
    """A shell call's command, a line or its words, and the key that holds it."""
    if tool.lower() not in SHELL_TOOLS or not isinstance(value, Mapping):
        return None
    key = next((k for k in ("command", "cmd") if k in value), None)
    command = value[key] if key else None
    if key is None and isinstance(value.get("action"), Mapping):
        key, command = "action", value["action"].get("command")
    if isinstance(command, (list, tuple)) and all(isinstance(word, str) for word in command):
        command = list(command)
    elif not isinstance(command, str):
        return None
    return (command, key) if key else None


def _shell(tool: str, value: Any) -> InputForm | None:
    found = _command(tool, value)
    if found is None:
        return None
    command, key = found
    line = command if isinstance(command, str) else shlex.join(command)
    return InputForm([InputPart("Command", line, "bash")], frozenset({key}))


def _script(words: list[str]) -> str:
    """What a command's words run: the script of ``bash -lc SCRIPT`` (how Codex runs
    every command, which as one quoted line reads ``'rg '"'"'x'"'"''``), else the line."""
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in ("-c", "-lc"):
        return words[2]
    return shlex.join(words)


def _todos(tool: str, value: Any) -> tuple[list[Mapping[str, Any]], str] | None:
    """A todo list's items, and the key that holds them."""
    if tool.lower() not in TODO_TOOLS or not isinstance(value, Mapping):
        return None
    key = next((k for k in ("todos", "plan") if isinstance(value.get(k), (list, tuple))), None)
    if key is None or not all(isinstance(item, Mapping) for item in value[key]):
        return None
    return list(value[key]), key


def _todo(tool: str, value: Any) -> InputForm | None:
    found = _todos(tool, value)
    if found is None:
        return None
    items, key = found
    lines = []
    for item in items:
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


SUMMARY_LENGTH = 120  # characters: more than a heading shows (HTML cuts it with an ellipsis), less than a line may be
_PATH_LENGTH = 60  # a longer path is shown by its last folders and its file name
_SEPARATOR = re.compile(r"([/\\])")  # a path's separator, kept where a path is split
_SEARCH_KEYS = ("pattern", "url", "query")  # Grep and Glob, WebFetch, WebSearch (before a file: Grep's ``path``)
# The files a patch names: Codex's file lines, or a unified diff's new name
# (the +++ line right after a --- line, so an added line "++ x" is not one).
_PATCHED = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^--- .*\n\+\+\+ (?:b/)?([^\t\n]+)", re.MULTILINE)


def tool_summary(tool: str, value: Any) -> str | None:
    """What a call did, in one line: a shell call's command (its first line), a
    todo list's count, the files a patch touches, a search's pattern, a fetch's
    URL, an edit's, read's or write's file; ``None`` for anything else.

    The one rule for every format's tool heading; ``value`` is the input as the
    view holds it (reasoning hidden, redacted), so the line says nothing the
    block does not. A line is cut at ``SUMMARY_LENGTH`` characters with an
    ellipsis, as is a command of several lines."""
    shell = _command(tool, value)
    if shell is not None:
        command = shell[0]
        line = command if isinstance(command, str) else _script(command)
        if line.startswith("apply_patch") and "*** Begin Patch" in line:  # Codex's patch through its shell
            # Its words as written: quoted as one line, ``it's.py`` would read ``it'"'"'s.py``.
            return _patched(line if isinstance(command, str) else "\n".join(command))
        return _one_line(line)
    todos = _todos(tool, value)
    if todos is not None:
        items = todos[0]
        done = sum(item.get("status") == "completed" for item in items)
        return f"{len(items)} item{'' if len(items) == 1 else 's'}, {done} done"
    patch = _patch_text(value)
    if patch is not None:
        return _patched(patch[1])
    if not isinstance(value, Mapping):
        return None
    key = next((k for k in _SEARCH_KEYS if isinstance(value.get(k), str) and value[k].strip()), None)
    if key is not None:
        return _one_line(value[key])
    name, file_key = _file(value)
    return _one_line(_short_path(name)) if file_key else None


def _patched(patch: str) -> str | None:
    """The files ``patch`` touches, each once, in order."""
    names = (codex or unified for codex, unified in _PATCHED.findall(patch))
    files = dict.fromkeys(_short_path(name.strip()) for name in names if name.strip() != "/dev/null")
    return _one_line(", ".join(files))


def _one_line(text: str) -> str | None:
    """``text``'s first line that holds anything, its white space runs one space,
    cut with an ellipsis when it is longer than ``SUMMARY_LENGTH`` or other lines follow.

    It is a label (``strings.data_label``): a bidirectional override in it would reorder the
    status after it, and a lone isolate's end (U+2069) closes HTML's ``<bdi>`` early
    (Chromium then shows "completed" reversed)."""
    first, _, rest = text.strip().partition("\n")
    line = data_label(first)
    if len(line) > SUMMARY_LENGTH:
        return line[: SUMMARY_LENGTH - 1].rstrip() + "…"
    return f"{line} …" if rest else line or None


def _short_path(path: str) -> str:
    """A long path as its file name and the folders that fit before it: the end
    names the file, where an absolute path's start (a home folder) is the same every time.
    Windows' separator counts too, and ``…`` only stands for folders left out."""
    if len(path) <= _PATH_LENGTH:
        return path
    parts = _SEPARATOR.split(path.rstrip("/\\"))  # names, and the separator after each but the last
    kept = parts.pop()
    while parts and len(kept) + len(parts[-2]) + 3 <= _PATH_LENGTH:
        separator = parts.pop()
        kept = f"{parts.pop()}{separator}{kept}"
    return f"…{parts[-1]}{kept}" if parts else kept or path
