"""What an application's copy button puts on the clipboard.

``clipboard(obj)`` gives the flavours of the same content, each obeying the
rules: ``text/plain`` (a copied code block is exactly its code), ``text/markdown``
and ``text/html`` (a fragment, safe to paste into an editor). Text and
Markdown cost microseconds for one block; ``flavours=("text/plain",
"text/markdown")`` skips the HTML renderer (Jinja2, mistune, Pygments).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vis_export.formats import MEDIA_TYPES as FORMAT_MEDIA_TYPES
from vis_export.formats.markdown import MarkdownProjector
from vis_export.formats.options import Folder, Theme, ToolOutputLimit, options_given
from vis_export.formats.projector import Projector
from vis_export.formats.text import TextProjector
from vis_export.policy import DEFAULT_REASONING, Exportable, Reasoning, visible

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

PLAIN, MARKDOWN, HTML = (FORMAT_MEDIA_TYPES[name] for name in ("text", "markdown", "html"))
MEDIA_TYPES = (PLAIN, MARKDOWN, HTML)  # the flavours: those of the formats each is made by


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
    redact: Redaction | bool | None = None,
) -> dict[str, str]:
    """The clipboard flavours of a block, a message, a list of messages or a session.

    The options are those of ``to_text``, ``to_markdown`` and ``to_html`` (see
    ``ExportOptions``); ``reasoning="visible"`` by default: a private reasoning
    block copies as empty strings unless ``reasoning="all"``.
    """
    settings = options_given(locals())
    view = visible(obj, settings.reasoning, settings.redaction)  # R2: the one view every flavour is made of
    out = {}
    if PLAIN in flavours:
        out[PLAIN] = _made(TextProjector(settings), view)
    if MARKDOWN in flavours:
        out[MARKDOWN] = _made(MarkdownProjector(settings), view)
    if HTML in flavours:
        from vis_export.formats.html import HtmlProjector

        out[HTML] = _made(HtmlProjector(settings, pasted=True), view)
    return out


def _made(projector: Projector, view: Exportable | None) -> str:
    """A flavour of the view: nothing of what the policy hides whole (a private reasoning block)."""
    return "" if view is None else projector.render(view)
