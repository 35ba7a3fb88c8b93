"""Prose Markdown to safe HTML: mistune 3, then an allowlist sanitiser (nh3).

Security decisions are the constants and the two methods at the top of
``ProseRenderer`` (as in mistune's own renderer): raw HTML is escaped, URLs go
through mistune's protocol check, an image loads only from a ``data:image``
URI or a known attachment (anything else becomes a link) whose bytes pass
``images`` (anything else becomes a placeholder that says why), and headings are
demoted below the message heading so prose cannot forge a turn. Fenced code is
coloured as a code block of its language is (the projector's ``code``, under the
highlighter's budget), table cells keep their alignment as a class, and
footnotes are numbered within each call, whose key keeps two blocks' ``[^1]``
from sharing an id. nh3 then removes whatever an allowlist does not name, as a second layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from vis_export.formats.highlight import TOKEN_STYLES, highlight, inline_style
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
    "sup",
    "section",
    "wbr",  # a break opportunity the writer put in: no content, nothing to run
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "input": {"type", "checked", "disabled"},
    "th": {"align", "class"},
    "td": {"align", "class"},
    "code": {"class"},
    "li": {"class", "id"},
    "ul": {"class"},
    "span": {"class", "style"},
    "pre": {"style"},
    "sup": {"class", "id"},
    "section": {"class"},
}
# The only ``style`` a span may keep: a token colour the highlighter writes into a pasted fragment
# (a <pre> there may keep the one it is given, ``ProseToHtml``'s ``pre``).
TOKEN_INLINE_STYLES = frozenset(inline_style(css) for css in TOKEN_STYLES)
ALIGNMENTS = ("left", "center", "right")
URL_SCHEMES = {"http", "https", "mailto", "tel", "ftp", "ftps", "irc", "ircs", "data"}

AttachmentLookup = Callable[[str], "Embedded | None"]  # reference -> the attachment's image, if at hand
CodeRenderer = Callable[[str, "str | None"], Markup]  # (code, language) -> the inside of <code>


def fence_language(info: str | None) -> str | None:
    """The language a fence's info string names: its first word, if any."""
    words = info.split(None, 1) if info else []
    return words[0] if words else None


def language_class(language: str | None) -> str:
    """A language as a CSS class name: letters, digits and ``+ - # _ .`` only."""
    return "".join(ch for ch in language if ch.isalnum() or ch in "+-#_.") if language else ""


def _renderer_class() -> type:
    from mistune.renderers.html import HTMLRenderer
    from mistune.util import striptags

    class ProseRenderer(HTMLRenderer):
        def __init__(
            self, attachment: AttachmentLookup, budget: ImageBudget | None, code: CodeRenderer, pre: str | None
        ):
            super().__init__(escape=True)
            self.attachment = attachment
            self.budget = budget
            self.code = code
            self.pre = f' style="{pre}"' if pre else ""
            self.key = ""  # what sets this call's footnote ids apart from another's in the same document

        def heading(self, text: str, level: int, **attrs: Any) -> str:
            return super().heading(text, min(6, level + HEADING_OFFSET))

        def block_code(self, code: str, info: str | None = None) -> str:
            """Fenced code as a code block of its language: coloured within the highlighter's budget (R1)."""
            language = fence_language(info)
            css = language_class(language)
            attribute = f' class="language-{css}"' if css else ""
            return f"<pre{self.pre}><code{attribute}>{self.code(code, language)}</code></pre>\n"

        def table_cell(self, text: str, align: str | None = None, head: bool = False) -> str:
            """A cell's alignment as a class (the stylesheet's, since the page's CSP
            allows no style attribute) and as ``align`` (for a pasted fragment)."""
            tag = "th" if head else "td"
            aligned = f' align="{align}" class="align-{align}"' if align in ALIGNMENTS else ""
            return f"  <{tag}{aligned}>{text}</{tag}>\n"

        def footnote_ref(self, key: str, index: int) -> str:
            link = f'<a href="#fn-{self.key}{index}">{index}</a>'
            return f'<sup class="footnote-ref" id="fnref-{self.key}{index}">{link}</sup>'

        def footnotes(self, text: str) -> str:
            return f'<section class="footnotes">\n<ol>\n{text}</ol>\n</section>\n'

        def footnote_item(self, text: str, key: str, index: int) -> str:
            back = f'<a href="#fnref-{self.key}{index}">\u21a9</a>'
            text = text.rstrip()
            text = text[:-4] + f" {back}</p>" if text.endswith("</p>") else f"{text}\n{back}"
            return f'<li id="fn-{self.key}{index}">{text}</li>\n'

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


def _attribute_filter(styles: frozenset[str]) -> Callable[[str, str, str], str | None]:
    """No ``data:`` link, no image from anywhere but a ``data:image`` URI, and no
    ``style`` but ``styles``, the declarations the renderer itself writes."""

    def kept(tag: str, attribute: str, value: str) -> str | None:
        if tag == "a" and attribute == "href" and value.strip().lower().startswith("data:"):
            return None
        if attribute == "style" and value not in styles:
            return None
        if tag == "img" and attribute == "src" and not value.strip().lower().startswith(EMBEDDABLE_IMAGES):
            return None
        return value

    return kept


class ProseToHtml:
    """One Markdown parser for a session (its attachments resolve image references).

    ``budget``: the document's image bytes, which ``data:`` images in prose are
    charged to as well (``attachment`` charges its own); ``None`` for prose
    copied on its own, whose ``data:`` images are its own bytes, each shown once.
    ``code`` writes the inside of fenced code's ``<code>`` (the document's own
    highlighter, so fenced code shares its lexing budget); ``pre``, the inline
    style of its ``<pre>`` in a pasted fragment, which keeps no stylesheet;
    ``layout``: the document's list items and table cells, for a page engine
    (``prose_bounds``); ``None`` for a browser's page. ``marked``: the prose of a
    redacted view, whose bare URLs end before a marker (``autolink``).
    """

    def __init__(
        self,
        attachment: AttachmentLookup,
        budget: ImageBudget | None = None,
        code: CodeRenderer = highlight,
        pre: str | None = None,
        layout: LayoutBudget | None = None,
        marked: bool = False,
    ):
        import mistune
        import nh3

        from vis_export.formats.autolink import url_plugin

        self._renderer = _renderer_class()(attachment, budget, code, pre)
        plugins = ["table", "strikethrough", "task_lists", url_plugin(marked), "footnotes"]
        self._markdown = mistune.create_markdown(escape=True, renderer=self._renderer, plugins=plugins)
        for name in ("table_cell", "footnote_ref", "footnotes", "footnote_item"):  # ours, not the plugins' own
            self._renderer.register(name, getattr(type(self._renderer), name))
        if layout is not None:
            self._markdown.before_render_hooks.insert(0, layout.hook)
        self._cleaner = nh3.Cleaner(
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes=URL_SCHEMES,
            attribute_filter=_attribute_filter(TOKEN_INLINE_STYLES | ({pre} if pre else set())),
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )

    def __call__(self, markdown: str, key: str = "") -> Markup:
        """``key``: what tells this prose's footnote ids (``fn-<key>-1``) from another's in the document."""
        self._renderer.key = f"{key}-" if key else ""
        return Markup(self._cleaner.clean(str(self._markdown(markdown))))
