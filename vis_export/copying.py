"""What an application's copy button puts on the clipboard.

``clipboard(obj)`` gives the flavours of the same content, each obeying the
rules: ``text/plain`` (a copied code block is exactly its code), ``text/markdown``
and ``text/html`` (a fragment, safe to paste into an editor). Text and
Markdown cost microseconds for one block; ``flavours=("text/plain",
"text/markdown")`` skips the HTML renderer (Jinja2, mistune, Pygments).
"""

from __future__ import annotations

from collections.abc import Sequence

from vis_export.formats.markdown import MarkdownProjector
from vis_export.formats.options import ExportOptions, Folder, Theme, ToolOutputLimit, attachments_folder, folder
from vis_export.formats.text import TextProjector
from vis_export.policy import DEFAULT_REASONING, Exportable, Reasoning

MEDIA_TYPES = ("text/plain", "text/markdown", "text/html")


def clipboard(
    obj: Exportable,
    flavours: Sequence[str] = MEDIA_TYPES,
    *,
    reasoning: Reasoning = DEFAULT_REASONING,
    timestamps: bool = False,
    no_tools: bool = False,
    tool_output_limit: ToolOutputLimit = None,
    attachments: Folder = None,
    front_matter: bool = False,
    template_dir: Folder = None,
    theme: Theme | None = None,
    no_highlight: bool = False,
) -> dict[str, str]:
    """The clipboard flavours of a block, a message, a list of messages or a session.

    The options are those of ``to_text``, ``to_markdown`` and ``to_html`` (see
    ``ExportOptions``); ``reasoning="visible"`` by default: a private reasoning
    block copies as empty strings unless ``reasoning="all"``.
    """
    settings = ExportOptions(
        reasoning=reasoning,
        timestamps=timestamps,
        no_tools=no_tools,
        tool_output_limit=tool_output_limit,
        attachments=attachments_folder(attachments),
        front_matter=front_matter,
        template_dir=folder(template_dir),
        theme=theme,
        no_highlight=no_highlight,
    )
    out = {}
    if "text/plain" in flavours:
        out["text/plain"] = TextProjector(settings).render(obj)
    if "text/markdown" in flavours:
        out["text/markdown"] = MarkdownProjector(settings).render(obj)
    if "text/html" in flavours:
        from vis_export.formats.html import HtmlProjector

        out["text/html"] = HtmlProjector(settings, pasted=True).render(obj)
    return out
