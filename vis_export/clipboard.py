"""What an application's copy button puts on the clipboard.

``clipboard(obj)`` gives the flavours of the same content, each obeying the
rules: ``text/plain`` (a copied code block is exactly its code) and
``text/markdown``. It imports only the two projectors, so copying one block
costs microseconds.
"""

from __future__ import annotations

from vis_export.formats.markdown import MarkdownProjector
from vis_export.formats.options import ExportOptions
from vis_export.formats.text import TextProjector
from vis_export.policy import Exportable


def clipboard(obj: Exportable, **options: object) -> dict[str, str]:
    """The clipboard flavours of a block, a message, a list of messages or a session.

    Options are those of ``ExportOptions`` (``reasoning="visible"`` by default: a
    private reasoning block copies as empty strings unless ``reasoning="all"``).
    """
    settings = ExportOptions(**options)  # type: ignore[arg-type]
    return {
        "text/plain": TextProjector(settings).render(obj),
        "text/markdown": MarkdownProjector(settings).render(obj),
    }
