"""Prose and code as the data tree the Typst template draws (``--pdf-engine typst``).

Typst is a programming language: a string written into its markup runs
(``#read("/etc/passwd")``). So nothing from a session ever becomes markup;
prose becomes a tree of plain nodes from mistune's syntax tree (the parser the
HTML path uses), code (code blocks and code fenced in prose alike) becomes runs
of plain text with the project's token classes (``lexing``, under its CPU
budget), and the template (``templates/typst``)
draws them with its own functions, reading strings only as text.

Typst never breaks inside a word, so a long word would run off the page.
Code is monospaced: it is wrapped here, at the column where the line would
leave its box (a wrap point is a line break in the PDF's text, as WeasyPrint's
visual wrap is); a long word of prose is cut into boxes, between which Typst
may break without adding a character to the text.
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import Any

from vis_export.formats import lexing
from vis_export.formats.html_prose import EMBEDDABLE_IMAGES, HEADING_OFFSET, URL_SCHEMES, fence_language
from vis_export.formats.prose_bounds import LayoutBudget
from vis_export.images import Embedded, ImageBudget, embed_uri

Node = dict[str, Any]
Run = list[Any]  # [token class, text] or, for a tab, [token class, "\t", columns]

TAB_SIZE = 4
MARKER = "redacted"  # the class of a code run, and the type of a prose node, that is a redaction marker
CHUNK_LINES = 40
LONG_WORD = 24  # characters of prose without a break opportunity kept in one box
MAX_DEPTH = 24  # nodes below this are shown as their text: the template recurses once a level
# Typst lays a paragraph out in time that grows faster than its number of
# styled pieces (30,000 emphasised words in one paragraph: 5.7 s, 15,000: 2.4 s),
# so a paragraph of more pieces than this is shown as its text, unstyled.
MAX_PIECES = 1000
_PARAGRAPHS = frozenset({"paragraph", "block_text", "heading", "table_cell"})
LINK_SCHEMES = URL_SCHEMES - {"data"}
_PLAIN = re.compile(r"[^\x20-\x7e\n]")  # text whose columns are not simply its length
_LONG_WORD = re.compile(rf"\S{{{LONG_WORD + 1},}}")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def _width(char: str) -> int:
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 0 if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf") else 1


def wrap(runs: Sequence[Sequence[str]], columns: int) -> list[Run]:
    """``runs`` (class, text) with a newline where a line reaches ``columns``;
    a tab as its own run, with the columns to the next tab stop."""
    out: list[Run] = []
    column = 0
    for css, text in runs:
        if not _PLAIN.search(text):  # the common case: ASCII without tabs, one column a character
            pieces = []
            for index, line in enumerate(text.split("\n")):
                if index:
                    pieces.append("\n")
                    column = 0
                while column + len(line) > columns:
                    take = columns - column
                    pieces += [line[:take], "\n"]
                    line, column = line[take:], 0
                pieces.append(line)
                column += len(line)
            out.append([css, "".join(pieces)])
            continue
        piece: list[str] = []
        for char in text:
            if char in "\r\n":
                piece.append(char)
                column = 0
                continue
            if char == "\t":
                if piece:
                    out.append([css, "".join(piece)])
                    piece = []
                stop = TAB_SIZE - column % TAB_SIZE
                if column + stop > columns:
                    out.append([css, "\n"])
                    column, stop = 0, TAB_SIZE
                out.append([css, "\t", stop])
                column += stop
                continue
            width = _width(char)
            if column + width > columns:
                piece.append("\n")
                column = 0
            piece.append(char)
            column += width
        if piece:
            out.append([css, "".join(piece)])
    return out


def code(
    text: str, language: str | None, columns: int, budget: lexing.HighlightBudget | None = None, marked: bool = False
) -> Node:
    """A code node: its runs add up to ``text`` once the wrap points are taken out;
    highlighted within the document's ``budget``, plain without one. ``marked`` (a
    redacted view): each redaction marker is a run of its own, of class ``MARKER``."""
    runs: Sequence[Sequence[str]] | None = (
        budget.runs(language, text) if budget is not None and language and text else None
    )
    runs = runs if runs is not None else [("", text)]
    if marked and "[redacted: " in text:
        runs = _marker_runs(runs, text)
    wrapped = wrap(runs, columns)
    if wrapped and len(wrapped[-1]) == 2 and wrapped[-1][1].endswith("\n"):
        wrapped[-1][1] = wrapped[-1][1][:-1]  # a final newline ends the last line, as in a browser's <pre>
    return {"t": "code", "chunks": chunks(wrapped)}


def _marker_runs(runs: Sequence[Sequence[str]], text: str) -> list[tuple[str, str]]:
    """``runs`` (which add up to ``text``) cut at each marker, the marker one run of
    class ``MARKER``: the lexer's classes inside it are dropped, the text is not changed."""
    from vis_export.redaction.rules import MARKERS

    starts = list(accumulate((len(run[1]) for run in runs), initial=0))
    out: list[tuple[str, str]] = []

    def between(start: int, end: int) -> None:
        index = bisect_right(starts, start) - 1
        while start < end:
            stop = min(end, starts[index + 1])
            out.append((runs[index][0], text[start:stop]))
            start, index = stop, index + 1

    last = 0
    for found in MARKERS.finditer(text):
        between(last, found.start())
        out.append((MARKER, found.group()))
        last = found.end()
    between(last, len(text))
    return out


