"""Output formats: one module per format, each a pure function of the model.

``FORMATS`` maps a ``--to`` name to its ``Format``; adding a format is adding a
module and one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from vis_export.model import Session
from vis_export.policy import Reasoning


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    extension: str
    media_type: str
    render: Callable[..., str]
    # Several sessions written to one stream (standard output).
    render_many: Callable[[Sequence[Session], Reasoning], str]


def _json() -> Format:
    from vis_export.formats import json as module

    return Format("json", "json", "application/json", module.session_json, module.sessions_json)


FORMATS: dict[str, Callable[[], Format]] = {"json": _json}
ALIASES: dict[str, str] = {}


def get_format(name: str) -> Format:
    return FORMATS[ALIASES.get(name, name)]()
