"""The options every projection takes, with the CLI's names."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vis_export.choices import (
    PAPERS as PAPERS,  # the choices, re-exported: the formats' names for them
    PDF_ENGINES as PDF_ENGINES,
    PROVIDER_FORMATS as PROVIDER_FORMATS,
    THEMES as THEMES,
    Paper as Paper,
    PdfEngine as PdfEngine,
    ProviderFormat as ProviderFormat,
    Theme as Theme,
)
from vis_export.policy import DEFAULT_REASONING, Reasoning, check_reasoning

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

# ``tool_output_limit``: a number (characters; lines in PDF), "all" (nothing cut), or None (the format's default).
ToolOutputLimit = int | Literal["all"] | None
# A folder option as the API takes it: a path as text or a path object.
Folder = str | os.PathLike[str] | None


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """``reasoning``: the R2 policy level; ``timestamps``: times in message headers;
    ``no_tools``: drop tool blocks; ``tool_output_limit``: characters of tool output
    kept before a visible truncation marker (in PDF: printed lines, first and last,
    60 by default; ``"all"``: nothing cut, see ``tool_lines``); ``attachments``: where attachment bytes
    live (``DIR/<attachment_id>``); ``front_matter``: YAML front matter (Markdown);
    ``template_dir``: templates overriding the built-in ones by name (HTML, PDF);
    ``theme``: force ``light`` or ``dark`` (HTML); ``no_highlight``: plain code
    (HTML, PDF); ``paper``: ``A4`` or ``Letter`` (PDF); ``pdf_engine``:
    ``weasyprint`` (from the HTML templates) or ``typst`` (faster, its own
    template; ``template_dir`` does not apply) (PDF); ``provider_format``:
    ``openai`` or ``anthropic`` (provider messages); ``links_from``: the folder the
    output is written to, which links to attachment files are relative to
    (Markdown; the working directory when ``None``); ``redact``: replace secrets and
    personal data with markers (R8): ``True`` for the built-in rules, or a
    ``Redaction`` with custom patterns and an allowlist."""

    reasoning: Reasoning = DEFAULT_REASONING
    timestamps: bool = False
    no_tools: bool = False
    tool_output_limit: ToolOutputLimit = None
    attachments: Path | None = None
    front_matter: bool = False
    template_dir: Path | None = None
    theme: str | None = None
    no_highlight: bool = False
    paper: str = "A4"
    pdf_engine: str = "weasyprint"
    provider_format: str = "openai"
    links_from: Path | None = None
    redact: Redaction | bool | None = None

    def __post_init__(self) -> None:
        check_reasoning(self.reasoning)
        if self.redact is True:
            from vis_export.redaction import Redaction

            object.__setattr__(self, "redact", Redaction())
        elif self.redact is False:
            object.__setattr__(self, "redact", None)
        for name in ("attachments", "template_dir", "links_from"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Path):
                object.__setattr__(self, name, Path(value))
        if self.theme is not None and self.theme not in THEMES:
            raise ValueError(f"theme must be one of {', '.join(THEMES)}")
        if self.provider_format not in PROVIDER_FORMATS:
            raise ValueError(f"provider_format must be one of {', '.join(PROVIDER_FORMATS)}")
        if self.paper not in PAPERS:
            raise ValueError(f"paper must be one of {', '.join(PAPERS)}")
        if self.pdf_engine not in PDF_ENGINES:
            raise ValueError(f"pdf_engine must be one of {', '.join(PDF_ENGINES)}")
        limit = self.tool_output_limit
        if (
            limit is not None
            and limit != "all"
            and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0)
        ):
            raise ValueError('tool_output_limit must be a number not below 0, or "all"')

    @property
    def redaction(self) -> Redaction | None:
        """The redaction rules, or ``None`` when nothing is redacted."""
        return None if isinstance(self.redact, bool) else self.redact


def options_given(arguments: Mapping[str, Any]) -> ExportOptions:
    """The options a public function was called with (its ``locals()`` on entry): its
    parameters named as ``ExportOptions`` fields, folders as the API takes them. One
    place, so a function's signature is the only list of the options it takes."""
    given = {name: arguments[name] for name in ExportOptions.__dataclass_fields__ if name in arguments}
    if "attachments" in given:
        given["attachments"] = attachments_folder(given["attachments"])
    for name in ("template_dir", "links_from"):
        if name in given:
            given[name] = folder(given[name])
    return ExportOptions(**given)


def folder(value: Folder) -> Path | None:
    """A folder option as ``ExportOptions`` holds it."""
    return None if value is None else Path(value)


def attachments_folder(value: Folder) -> Path | None:
    """The ``attachments`` option as the API takes it: a folder that is not
    there is an error (``ValueError``), as on the command line, where it would
    otherwise only leave every image out."""
    path = folder(value)
    if path is not None and not path.is_dir():
        raise ValueError(f"attachments: {path}: no such folder")
    return path
