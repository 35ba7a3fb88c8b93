"""HTML (``--to html``, the clipboard's ``text/html``): one self-contained, safe file.

Every tag comes from a Jinja2 template (``templates/``, autoescaped); Python
only prepares values, one method per block type, plus the two content
renderers: prose through ``html_prose`` (mistune, nh3) and code through
``highlight`` (Pygments). The page loads nothing: its Content-Security-Policy
allows its one inline stylesheet (by hash) and ``data:`` images, no script.
"""

from __future__ import annotations

import base64
import hashlib
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from vis_export.attachments import Attachments, human_size
from vis_export.formats.anchors import Anchors
from vis_export.formats.facts import SessionFacts
from vis_export.formats.highlight import TOKEN_COLOURS, TOKEN_STYLES, highlight, inline_style, plain
from vis_export.formats.html_prose import language_class
from vis_export.formats.lexing import HighlightBudget
from vis_export.formats.options import ExportOptions, Folder, Theme, ToolOutputLimit, options_given
from vis_export.formats.projector import (
    TRUNCATED_NOTE,
    Projector,
    author_name,
    json_text,
    role_label,
    status_note,
    tool_duration,
)
from vis_export.formats.prose_bounds import LayoutBudget
from vis_export.formats.prose_words import prose_words
from vis_export.formats.template_values import (
    AttachmentValues,
    CodeValues,
    ErrorValues,
    LonisFieldValues,
    LonisValues,
    MessageValues,
    NoticeValues,
    ProseValues,
    ReasoningValues,
    SessionValues,
    SpeechValues,
    ToolPartValues,
    ToolValues,
    UnknownValues,
)
from vis_export.formats.tool_lines import LEFT_OUT_NOTE
from vis_export.lonis_parsed import parsed as parsed_lonis
from vis_export.model import (
    AttachmentBlock,
    Block,
    CodeBlock,
    ErrorBlock,
    LonisBlock,
    Message,
    NoticeBlock,
    ProseBlock,
    ReasoningBlock,
    Session,
    SpeechBlock,
    ToolBlock,
)
from vis_export.policy import DEFAULT_REASONING, Exportable, Reasoning
from vis_export.resources import builtin_templates
from vis_export.strings import data_label, single_line
from vis_export.timefmt import iso, utc
from vis_export.version import __version__

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

SUMMARY_LENGTH = 60
ROW_LENGTH = 100  # characters of code on a line of a printed page, about
PART_ROWS = 2  # what a part's label and frame take on a printed page besides its lines, about


# Elements of a pasted fragment (the clipboard's text/html) styled inline, since
# the document or chat it lands in keeps no stylesheet: the light theme's look.
PASTED_STYLES = {
    "pre": "background:#f6f8fa;border:1px solid #d1d9e0;border-radius:6px;padding:8px 12px;overflow-x:auto;"
    "white-space:pre;tab-size:4;line-height:1.4;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"
    "'DejaVu Sans Mono','Noto Sans Mono CJK JP',monospace;font-size:13px;color:#1f2328",
    "figcaption": "color:#59636e;font-size:12px;margin-bottom:2px",
    "error": "background:#ffebe9;border-left:4px solid #cf222e;padding:6px 12px;border-radius:4px",
    "notice": "background:#fff8c5;border-left:4px solid #9a6700;padding:6px 12px;border-radius:4px",
}


def pasted_styles() -> tuple[str, ...]:
    """Every value a style attribute of a pasted fragment can have (no two alike).
    A page whose script puts such a fragment on the clipboard allows exactly these
    by hash: Chromium parses the fragment in the page, whose policy checks every
    style attribute of it (without them: a CSP violation per attribute, per copy)."""
    return tuple(dict.fromkeys([*PASTED_STYLES.values(), *(inline_style(name) for name in TOKEN_STYLES)]))


def _styled_inline(element: str) -> Markup:
    return Markup(f' style="{PASTED_STYLES[element]}"')


def _unstyled(element: str) -> str:
    return ""


@lru_cache(maxsize=8)
def environment(template_dir: Path | None) -> Any:
    """Templates: the user's first (by name), then the built-in ones, which stay
    reachable as ``builtin/<name>`` for ``{% extends %}`` (as in nbconvert)."""
    from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader, StrictUndefined

    builtin = FileSystemLoader(str(builtin_templates()))
    loaders = [FileSystemLoader(str(template_dir))] if template_dir is not None else []
    loader = ChoiceLoader([*loaders, builtin, PrefixLoader({"builtin": builtin})])
    env = Environment(loader=loader, autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True)
    env.globals["styled"] = _unstyled  # a pasted fragment passes _styled_inline instead
    return env


