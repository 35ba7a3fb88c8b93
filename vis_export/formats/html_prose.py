"""Prose Markdown to safe HTML: mistune 3, then an allowlist sanitiser (nh3).

Security decisions are the constants and the two methods at the top of
``ProseRenderer`` (as in mistune's own renderer): raw HTML is escaped, URLs go
through mistune's protocol check, an image loads only from a ``data:image``
URI or a known attachment (anything else becomes a link) whose bytes pass
``images`` (anything else becomes a placeholder that says why), and headings are
demoted below the message heading so prose cannot forge a turn. nh3 then
removes whatever an allowlist does not name, as a second layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from vis_export.formats.prose_bounds import LayoutBudget
from vis_export.images import Embedded, ImageBudget, embed_uri

# Message headings are <h2>; prose headings start below them.
HEADING_OFFSET = 2
EMBEDDABLE_IMAGES = ("data:image/png;", "data:image/jpeg;", "data:image/gif;", "data:image/webp;")
ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "h3",
    "h4",
    "h5",
    "h6",
    "em",
    "strong",
    "del",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "img",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "input",
    "span",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "input": {"type", "checked", "disabled"},
    "th": {"align"},
    "td": {"align"},
    "code": {"class"},
    "li": {"class"},
    "ul": {"class"},
    "span": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto", "tel", "ftp", "ftps", "irc", "ircs", "data"}

AttachmentLookup = Callable[[str], "Embedded | None"]  # reference -> the attachment's image, if at hand


def _renderer_class() -> type:
    from mistune.renderers.html import HTMLRenderer
    from mistune.util import striptags

    class ProseRenderer(HTMLRenderer):
        def __init__(self, attachment: AttachmentLookup, budget: ImageBudget | None):
            super().__init__(escape=True)
            self.attachment = attachment
            self.budget = budget

        def heading(self, text: str, level: int, **attrs: Any) -> str:
            return super().heading(text, min(6, level + HEADING_OFFSET))

        def image(self, text: str, url: str, title: str | None = None) -> str:
            """An image loads only from a ``data:image`` URI or an attachment of this
            session; any other becomes a link, so nothing is fetched (R4)."""
            if url.startswith("attachment:"):
                found = self.attachment(url[len("attachment:") :])
                if found is not None:
                    return self.checked(found, text, title)
                return f'<span class="missing-attachment">{text or self.escape_attribute(url)}</span>'
            if url.strip().lower().startswith(EMBEDDABLE_IMAGES):
                return self.checked(embed_uri(url, self.budget), text, title)
            return self.link(text or self.escape_attribute(url), url, title)

        def checked(self, image: Embedded, text: str, title: str | None) -> str:
            """The image as ``images`` wrote it anew, or a placeholder that names it."""
            if image.uri is not None:
                return super().image(text, image.uri, title)
            alt = Markup(striptags(text) or "image")  # mistune escaped it already
            return f'<span class="image-refused">{image.placeholder(alt)}</span>'

    return ProseRenderer


def _no_data_links(tag: str, attribute: str, value: str) -> str | None:
    if tag == "a" and attribute == "href" and value.strip().lower().startswith("data:"):
        return None
    if tag == "img" and attribute == "src" and not value.strip().lower().startswith(EMBEDDABLE_IMAGES):
        return None
    return value


class ProseToHtml:
    """One Markdown parser for a session (its attachments resolve image references).

    ``budget``: the document's image bytes, which ``data:`` images in prose are
    charged to as well (``attachment`` charges its own); ``None`` for prose
    copied on its own, whose ``data:`` images are its own bytes, each shown once.
    ``layout``: the document's list items and table cells, for a page engine
    (``prose_bounds``); ``None`` for a browser's page.
    """

    def __init__(
        self, attachment: AttachmentLookup, budget: ImageBudget | None = None, layout: LayoutBudget | None = None
    ):
        import mistune
        import nh3

        self._markdown = mistune.create_markdown(
            escape=True,
            renderer=_renderer_class()(attachment, budget),
            plugins=["table", "strikethrough", "task_lists", "url"],
        )
        if layout is not None:
            self._markdown.before_render_hooks.insert(0, layout.hook)
        self._cleaner = nh3.Cleaner(
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes=URL_SCHEMES,
            attribute_filter=_no_data_links,
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )

    def __call__(self, markdown: str) -> Markup:
        return Markup(self._cleaner.clean(str(self._markdown(markdown))))