def chunks(runs: list[Run], lines: int = CHUNK_LINES) -> list[list[Run]]:
    """The runs in pieces of ``lines`` lines, each drawn as a paragraph of its own:
    the newline between two pieces is the paragraph break (Typst lays a paragraph
    out in time that grows faster than its runs: 60,000 runs of JSON in one took 6 s)."""
    pieces: list[list[Run]] = [[]]
    count = 0
    for run in runs:
        if len(run) == 3 or "\n" not in run[1]:
            pieces[-1].append(run)
            continue
        css, text = run
        start, end = 0, text.find("\n")
        while end != -1:
            count += 1
            if count == lines:
                if end > start:
                    pieces[-1].append([css, text[start:end]])
                pieces.append([])
                start, count = end + 1, 0
            end = text.find("\n", end + 1)
        if start < len(text):
            pieces[-1].append([css, text[start:]])
    return pieces


def words(text: str, marked: bool = False) -> Node:
    """Text, with each long word cut into boxes the template may break between;
    ``marked`` (a redacted view): each redaction marker a node of type ``MARKER``
    (never cut, and drawn as inserted)."""
    if marked and "[redacted: " in text:
        return _marker_words(text)
    if not _LONG_WORD.search(text):
        return {"t": "text", "x": text}
    parts: list[str | list[str]] = []
    last = 0
    for match in _LONG_WORD.finditer(text):
        parts.append(text[last : match.start()])
        word = match.group()
        parts.append([word[i : i + LONG_WORD] for i in range(0, len(word), LONG_WORD)])
        last = match.end()
    parts.append(text[last:])
    return {"t": "words", "c": [part for part in parts if part]}


def _marker_words(text: str) -> Node:
    from vis_export.redaction.rules import MARKERS

    parts: list[Node] = []
    last = 0
    for found in MARKERS.finditer(text):
        if found.start() > last:
            parts.append(words(text[last : found.start()]))
        parts.append({"t": MARKER, "x": found.group()})
        last = found.end()
    if last < len(text):
        parts.append(words(text[last:]))
    return {"t": "span", "c": parts}


def safe_link(url: str) -> str | None:
    """A link target a PDF reader may open: an allowed scheme (no ``data:``, no
    ``javascript:``), else ``None`` and the text is shown without a link."""
    found = _SCHEME.match(url.strip())
    return url.strip() if found and found.group(1).lower() in LINK_SCHEMES else None


