"""Problems found in input, and the exception that carries them.

Every problem names where it is (a JSON path such as
``messages[3].content[2].input.llmActual`` or a line number), so that a person
can find it in the file without a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

Path = tuple[str | int, ...]
# The kind of a problem that says what a source left out by design (another tool's
# entries this version does not show, a last line still being written): a warning
# even when read strictly, and the source still counts as read in full.
NOTE = "note"

_PLAIN_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def format_path(path: Path) -> str:
    """Render a JSON path the way people write it: ``messages[3].input.llmActual``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part and set(part) <= _PLAIN_KEY:
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one input, at one place.

    ``kind`` is ``"schema"`` for what the JSON Schemas decide and ``"rule"`` for
    the contract rules no schema can express (snake_case keys, time order).
    """

    location: str
    message: str
    kind: str = "schema"

    def at(self, prefix: str) -> Problem:
        """The same problem, located inside a larger document."""
        if not prefix:
            return self
        location = f"{prefix}, {self.location}" if self.location else prefix
        return Problem(location, self.message, self.kind)

    def line(self, source: str) -> str:
        """The one-line form every command prints: ``FILE: LOCATION: message``."""
        if self.location:
            return f"{source}: {self.location}: {self.message}"
        return f"{source}: {self.message}"


class InvalidInput(Exception):
    """Raised when a source cannot be read as valid sessions."""

    def __init__(self, source: str, problems: Sequence[Problem]):
        self.source = source
        self.problems = tuple(problems)
        super().__init__("\n".join(p.line(source) for p in self.problems))
