"""Output formats: one module per format, each a pure function of the model.

``FORMATS`` maps a ``--to`` name to its ``Format``; adding a format is adding a
module and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vis_export.formats.options import ExportOptions
from vis_export.formats.projector import Projector
from vis_export.plugins import FORMATS_GROUP, plugins
from vis_export.policy import SessionView, visible_session

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

# The media type of each built-in format's output, bare (a server adds the charset to text): here, not only on its
# ``Format``, so that copying names the flavours of a clipboard without building the HTML format (Jinja2, Pygments).
MEDIA_TYPES: dict[str, str] = {
    "json": "application/json",
    "text": "text/plain",
    "markdown": "text/markdown",
    "html": "text/html",
    "pdf": "application/pdf",
    "provider": "application/x-ndjson",
}


@dataclass(frozen=True, slots=True)
class Format:
    """A format: its functions take the policy's view of a session (``SessionView``,
    R2), never the loaded session.

    Whatever a caller hands them, they receive that view: a function given a
    loaded session (a plugin's, or one called from outside) is handed the view
    made of it under ``options.reasoning``, and a view is passed on as it is.
    """

    name: str
    extension: str
    render: Callable[[SessionView, ExportOptions], Any]
    # Several sessions written to one stream (standard output); None for a format
    # whose output is one document (HTML, PDF): several need a directory.
    render_many: Callable[[Sequence[SessionView], ExportOptions], Any] | None
    # The output in pieces, so a large session is written without one big string.
    pieces: Callable[[SessionView, ExportOptions], Iterator[str]] | None = None
    binary: bool = False
    # The modules its rendering imports on first use: the workers of a local
    # Dask cluster are forked from a process that imported them once (those
    # that import: one that fails is left to the tasks that need it).
    imports: tuple[str, ...] = ()
    # Raises ``extras.MissingExtra`` when a library the format needs with these
    # options is not installed: a job checks once, before reading anything,
    # rather than failing each session with the same line.
    needs: Callable[[ExportOptions], None] | None = None
    # What the output is, for a server's download and a clipboard's flavour (``MEDIA_TYPES``); None where unknown
    # (a plugin's format that does not say).
    media_type: str | None = None

    def __post_init__(self) -> None:
        for name in ("render", "render_many", "pieces"):
            function = getattr(self, name)
            if function is not None and not isinstance(function, _GivenTheView):
                object.__setattr__(self, name, _GivenTheView(function, many=name == "render_many"))


class _GivenTheView:
    """A format's function, called with the policy's view of what it is given."""

    __slots__ = ("function", "many")

    def __init__(self, function: Callable[[Any, ExportOptions], Any], many: bool):
        self.function = function
        self.many = many

    def __call__(self, given: Any, options: ExportOptions) -> Any:
        if self.many:
            return self.function(
                [visible_session(session, options.reasoning, options.redaction) for session in given], options
            )
        return self.function(visible_session(given, options.reasoning, options.redaction), options)


def _json() -> Format:
    from vis_export.formats import json as module

    return Format(
        "json",
        "json",
        module.session_json,
        module.sessions_json,
        imports=(module.__name__,),
        media_type=MEDIA_TYPES["json"],
    )


def _text() -> Format:
    from vis_export.formats.text import TextProjector

    return _projected("text", "txt", TextProjector)


def _markdown() -> Format:
    from vis_export.formats.markdown import MarkdownProjector

    return _projected("markdown", "md", MarkdownProjector)


def _projected(name: str, extension: str, projector: type[Projector], one_document: bool = False) -> Format:
    def render(session: SessionView, options: ExportOptions) -> str:
        return projector(options).render(session)

    def render_many(sessions: Sequence[SessionView], options: ExportOptions) -> str:
        return "\n".join(render(session, options) for session in sessions)

    def pieces(session: SessionView, options: ExportOptions) -> Iterator[str]:
        return projector(options).pieces(session)

    many = None if one_document else render_many
    return Format(name, extension, render, many, pieces, imports=(projector.__module__,), media_type=MEDIA_TYPES[name])


def _html() -> Format:
    from vis_export.formats.html import HtmlProjector

    return replace(_projected("html", "html", HtmlProjector, one_document=True), imports=_PAGE_IMPORTS)


# What laying out a page imports: modules that import or raise ImportError
# (the Typst engine's jobs import WeasyPrint in vain: a few tenths of a second,
# once, while the job starts).
_PAGE_IMPORTS = ("vis_export.formats.html", "jinja2", "mistune", "nh3", "pygments.lexers")


def _pdf() -> Format:
    from vis_export.formats.pdf import check_engine, render_pdf  # says which extra its engine needs

    imports = (*_PAGE_IMPORTS, "vis_export.formats.pdf", "vis_export.formats.pdf_preload", "pypdf")
    return Format(
        "pdf",
        "pdf",
        render_pdf,
        None,
        None,
        binary=True,
        imports=imports,
        needs=check_engine,
        media_type=MEDIA_TYPES["pdf"],
    )


def _provider() -> Format:
    from vis_export.formats import provider as module

    lines, many = module.session_lines, module.sessions_lines
    return Format("provider", "jsonl", lines, many, imports=(module.__name__,), media_type=MEDIA_TYPES["provider"])


FORMATS: dict[str, Callable[[], Format]] = {
    "json": _json,
    "text": _text,
    "markdown": _markdown,
    "html": _html,
    "pdf": _pdf,
    "provider": _provider,
}
ALIASES: dict[str, str] = {"md": "markdown", "txt": "text"}


def _plugins() -> dict[str, EntryPoint]:
    return plugins(FORMATS_GROUP, (*FORMATS, *ALIASES))


def format_names() -> list[str]:
    """The built-in formats, their aliases, and those installed packages add."""
    return [*FORMATS, *ALIASES, *_plugins()]


# The format-specific options (``ExportOptions`` fields) each format uses: the
# command line warns about one given to a format that ignores it (a plugin's
# format is taken to use them all).
_PROJECTED = frozenset({"timestamps", "no_tools", "tool_output_limit"})
_PAGE = _PROJECTED | {"attachments", "template_dir", "no_highlight"}
TAKES: dict[str, frozenset[str]] = {
    "json": frozenset(),
    "text": _PROJECTED,
    "markdown": _PROJECTED | {"attachments", "front_matter"},
    "html": _PAGE | {"theme"},
    "pdf": _PAGE - {"timestamps"} | {"paper", "pdf_engine"},  # a PDF always shows times
    "provider": frozenset({"attachments", "provider_format"}),
}
SPECIFIC_OPTIONS = frozenset().union(*TAKES.values())


def formats_taking(option: str) -> list[str]:
    """The formats that use a format-specific option, for a person's message."""
    return [name for name, takes in TAKES.items() if option in takes]


def get_format(name: str) -> Format:
    """The format called ``name``: built in, an alias, or added by a package (``vis_export.plugins``)."""
    name = ALIASES.get(name, name)
    if name in FORMATS:
        return FORMATS[name]()
    plugin = _plugins().get(name)
    if plugin is None:
        raise ValueError(f"unknown format {name!r}; choose one of {', '.join(format_names())}")
    made = plugin.load()()
    if not isinstance(made, Format):
        raise TypeError(f"format plugin {name!r} ({plugin.value}) did not return a vis_export.formats.Format")
    return made