class Images:
    """The image files of one document: the checked bytes under a name of their
    content, inside the private folder Typst reads from; nothing else is there.
    ``refusal``: why no image is shown at all (Typst could not decode one of them);
    ``marked``: a redacted view's (markers in a placeholder's name drawn as inserted)."""

    def __init__(self, refusal: str | None = None, marked: bool = False) -> None:
        self.files: dict[str, bytes] = {}
        self.refusal = refusal
        self.marked = marked

    def node(self, image: Embedded, name: str) -> Node:
        """The image, or a placeholder that names it and says why not."""
        if image.uri is not None and self.refusal is None:
            return {"t": "img", "src": self.path(image), "alt": name}
        refused = Embedded(refusal=image.refusal or self.refusal)
        return {"t": "refused", "c": [words(refused.placeholder(name).unescape(), self.marked)]}

    def path(self, image: Embedded) -> str:
        assert image.uri is not None
        header, _, payload = image.uri.partition(",")
        data = base64.b64decode(payload)
        name = f"/images/{hashlib.sha256(data).hexdigest()[:32]}.{header[len('data:image/') :].split(';')[0]}"
        self.files[name] = data
        return name


class ProseTree:
    """Markdown to nodes, with one parser for a document (and one bound on its
    lists and tables, ``prose_bounds``).

    ``attachment`` finds an ``attachment:`` image of the session (as for HTML);
    ``budget`` is the document's image budget; ``columns(indent)`` is how many
    columns of code fit at an indent (points)."""

    def __init__(
        self,
        attachment: Callable[[str], Embedded | None],
        budget: ImageBudget | None,
        images: Images,
        columns: Callable[[float], int],
        indents: Mapping[str, float],
        highlighting: lexing.HighlightBudget | None = None,
        marked: bool = False,
    ):
        """``highlighting``: the document's lexing budget, which colours fenced code as a
        code block of its language is coloured; ``None``: fenced code plain. ``marked``:
        the prose of a redacted view, whose markers are drawn as inserted."""
        import mistune

        from vis_export.formats.autolink import url_plugin

        self._parse = mistune.create_markdown(
            renderer=None, plugins=["table", "strikethrough", "task_lists", url_plugin(marked), "footnotes"]
        )
        self._parse.before_render_hooks.insert(0, LayoutBudget().hook)  # Typst lays a block out whole
        self.highlighting = highlighting
        self.attachment = attachment
        self.budget = budget
        self.images = images
        self.columns = columns
        self.indents = indents
        self.marked = marked

    def words(self, text: str) -> Node:
        return words(text, self.marked)

    def __call__(self, markdown: str, indent: float = 0.0) -> list[Node]:
        tokens = self._parse(markdown)
        return self._nodes(tokens, 0, indent)

    def _nodes(self, tokens: Any, depth: int, indent: float) -> list[Node]:
        nodes = []
        for token in _joined(tokens) if self.marked and tokens else tokens or ():
            node = self._node(token, depth, indent)
            if node is not None:
                nodes.append(node)
        return nodes

    def _node(self, token: Mapping[str, Any], depth: int, indent: float) -> Node | None:
        kind = token.get("type")
        attrs = token.get("attrs") or {}
        if depth >= MAX_DEPTH:
            return self.words(plain_text(token))
        if kind in _PARAGRAPHS and _pieces(token) > MAX_PIECES:
            return {"t": "p", "c": [self.words(plain_text(token))]}
        children = token.get("children")
        inner = depth + 1

        def kids(extra: float = 0.0) -> list[Node]:
            return self._nodes(children, inner, indent + extra)

        simple = {
            "paragraph": "p",
            "block_text": "span",
            "emphasis": "em",
            "strong": "strong",
            "strikethrough": "del",
            "table_head": "row",
            "table_row": "row",
        }
        if kind in ("text", "inline_html", "block_html"):
            return self.words(token.get("raw", ""))
        if kind in simple:
            return {"t": simple[kind], "c": kids()}
        if kind == "codespan":
            return {"t": "codespan", "c": [self.words(token.get("raw", ""))]}
        if kind == "softbreak":
            return {"t": "text", "x": " "}
        if kind == "linebreak":
            return {"t": "br"}
        if kind == "thematic_break":
            return {"t": "hr"}
        if kind == "heading":  # its level in the outline, where a turn's heading is 1: as HTML's, less one
            return {"t": "h", "level": min(6, int(attrs.get("level", 1)) + HEADING_OFFSET) - 1, "c": kids()}
        if kind == "block_quote":
            return {"t": "quote", "c": kids(self.indents["quote"])}
        if kind == "block_code":
            language = fence_language(attrs.get("info"))
            return code(token.get("raw", ""), language, self.columns(indent), self.highlighting, self.marked)
        if kind == "footnote_ref":
            return {"t": "fnref", "n": int(attrs.get("index", 0))}
        if kind == "footnotes":
            return {"t": "footnotes", "c": kids()}
        if kind == "footnote_item":
            return {"t": "fnitem", "n": int(attrs.get("index", 0)), "c": kids()}
        if kind == "list":
            start = attrs.get("start", 1)
            return {
                "t": "list",
                "ordered": bool(attrs.get("ordered")),
                "start": start if isinstance(start, int) and 0 <= start < 10**9 else 1,
                "c": kids(self.indents["list"]),
            }
        if kind in ("list_item", "task_list_item"):
            checked = attrs.get("checked") if kind == "task_list_item" else None
            return {"t": "item", "task": None if checked is None else bool(checked), "c": kids()}
        if kind == "link":
            return {"t": "link", "url": safe_link(str(attrs.get("url", ""))), "c": kids()}
        if kind == "image":
            return self._image(str(attrs.get("url", "")), plain_text(token), kids())
        if kind == "table":
            return self._table(kids())
        if kind == "table_body":
            return {"t": "body", "c": kids()}
        if kind == "table_cell":
            return {"t": "cell", "head": bool(attrs.get("head")), "align": attrs.get("align"), "c": kids()}
        if kind == "blank_line":
            return None
        return {"t": "span", "c": kids()} if children else self.words(str(token.get("raw", "")))

    def _image(self, url: str, alt: str, label: list[Node]) -> Node:
        """As ``html_prose``: an attachment of the session or a ``data:image``,
        checked by ``images``; any other address is a link, so nothing is fetched."""
        if url.startswith("attachment:"):
            found = self.attachment(url[len("attachment:") :])
            if found is None:
                return {"t": "missing", "c": [self.words(alt or url)]}
            return self.images.node(found, alt or "image")
        if url.strip().lower().startswith(EMBEDDABLE_IMAGES):
            return self.images.node(embed_uri(url, self.budget), alt or "image")
        return {"t": "link", "url": safe_link(url), "c": label or [self.words(url)]}

    @staticmethod
    def _table(parts: list[Node]) -> Node:
        rows: list[Node] = []
        for part in parts:
            rows += part["c"] if part["t"] == "body" else [part]
        width = max((len(row["c"]) for row in rows), default=0)
        empty: Node = {"t": "cell", "head": False, "align": None, "c": []}
        return {"t": "table", "cols": width, "c": [row["c"] + [empty] * (width - len(row["c"])) for row in rows]}


def _joined(tokens: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``tokens`` with each run of text tokens one token: mistune makes an escaped
    character a token of its own (``\\[redacted: …]``, where the view redacted an
    escaped secret), which would cut a marker in two."""
    out: list[Mapping[str, Any]] = []
    for token in tokens:
        if token.get("type") == "text" and out and out[-1].get("type") == "text":
            out[-1] = {"type": "text", "raw": str(out[-1].get("raw", "")) + str(token.get("raw", ""))}
        else:
            out.append(token)
    return out


def _pieces(token: Mapping[str, Any]) -> int:
    """How many nodes are below a token."""
    count, stack = 0, list(token.get("children") or ())
    while stack:
        count += 1
        stack.extend(stack.pop().get("children") or ())
    return count


def plain_text(token: Mapping[str, Any]) -> str:
    """The text of a token and all below it, without recursion (any depth)."""
    out: list[str] = []
    stack = [token]
    while stack:
        current = stack.pop()
        if isinstance(current.get("raw"), str):
            out.append(current["raw"])
        stack.extend(reversed(current.get("children") or ()))
    return "".join(out)