def template_problems(template_dir: Path) -> list[str]:
    """One line per template in ``template_dir`` that does not compile, naming its
    file and line: found before any session is rendered, not once per session."""
    from jinja2 import TemplateError, TemplateSyntaxError

    env = environment(template_dir)
    problems = []
    for path in sorted(template_dir.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        try:
            env.get_template(path.relative_to(template_dir).as_posix())
        except TemplateSyntaxError as error:
            problems.append(f"{path}:{error.lineno}: template error: {error.message}")
        except (TemplateError, UnicodeDecodeError) as error:
            problems.append(f"{path}: template error: {error}")
    return problems


def style_source(style: str) -> str:
    """The CSP source that allows exactly this inline stylesheet (or style attribute's value)."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(style: str) -> str:
    return (
        f"default-src 'none'; style-src {style_source(style)}; img-src data:; font-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


def code_markup(text: str, language: str | None, no_highlight: bool = False, inline: bool = False) -> Markup:
    """The inside of ``<code>``: highlighted (styles in the spans when ``inline``), or plain."""
    return plain(text) if no_highlight else highlight(text, language, inline=inline)


@lru_cache(maxsize=8)
def _prose_without_attachments(no_highlight: bool, inline: bool, marked: bool) -> Any:
    """Prose of a message or block copied on its own: no attachment to resolve; ``marked``, a redacted view's."""
    from vis_export.formats.html_prose import ProseToHtml

    code = partial(code_markup, no_highlight=no_highlight, inline=inline)
    return ProseToHtml(lambda reference: None, code=code, pre=PASTED_STYLES["pre"] if inline else None, marked=marked)


class HtmlProjector(Projector):
    document_template = "document.html.j2"

    def page_size(self) -> str | None:
        """The CSS page size of the print stylesheet: none on screen (the PDF projector sets one)."""
        return None

    def shows_times(self) -> bool:
        return self.options.timestamps

    def layout_budget(self) -> LayoutBudget | None:
        """What a document's prose may hold as lists and tables: unbounded in a browser's page."""
        return None

    def __init__(self, options: ExportOptions | None = None, pasted: bool = False):
        """``pasted``: fragments for the clipboard, styled inline (a page keeps its stylesheet)."""
        super().__init__(options)
        self.pasted = pasted
        self.env = environment(self.options.template_dir)
        self.attachments = Attachments.of(None, self.options.attachments)
        self._prose: Any = None  # built on first use: a copied code block needs no Markdown parser
        self.anchors = Anchors()
        self.prose_count = 0  # prose rendered in this document: its footnote ids are unique, and the same each time
        self.highlighting = HighlightBudget()

    def prose(self, markdown: str) -> Markup:
        if self._prose is None:
            marked = self.options.redaction is not None
            self._prose = _prose_without_attachments(self.options.no_highlight, self.pasted, marked)
        self.prose_count += 1
        return self._prose(markdown, str(self.prose_count))  # type: ignore[no-any-return]

    # --- frames ---------------------------------------------------------------------------

    def session(
        self, session: Session, first_index: int = 1, continuation: bool = False, whole: Session | None = None
    ) -> Iterator[str]:
        """The whole document; a PDF rendered in parts passes where its part starts, and
        the ``whole`` session, whose attachments prose anywhere may show (``attachment:``).
        Each call has its own image and highlighting budgets (``images.MAX_DOCUMENT_BYTES``,
        ``lexing.HighlightBudget``), so each part of a PDF bounds its own."""
        from vis_export.formats.html_prose import ProseToHtml

        self.attachments = Attachments.of(session, self.options.attachments)
        self.anchors = Anchors()
        self.prose_count = 0
        self.highlighting = HighlightBudget()
        attached = [b for _, b in (whole or session).blocks() if isinstance(b, AttachmentBlock)]
        pre = PASTED_STYLES["pre"] if self.pasted else None
        self._prose = ProseToHtml(
            self.attachments.lookup(attached),
            self.attachments.budget,
            self.code_html,
            pre,
            self.layout_budget(),
            marked=self.options.redaction is not None,
        )
        style = self.stylesheet()
        facts = SessionFacts.of(session)
        created = facts.created
        values: SessionValues = {
            "id": session.id,
            "title": facts.title,
            "created_iso": iso(created) if created is not None else None,
            "created_text": utc(created) if created is not None else None,
            "models": list(facts.models),
            "messages": [self.message_values(m, i) for i, m in enumerate(session.messages, first_index)],
            "continuation": continuation,
        }
        page = {
            "session": values,
            "style": Markup(style),
            "csp": content_security_policy(style),
            "lang": "en",
            "theme": self.options.theme,
            "version": __version__,
        }
        yield from self._marked(
            self.env.get_template(self.document_template).generate({**page, **self.page_context(session)})
        )

    def _marked(self, pieces: Iterator[str]) -> Iterator[str]:
        """The pieces as they are; from a redacted view, one piece with its markers styled."""
        if self.options.redaction is None:
            return pieces
        from vis_export.formats.marked import styled

        return iter([styled("".join(pieces))])

    def stylesheet(self) -> str:
        """The document's one inline stylesheet (its CSP allows it by hash)."""
        style = str(
            self.env.get_template("style.css.j2").render(
                paper=self.page_size(), token_colours=TOKEN_COLOURS, token_styles=TOKEN_STYLES
            )
        )
        if self.options.redaction is None:
            return style
        from vis_export.formats.marked import STYLE

        return style + STYLE

    def page_context(self, session: Session) -> dict[str, Any]:
        """What a subclass adds to (or changes in) the values a document template receives."""
        return {}

    def messages(self, messages: list[Message]) -> Iterator[str]:
        self.anchors = Anchors()
        self.prose_count = 0
        shown = [self.message_values(m, i) for i, m in enumerate(messages, 1)]
        yield from self._marked(
            self.env.get_template("fragment.html.j2").generate(messages=shown, blocks=[], **self._fragment())
        )

    def message(self, message: Message) -> Iterator[str]:
        yield from self.messages([message])

    def lone_block(self, block: Block) -> Iterator[str]:
        self.prose_count = 0
        yield from self._marked(
            self.env.get_template("fragment.html.j2").generate(
                messages=[], blocks=[self.block(block)], **self._fragment()
            )
        )

    def _fragment(self) -> dict[str, Any]:
        return {"styled": _styled_inline} if self.pasted else {}

    def message_values(self, message: Message, index: int) -> MessageValues:
        label = escape(role_label(message))  # Markup, for the name isolated below
        name = author_name(message)
        if name:  # isolated, as every label from the data (the templates put the others in <bdi>)
            label += Markup(" (<bdi>{}</bdi>)").format(data_label(name))
        first_prose = next((b.markdown for b in message.blocks if isinstance(b, ProseBlock)), "")
        # The words a reader sees, not the Markdown: a preview needs only the start.
        summary = single_line(prose_words(first_prose[: SUMMARY_LENGTH * 8]))
        anchor, anchored = self.anchored(message)
        return {
            "anchor": anchor,
            "role": message.role,
            "status": message.status,
            "label": label,
            "note": status_note(message),
            "model": data_label(message.model) if message.model else None,
            "time_iso": iso(message.created_at) if self.shows_times() else None,
            "time_text": utc(message.created_at),
            "summary": summary[:SUMMARY_LENGTH] + ("…" if len(summary) > SUMMARY_LENGTH else ""),
            "blocks": [self.block(b) for _, b in anchored],
            "block_anchors": [a for a, _ in anchored],
        }

    def anchored(self, message: Message) -> tuple[str, list[tuple[str, Block]]]:
        """The anchor of a message and of each block it shows, handed out in
        document order: what a link to a message or block names."""
        anchor = self.anchors.take("m", message.id)
        return anchor, [(self.anchors.take("b", b.id), b) for b in self.blocks(message)]

    # --- one method per block type ----------------------------------------------------

    def code_html(self, text: str, language: str | None) -> Markup:
        if self.options.no_highlight:
            return plain(text)
        return highlight(text, language, inline=self.pasted, budget=self.highlighting)

    def block_prose(self, block: ProseBlock) -> ProseValues:
        return {"kind": "prose", "html": self.prose(block.markdown)}

    def block_code(self, block: CodeBlock) -> CodeValues:
        language = block.language
        return {
            "kind": "code",
            "language": language,
            "language_class": language_class(language),
            "html": self.code_html(block.text, language),
        }

    def block_tool(self, block: ToolBlock) -> ToolValues:
        shown = self.tool_parts(block)
        parts: list[ToolPartValues] = [
            {
                "label": part.label,
                "html": self.code_html(part.text, part.language),
                "language": part.language or "text",
                "truncated": TRUNCATED_NOTE.format(part.cut) if part.cut else None,
                "left_out": LEFT_OUT_NOTE.format(part.left_out) if part.left_out else None,
                "tail_html": self.code_html(part.tail, part.language) if part.left_out else None,
            }
            for part in shown
        ]
        return {
            "kind": "tool",
            "name": data_label(block.tool),
            "summary": self.tool_summary(block),
            "status": block.status,
            "duration": tool_duration(block),
            "parts": parts,
            "rows": rows(part.text + part.tail for part in shown),
        }

    def block_reasoning(self, block: ReasoningBlock) -> ReasoningValues:
        return {"kind": "reasoning", "private": block.is_private, "html": self.prose(block.text)}

    def block_error(self, block: ErrorBlock) -> ErrorValues:
        return {"kind": "error", "code": block.code, "message": block.message, "retryable": block.retryable}

    def block_notice(self, block: NoticeBlock) -> NoticeValues:
        return {"kind": "notice", "code": block.code, "message": block.message}

    def block_attachment(self, block: AttachmentBlock) -> AttachmentValues:
        image = self.attachments.image(block.attachment_id, block.media_type)
        return {
            "kind": "attachment",
            "name": data_label(block.name),
            "media_type": block.media_type,
            "size": human_size(self.attachments.size(block.attachment_id)),
            "data_uri": image.uri if image else None,
            "refused": image.placeholder(block.name) if image and image.refusal else None,
        }

    def block_speech(self, block: SpeechBlock) -> SpeechValues:
        return {"kind": "speech", "text": block.text}

    def block_lonis(self, block: LonisBlock) -> LonisValues:
        shown = parsed_lonis(block.envelope)
        fields: list[LonisFieldValues] = [
            {
                "name": f.name,
                "style": f.style,
                "value": self.code_html(f.value, "json") if f.style == "json" else f.value,
            }
            for f in shown.fields
        ]
        return {
            "kind": "lonis",
            "lonis_kind": shown.kind,
            "category": shown.category,
            "summary": data_label(shown.summary),
            "header": tuple((label, data_label(value)) for label, value in shown.header),
            "fields": fields,
            "content_hash": shown.content_hash,
            "replay": shown.replay,
        }

    def block_unknown(self, block: Block) -> UnknownValues:
        fields = [(key, json_text(value)) for key, value in block.fields.items() if key not in ("id", "type")]
        return {
            "kind": "unknown",
            "type": data_label(block.type),
            "fields": fields,
            "rows": rows(text for _, text in fields),
        }


def rows(texts: Iterable[str]) -> int:
    """About how many lines the texts take on a printed page, a long line
    wrapping: a framed block this short is kept on one page (the templates'
    ``keep``), since a frame broken between its parts runs on, empty, to
    the foot of the page. A longer one breaks where it must. Each text is a
    part (a label and a frame of its own: 24 one-line fields take two pages),
    and a wide character (CJK, emoji) takes two columns: counted as one line
    each, blocks longer than a page were kept whole, leaving a page all but
    empty before them."""
    return sum(PART_ROWS + sum(-(-columns(line) // ROW_LENGTH) or 1 for line in text.split("\n")) for text in texts)


def columns(line: str) -> int:
    """How many columns of a monospace font a line takes: two for a wide character."""
    if line.isascii():
        return len(line)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def to_html(
    obj: Exportable,
    *,
    reasoning: Reasoning = DEFAULT_REASONING,
    timestamps: bool = False,
    no_tools: bool = False,
    tool_output_limit: ToolOutputLimit = None,
    attachments: Folder = None,
    template_dir: Folder = None,
    theme: Theme | None = None,
    no_highlight: bool = False,
    redact: Redaction | bool | None = None,
) -> str:
    """A self-contained HTML document of a session; an HTML fragment of a message,
    a block or a list of messages (what ``clipboard`` puts under ``text/html``).
    The options are those of ``vis-export convert --to html`` (see ``ExportOptions``)."""
    options = options_given(locals())
    return HtmlProjector(options).render(obj)
