"""The options every projection takes, with the CLI's names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vis_export.policy import DEFAULT_REASONING, Reasoning, check_reasoning


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """``reasoning``: the R2 policy level; ``timestamps``: times in message headers;
    ``no_tools``: drop tool blocks; ``tool_output_limit``: characters of tool output
    kept before a visible truncation marker; ``attachments``: where attachment bytes
    live (``DIR/<attachment_id>``); ``front_matter``: YAML front matter (Markdown)."""

    reasoning: Reasoning = DEFAULT_REASONING
    timestamps: bool = False
    no_tools: bool = False
    tool_output_limit: int | None = None
    attachments: Path | None = None
    front_matter: bool = False

    def __post_init__(self) -> None:
        check_reasoning(self.reasoning)
        if self.attachments is not None and not isinstance(self.attachments, Path):
            object.__setattr__(self, "attachments", Path(self.attachments))
        if self.tool_output_limit is not None and self.tool_output_limit < 0:
            raise ValueError("tool_output_limit must not be negative")
