"""The ``vis-export`` command: option parsing and messages over ``vis_export.api``.

Every failure is one line on standard error naming the file and the place,
with exit status 1; tracebacks only with ``--debug``.
"""

from __future__ import annotations

import json
import math
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vis_export.choices import (
    DEFAULT_REASONING,
    INDEX_REASONING,
    PAPERS,
    PDF_ENGINES,
    PROVIDER_FORMATS,
    REASONING_CHOICES,
    THEMES,
    check_reasoning,
)
from vis_export.errors import VisExportError
from vis_export.output import STOPPING
from vis_export.searchindex.engines import BUILTIN_ENGINES, MAX_THREADS, engine_names
from vis_export.timefmt import millis, utc
from vis_export.version import __version__

if TYPE_CHECKING:
    from vis_export.formats.options import ExportOptions, ToolOutputLimit
    from vis_export.redaction import Redaction

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def echo(text: str, err: bool = False) -> None:
    """Print a line: to a person on standard error (always escaped, R6), or data on
    standard output (escaped only when that is a terminal)."""
    from vis_export.terminal import escaped, for_stream

    click.echo(escaped(text) if err else for_stream(text, sys.stdout), err=err)


class Reporter:
    """Problem lines on stderr, remembering whether anything failed. (No
    dataclass: one is made by compiling its methods, near a millisecond of
    every command.)"""

    def __init__(self, redaction: Redaction | None = None) -> None:
        self.failed = False
        self.refused: list[str] = []  # sources with a session that could not be read
        # With --redact, a line quoting a source (a key in a location) says no secret either (R8).
        self.redaction = redaction

    def problem(self, line: str) -> None:
        self.failed = True
        self.warning(line)

    def warning(self, line: str) -> None:
        if self.redaction is not None:
            from vis_export.redaction.redact import redacted_line

            line = redacted_line(line, self.redaction)
        echo(line, err=True)

    def results(self, results: Iterable[Any]) -> list[Any]:
        """Report every problem; return the sessions that loaded.

        Problems of a session that loaded anyway (``--lenient``) are warnings:
        they say what was left out or shown as inert data, and do not fail.
        """
        from vis_export.reporting import report_reading

        sessions = []
        for result in results:
            if result.session is None:
                self.refused.append(result.source)
            report_reading(self, result.source, result.session is not None, result.problems)
            if result.session is not None:
                sessions.append(result.session)
        return sessions


class VisExportGroup(click.Group):
    """Turns unexpected exceptions into one line unless ``--debug`` is given."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            echo("vis-export: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(1)
        except VisExportError as failure:  # expected, and said in one line: never a traceback
            echo(failure.line(), err=True)
            sys.exit(failure.status)
        except Exception as error:  # noqa: BLE001 - the last line of defence
            if ctx.params.get("debug") or (ctx.obj or {}).get("debug"):
                raise
            echo(f"vis-export: error: {error}", err=True)
            sys.exit(1)


@click.group(cls=VisExportGroup, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="vis-export")
@click.option("--debug", is_flag=True, help="Show a traceback for unexpected errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Export stored Vis agent conversations.

    SOURCE is a session JSON file, a JSON Lines file of messages, a gateway event
    log, a Vis SQLite store (vis.db), a directory of these (searched recursively),
    or - for standard input.

    \b
    Examples:
      vis-export validate sessions/
      vis-export sessions ~/.vis/vis.db
      vis-export index ~/.vis/vis.db --index idx && vis-export search parseConfig --index idx
      vis-export convert chat.json --to json -o chat.canonical.json
      vis-export convert ~/.vis/vis.db --to json -o exports/
    """
    ctx.obj = {"debug": debug}
    # SIGTERM and SIGHUP (the terminal closed) unwind like an exception, so an
    # export being written, or the index serve keeps, leaves no temporary file.
    for number in STOPPING - {signal.SIGINT}:
        signal.signal(number, lambda number, frame: sys.exit(128 + number))


Command = TypeVar("Command", bound=Callable[..., Any])


def _format_names() -> list[str]:
    """The formats, imported when ``--to`` is given or shown: a command that
    takes no format (``index``) does not import them."""
    from vis_export.formats import format_names

    return format_names()


def _message_roles() -> tuple[str, ...]:
    from vis_export.contract import MESSAGE_ROLES

    return MESSAGE_ROLES


def _indexed_types() -> tuple[str, ...]:
    from vis_export.searchindex.documents import INDEXED_TYPES

    return INDEXED_TYPES


class _LateChoice(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2
    """A choice whose names are looked up when the option is given or shown,
    which a command that does not take the option (a no-op index rerun) need
    not pay for: names installed packages may add (finding them reads every
    installed package's metadata), or those of modules the command does not
    import otherwise (the contract's roles, the index's block types). A
    built-in name given is taken as it is, without looking the others up
    (``--engine tantivy`` on a no-op rerun: the look-up imports
    ``importlib.metadata`` and reads every installed package's metadata,
    more than the rest of the rerun)."""

    def __init__(self, names: Callable[[], Sequence[str]], builtin: Sequence[str] = ()):
        self.names = names
        self.builtin = builtin
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self.names())

    @choices.setter
    def choices(self, _: object) -> None:
        """``click.Choice`` sets its choices as it is made: they are found later."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.builtin:  # case-sensitive, and no context normalises names: the choice itself
            return value
        return super().convert(value, param, ctx)


class ToolOutputLimitType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2
    """``--tool-output-limit``: a number not below 0, or ``all`` (nothing cut, PDF's default limit included)."""

    name = "N|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> ToolOutputLimit:
        if isinstance(value, int) or value is None:
            return value
        if str(value).strip().lower() == "all":
            return "all"
        try:
            number = int(value)
        except ValueError:
            number = -1
        if number < 0:
            self.fail(f"{value!r} is neither a number of 0 or more nor 'all'", param, ctx)
        return number


def reasoning_option(help: str) -> Callable[[Command], Command]:
    """``--reasoning none|visible|all`` (the policy, R2), as ``convert`` and ``serve`` take it."""
    return click.option(
        "--reasoning", type=click.Choice(REASONING_CHOICES), default=DEFAULT_REASONING, show_default=True, help=help
    )


def redact_rule_options(command: Command) -> Command:
    """The rules of redaction (R8): custom patterns, an allowlist, a rules file."""
    for option in reversed(
        [
            click.option(
                "--redact-pattern",
                "redact_patterns",
                multiple=True,
                metavar="REGEX",
                help="Redact what this expression finds too (its group 'secret', else its first group, else all "
                "it matches); repeatable; implies --redact.",
            ),
            click.option(
                "--redact-allow",
                "redact_allow",
                multiple=True,
                metavar="REGEX",
                help="Keep a find this expression matches in (repeatable); implies --redact.",
            ),
            click.option(
                "--redact-rules",
                type=click.Path(exists=True, dir_okay=False, path_type=Path),
                default=None,
                metavar="FILE",
                help="A TOML file of [[pattern]] rules (regex, kind) and an allow list; implies --redact.",
            ),
        ]
    ):
        command = option(command)
    return command


def redact_options(command: Command) -> Command:
    """``--redact`` and its rules, as ``convert``, ``index``, ``serve`` and ``show`` take them."""
    return click.option(
        "--redact",
        is_flag=True,
        help="Replace secrets and personal data (keys, tokens, passwords, e-mail addresses, home folder user "
        "names ...) with numbered markers in every output.",
    )(redact_rule_options(command))


def _redaction(redact: bool, patterns: Sequence[str], allow: Sequence[str], rules: Path | None) -> Redaction | None:
    """The rules the redaction options ask for (``None``: no redaction); a bad rule is a usage error."""
    if not (redact or patterns or allow or rules):
        return None
    from vis_export.extras import require

    require("detect_secrets", "--redact")  # a missing extra: its one line, as for every command
    require("re2", "--redact")
    from vis_export.redaction import Redaction, RulesError, read_rules

    try:
        given = read_rules(rules) if rules is not None else Redaction()
        return Redaction(
            given.patterns + tuple(("custom", pattern) for pattern in patterns), given.allow + tuple(allow)
        )
    except RulesError as error:
        raise click.UsageError(str(error)) from None


sources_argument = click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")


def _dask_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:  # click calls this for an option not given too: nothing to load then
        return None
    from vis_export.distributed.cluster import check_address

    try:
        return check_address(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _seconds(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A number of seconds, ``inf`` included; ``nan`` (which ``FloatRange`` lets through) is none."""
    if math.isnan(value):
        raise click.BadParameter("not a number of seconds")
    return value


dask_option = click.option(
    "--dask",
    default=None,
    callback=_dask_address,
    metavar="ADDRESS|local[:N]",
    help="Run on a Dask cluster: a scheduler (tcp://HOST:8786), or local:N worker processes (local: one per "
    "core). Sources and output must be at the same path on every worker. Needs the 'dask' extra.",
)


def _read(sources: Sequence[str], lenient: bool = False) -> Iterable[Any]:
    from vis_export.sources import read

    return read(sources, lenient=lenient)


@main.command(context_settings=CONTEXT)
@sources_argument
@click.option("--json", "as_json", is_flag=True, help="One JSON object per source file on standard output.")
def validate(sources: Sequence[str], as_json: bool) -> None:
    """Check sources against their contracts (Vis, Lonis).

    Prints every problem as FILE: LOCATION: message on standard error and exits
    with 1 if there is any, 0 when everything is valid.

    \b
    Examples:
      vis-export validate session.json
      vis-export validate --json sessions/ | jq '.[] | select(.valid | not)'
    """
    from vis_export.api import validation_reports

    reporter = Reporter()
    reports = []
    for report in validation_reports(sources):
        reports.append(report)
        reporter.failed |= not report.valid
        if as_json:
            continue
        for number, kind, verdict in report.blocks:
            echo(f"{report.file}: block {number} ({kind}): sha256 {verdict.content_hash}; {verdict}")
        for problem in report.problems:
            echo(problem.line(report.file), err=True)
        for warning in report.warnings:
            echo(warning.line(report.file).replace(": ", ": warning: ", 1), err=True)
    if as_json:
        echo(json.dumps([report.to_json() for report in reports], ensure_ascii=False, indent=2))
    else:
        bad = sum(1 for report in reports if not report.valid)
        sessions = sum(report.sessions for report in reports)
        if bad:
            echo(f"{bad} of {len(reports)} file(s) invalid, {sessions} valid session(s)", err=True)
        else:
            echo(f"{len(reports)} file(s) valid, {sessions} session(s)", err=True)
    sys.exit(1 if reporter.failed else 0)


@main.command(context_settings=CONTEXT)
@sources_argument
@click.option("--json", "as_json", is_flag=True, help="A JSON array of sessions on standard output.")
def sessions(sources: Sequence[str], as_json: bool) -> None:
    """List sessions: id, title, messages, first and last time (UTC).

    \b
    Examples:
      vis-export sessions ~/.vis/vis.db
      vis-export sessions --json exports/ | jq -r '.[].id'
    """
    from vis_export.listing import SessionSummary
    from vis_export.strings import columns, fit, single_line
    from vis_export.terminal import escaped

    reporter = Reporter()
    rows = [SessionSummary.of(s).row() for s in reporter.results(_read(sources))]
    if as_json:
        echo(json.dumps(rows, ensure_ascii=False, indent=2))
    elif rows:
        where = any("where" in r for r in rows)  # imported transcripts: their working directory
        table = [("ID", "TITLE", "MESSAGES", "FIRST", "LAST") + (("WHERE",) if where else ())] + [
            (
                single_line(r["id"]),
                single_line(r["title"] or ""),
                str(r["messages"]),
                utc(r["first_at"]),
                utc(r["last_at"]),
            )
            + ((single_line(r.get("where") or ""),) if where else ())
            for r in rows
        ]
        # Measured as shown: on a terminal, a control character is shown as its escape.
        shown: list[tuple[str, ...]] = [tuple(map(escaped, row)) if sys.stdout.isatty() else row for row in table]
        widths = [min(max(columns(row[i]) for row in shown), 48) for i in range(len(table[0]))]
        for row in shown:
            cells = [fit(cell, width) for cell, width in zip(row, widths, strict=True)]
            echo("  ".join(cells).rstrip())
    sys.exit(1 if reporter.failed else 0)


@main.command(context_settings=CONTEXT)
@sources_argument
@click.option(
    "--to",
    "to",
    type=_LateChoice(_format_names),
    required=True,
    help="Output format: json, text, markdown (md), html, pdf, provider (chat messages, JSON Lines).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=True, file_okay=True),
    default=None,
    help="A file for one session; a directory (an existing one, a name ending in /, or, when there are several "
    "sessions, a name without the format's extension), one <session_id>.<ext> each; standard output when absent "
    "or -.",
)
@reasoning_option("Which reasoning to keep; 'all' authorises private reasoning.")
@click.option("--session", "session_ids", multiple=True, metavar="ID", help="Only this session (repeatable).")
@click.option("--timestamps", is_flag=True, help="Times in message headers (text, markdown, html).")
@click.option("--no-tools", is_flag=True, help="Leave tool blocks out (text, markdown, html, pdf).")
@click.option(
    "--tool-output-limit",
    type=ToolOutputLimitType(),
    metavar="N|all",
    default=None,
    help="Keep the first N characters of each tool output, then a visible marker (text, markdown, html); "
    "in pdf its first and last lines, N in all (default 60), and a line saying how many are left out. "
    "'all' keeps everything.",
)
@click.option("--front-matter", is_flag=True, help="YAML front matter: session id, title, created, model (markdown).")
@click.option(
    "--attachments",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Where attachment bytes live (DIR/<attachment_id>): attachments become links or images.",
)
@click.option(
    "--lenient", is_flag=True, help="Export what can be shown from invalid input; print each problem as a warning."
)
@click.option(
    "--template-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Templates that override the built-in ones by name (html, pdf).",
)
@click.option(
    "--theme",
    type=click.Choice(THEMES),
    default=None,
    help="Force a colour theme (html); by default it follows the reader's system.",
)
@click.option("--no-highlight", is_flag=True, help="Code without syntax colours (html, pdf).")
@click.option("--paper", type=click.Choice(PAPERS), default=PAPERS[0], show_default=True, help="Page size (pdf).")
@click.option(
    "--pdf-engine",
    type=click.Choice(PDF_ENGINES),
    default=PDF_ENGINES[0],
    show_default=True,
    help="What typesets the PDF: WeasyPrint from the HTML templates, or Typst, several times faster (the typst extra).",
)
@click.option(
    "--provider-format",
    type=click.Choice(PROVIDER_FORMATS),
    default=PROVIDER_FORMATS[0],
    show_default=True,
    help="Chat message format (provider).",
)
@redact_options
@click.option(
    "--redact-report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Write what redaction took out (places and kinds, never values) as JSON; implies --redact.",
)
@dask_option
def convert(
    sources: Sequence[str],
    to: str,
    output: str | None,
    reasoning: str,
    session_ids: Sequence[str],
    timestamps: bool,
    no_tools: bool,
    tool_output_limit: ToolOutputLimit,
    front_matter: bool,
    attachments: Path | None,
    lenient: bool,
    template_dir: Path | None,
    theme: str | None,
    no_highlight: bool,
    paper: str,
    pdf_engine: str,
    provider_format: str,
    redact: bool,
    redact_patterns: Sequence[str],
    redact_allow: Sequence[str],
    redact_rules: Path | None,
    redact_report: Path | None,
    dask: str | None,
) -> None:
    """Convert sessions to another format.

    Invalid sessions are reported (as validate does) and skipped; the others are
    still written, and the exit status is 1. With --lenient, what can be shown
    safely is exported anyway and the problems are warnings. Files are written
    atomically: a failed export never leaves a partial file.

    \b
    Examples:
      vis-export convert golden/input/session.json --to html -o chat.html
      vis-export convert vis.db --to pdf --paper Letter -o exports/
      vis-export convert vis.db --to pdf --pdf-engine typst -o exports/
      vis-export convert vis.db --to provider --provider-format anthropic > replay.jsonl
      vis-export convert chat.jsonl --to md --front-matter --timestamps -o chat.md
      vis-export convert vis.db --to text --session 01JSESSION | less
      vis-export convert vis.db --to markdown --reasoning none --no-tools -o exports/
      vis-export convert archive/ --to pdf -o /shared/pdf/ --dask tcp://scheduler:8786
      vis-export convert archive/ --to pdf -o pdf/ --dask local:4
      vis-export convert vis.db --to html -o shared/ --redact --redact-report shared/redacted.json
    """
    from vis_export.formats import get_format
    from vis_export.formats.options import ExportOptions
    from vis_export.jobs.conversion import Outcome, convert_to_stream, convert_with

    if dask is not None and output in (None, "-"):
        raise click.UsageError("--dask writes files: name an output directory with -o")
    options = ExportOptions(
        reasoning=check_reasoning(reasoning),
        timestamps=timestamps,
        no_tools=no_tools,
        tool_output_limit=tool_output_limit,
        attachments=attachments,
        front_matter=front_matter,
        template_dir=template_dir,
        theme=theme,
        no_highlight=no_highlight,
        paper=paper,
        pdf_engine=pdf_engine,
        provider_format=provider_format,
        redact=_redaction(redact or redact_report is not None, redact_patterns, redact_allow, redact_rules),
    )
    reporter = Reporter(redaction=options.redaction)
    fmt = get_format(to)
    if fmt.needs is not None:
        fmt.needs(options)  # a missing extra: one line, before anything is read
    if redact_report is not None:
        _write_redact_report(redact_report, sources, options, session_ids, lenient)
    _warn_unused_options(reporter, fmt.name)
    if template_dir is not None and fmt.name in ("html", "pdf"):  # before any reading: hours, on an archive
        from vis_export.formats.html import template_problems

        for line in template_problems(template_dir):
            reporter.problem(line)
        if reporter.failed:
            sys.exit(1)
    if output is None or output == "-":
        outcome = Outcome()
        try:
            convert_to_stream(
                sources,
                to,
                sys.stdout,
                options,
                session_ids=session_ids,
                lenient=lenient,
                report=reporter,
                outcome=outcome,
            )
        finally:
            if outcome.refused and not lenient:
                _hint_lenient(outcome.refused)
        sys.exit(1 if outcome.failed else 0)

    def rendering(session: Any) -> None:
        if fmt.binary and sys.stderr.isatty():  # a long PDF takes seconds: say what is happening
            echo(f"vis-export: rendering {session.id} ({len(session.messages)} messages) to {fmt.name}…", err=True)

    with _progress_bar() as progress:
        outcome = convert_with(
            sources,
            to,
            output,
            options,
            session_ids=session_ids,
            lenient=lenient,
            dask=dask,
            report=reporter,
            progress=progress,
            rendering=rendering,
        )
    if outcome.refused and not lenient:
        _hint_lenient(outcome.refused)
    sys.exit(1 if outcome.failed else 0)


def _write_redact_report(
    path: Path, sources: Sequence[str], options: ExportOptions, session_ids: Sequence[str], lenient: bool
) -> None:
    """``--redact-report``: what redaction takes out of the sessions converted (read once more, on their own)."""
    from vis_export.output import write_atomic
    from vis_export.redaction.report import scan

    assert options.redaction is not None
    sessions = [r.session for r in _read(sources, lenient) if r.session is not None]
    chosen = [s for s in sessions if not session_ids or s.id in session_ids]
    report = scan(chosen, options.reasoning, options.redaction)
    write_atomic(path, json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")


def _hint_lenient(refused: list[str]) -> None:
    """Point to --lenient when it would export something of a refused source."""
    from vis_export.sources import STDIN, read

    files = sorted({name for name in refused if name not in (STDIN, "<stdin>") and Path(name).is_file()})
    rescued = [name for name in files if any(r.session is not None for r in read(name, lenient=True))]
    if rescued:
        echo(
            f"vis-export: {len(rescued)} refused source(s) can be exported in part with --lenient "
            f"(what can be shown safely, with each problem as a warning): {', '.join(rescued)}",
            err=True,
        )


def _warn_unused_options(reporter: Reporter, format_name: str) -> None:
    """Say so when an option given on the command line does nothing for this format."""
    from vis_export.formats import SPECIFIC_OPTIONS, TAKES, formats_taking

    ctx = click.get_current_context()
    for param in ctx.command.params:
        name = param.name or ""
        if (
            name in SPECIFIC_OPTIONS
            and name not in TAKES.get(format_name, SPECIFIC_OPTIONS)
            and ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        ):
            flag = param.opts[-1] if isinstance(param, click.Option) else name
            reporter.warning(
                f"vis-export: warning: {flag} does not apply to {format_name} "
                f"(only to {', '.join(formats_taking(name))}); ignored"
            )


@contextmanager
def _progress_bar(label: str = "Exporting") -> Iterator[Callable[[int], Callable[[], None]]]:
    """``_progress`` for a job that says its total once it knows it: what it is
    given, called with the total, returns what to call per item done."""
    bars: list[_progress] = []

    def start(total: int) -> Callable[[], None]:
        bars.append(_progress(total, label))
        advance: Callable[[], None] = bars[-1].__enter__()
        return advance

    try:
        yield start
    finally:
        for bar in bars:
            bar.__exit__(None, None, None)


class _progress:
    """A progress bar on stderr when it is a terminal and the work is more than one item."""

    def __init__(self, total: int, label: str = "Exporting"):
        self.bar = (
            click.progressbar(length=total, label=label, file=sys.stderr)
            if (total > 1 and sys.stderr.isatty())
            else None
        )

    def __enter__(self) -> Any:
        if self.bar is None:
            return lambda: None
        bar = self.bar.__enter__()
        return lambda: bar.update(1)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _millis(value: str | None, option: str) -> int | None:
    """``2025-02-19``, ``2025-02-19T21:20:00`` (UTC unless it says otherwise) or ms."""
    if value is None:
        return None
    try:
        return millis(value)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint=option) from None


def _index_location(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | str | None:
    """``--index``: a PostgreSQL URI as given, else a directory."""
    from vis_export.searchindex.target import is_database

    if value is None:  # serve's, which is optional
        return None
    if is_database(value):
        return value
    path: Path = click.Path(file_okay=False, path_type=Path).convert(value, param, ctx)
    return path


def index_option(help: str, required: bool = True) -> Callable[[Command], Command]:
    """``--index DIR|URI``, as ``index``, ``search`` and ``serve`` take it."""
    return click.option(
        "--index", "location", callback=_index_location, required=required, metavar="DIR|URI", help=help
    )


@main.command(context_settings=CONTEXT, short_help="Add or update sessions in a search index.")
@sources_argument
@index_option("The index directory (created if needed), or a postgresql:// URI (tables created if needed).")
@click.option(
    "--engine",
    type=_LateChoice(engine_names, BUILTIN_ENGINES),
    default=None,
    help="Search engine: by default an existing index's own, else tantivy; another one than an existing "
    "index's is refused.",
)
@click.option(
    "--reasoning",
    type=click.Choice(INDEX_REASONING),
    default=INDEX_REASONING[0],
    show_default=True,
    help="Index visible reasoning too; private reasoning is never indexed.",
)
@click.option("--prune", is_flag=True, help="Remove sessions that are no longer in the sources.")
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=0,
    show_default=True,
    callback=_seconds,
    metavar="SECONDS",
    help="How long to wait for another job writing to the same index (inf: as long as it takes).",
)
@click.option(
    "--threads",
    "--jobs",  # its first name, kept for the scripts that use it: it never meant jobs
    "threads",
    type=click.IntRange(min=0, max=MAX_THREADS),
    default=0,
    metavar="N",
    help=f"Indexing threads (tantivy, at most {MAX_THREADS}, 16 MiB each); 0 lets the engine choose "
    "(with --dask, one: the workers have the cores). --jobs is the same.",
)
@click.option("--lenient", is_flag=True, help="Index what can be read from invalid input, with warnings.")
@click.option(
    "--origin",
    default=None,
    metavar="NAME",
    help="PostgreSQL: where the sessions come from (default: this host's name); --prune removes only its own.",
)
@redact_options
@dask_option
def index(
    sources: Sequence[str],
    location: Path | str,
    engine: str | None,
    reasoning: str,
    prune: bool,
    wait: float,
    threads: int,
    lenient: bool,
    origin: str | None,
    redact: bool,
    redact_patterns: Sequence[str],
    redact_allow: Sequence[str],
    redact_rules: Path | None,
    dask: str | None,
) -> None:
    """Add or update the sessions of SOURCE... in a search index.

    Each session's documents are replaced when its content changed; a rerun over
    unchanged sources changes nothing and says "0 added, 0 updated, N unchanged"
    (a file whose size and modification time are unchanged is not even read).

    The index may sit beside a source file, never inside a source folder (its
    files would be read back as sessions) nor hold a source.

    \b
    Examples:
      vis-export index ~/.vis/vis.db --index ~/.cache/vis-index
      vis-export index chat.json --index idx
      vis-export index exports/ --index idx --engine whoosh --prune --wait 60
      vis-export index ~/.vis/vis.db --index postgresql://me@db.example:5432/vis --prune
      vis-export index /shared/archive/ --index /shared/idx --dask tcp://scheduler:8786
    """
    from vis_export.jobs.indexing import index_sources

    redaction = _redaction(redact, redact_patterns, redact_allow, redact_rules)
    reporter = Reporter(redaction=redaction)
    try:
        with _progress_bar("Indexing") as progress:
            counts = index_sources(
                sources,
                location,
                engine=engine,
                reasoning=reasoning,  # type: ignore[arg-type]
                prune=prune,
                wait=wait,
                threads=threads,
                lenient=lenient,
                origin=origin,
                dask=dask,
                report=reporter,
                progress=progress,
                redact=redaction,
            )
    except OSError as error:  # the index's own files: a disk full, a folder made read-only meanwhile
        reporter.problem(f"vis-export: {error.filename or location}: {error.strerror or error}")
        sys.exit(1)
    echo(str(counts), err=True)
    sys.exit(1 if reporter.failed else 0)


@main.command(context_settings=CONTEXT, short_help="Search an index: code-aware words, exact phrases.")
@click.argument("query")
@index_option("The index directory, or a postgresql:// URI.")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True, help="At most this many hits.")
@click.option("--json", "as_json", is_flag=True, help="A JSON array of hits on standard output.")
@click.option("--role", type=_LateChoice(_message_roles), default=None)
@click.option("--type", "block_type", type=_LateChoice(_indexed_types), default=None, help="Only blocks of this type.")
@click.option("--language", default=None, help="Code language, e.g. python.")
@click.option("--session", "session_id", default=None, metavar="ID", help="Only this session.")
@click.option("--since", default=None, metavar="DATE", help="Messages from this time on (ISO date or ms).")
@click.option("--until", default=None, metavar="DATE", help="Messages up to this time (ISO date or ms).")
def search(
    query: str,
    location: Path | str,
    limit: int,
    as_json: bool,
    role: str | None,
    block_type: str | None,
    language: str | None,
    session_id: str | None,
    since: str | None,
    until: str | None,
) -> None:
    """Search an index: words must all match (code-aware: parseConfig finds
    parse_config), "quoted phrases" must occur exactly as written.

    Each hit shows where it is, its session's title and a snippet; on a terminal
    the matches are highlighted, elsewhere marked **so**. A query that starts
    with - goes after --, which ends the options.

    \b
    Examples:
      vis-export search parseConfig --index idx
      vis-export search '"fn(*args, **kwargs)"' --index idx --type code --language python
      vis-export search deploy --index idx --role user --since 2025-02-01 --json
      vis-export search --index idx -- '-> None'
    """
    from vis_export.searchindex import search as run_search
    from vis_export.searchindex.hit_text import hit_text

    try:
        hits = run_search(
            query,
            location,
            limit=limit,
            role=role,
            type=block_type,
            language=language,
            session=session_id,
            since=_millis(since, "--since"),
            until=_millis(until, "--until"),
        )
    except ValueError as failure:  # a query of too many words
        echo(f"vis-export: {failure}", err=True)
        sys.exit(1)
    if as_json:
        echo(json.dumps([hit.to_json() for hit in hits], ensure_ascii=False, indent=2))
    else:
        terminal = sys.stdout.isatty()
        for hit in hits:
            click.echo(hit_text(hit, terminal))
    if not hits:
        echo("no hits", err=True)


@main.command(context_settings=CONTEXT, short_help="Read one session, message or block in the terminal.")
@sources_argument
@click.option("--session", "session_id", required=True, metavar="ID", help="The session to show.")
@click.option("--message", "message_id", default=None, metavar="ID", help="Only this message of the session.")
@click.option("--block", "block_id", default=None, metavar="ID", help="Only this block, under its message's header.")
@reasoning_option("Which reasoning to show; 'all' authorises private reasoning.")
@click.option("--lenient", is_flag=True, help="Show what can be shown safely from invalid input, with warnings.")
@click.option("--no-pager", is_flag=True, help="Never page, even when the text is taller than the terminal.")
@redact_options
def show(
    sources: Sequence[str],
    session_id: str,
    message_id: str | None,
    block_id: str | None,
    reasoning: str,
    lenient: bool,
    no_pager: bool,
    redact: bool,
    redact_patterns: Sequence[str],
    redact_allow: Sequence[str],
    redact_rules: Path | None,
) -> None:
    """Print a session, one of its messages or one block in the terminal:
    Markdown rendered, code highlighted, paged when taller than the screen.

    Through a pipe or into a file the same text is plain (no colours, no
    pager). Data never steers the terminal: control characters show as
    \\uXXXX escapes, code otherwise exactly as written.

    \b
    Examples:
      vis-export show ~/.vis/vis.db --session 01JSESSION
      vis-export show chat.json --session golden_session --message msg_asst_1
      vis-export search parseConfig --index idx   # then open a hit:
      vis-export show ~/.vis/vis.db --session 01JSESSION --block b7
      vis-export show vis.db --session 01JSESSION | grep -n TODO
    """
    from vis_export.extras import require
    from vis_export.formats.options import ExportOptions
    from vis_export.policy import visible_session
    from vis_export.show import pick, write

    require("rich", "vis-export show")
    require("mdit_py_plugins", "vis-export show")
    level = check_reasoning(reasoning)
    redaction = _redaction(redact, redact_patterns, redact_allow, redact_rules)
    reporter = Reporter(redaction=redaction)
    found = reporter.results(_read(sources, lenient))
    if redaction is not None:  # the whole session's view, so a message or block shows the session's markers
        found = [visible_session(session, level, redaction) for session in found]
    if reporter.refused and not lenient:
        _hint_lenient(reporter.refused)
    chosen = pick(found, session_id, message_id, block_id, level, sources)
    write(chosen, ExportOptions(reasoning=level, timestamps=True), pager=not no_pager)
    sys.exit(1 if reporter.failed else 0)


@main.command(context_settings=CONTEXT, short_help="Read, search and copy sessions in a browser.")
@sources_argument
@index_option(
    "Search this index (a directory or a postgresql:// URI) instead of building one of SOURCE... at start.",
    required=False,
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0: any free port.")
@reasoning_option("Reasoning on every page, fixed for the server's life; all shows private reasoning (with a banner).")
@click.option("--open", "open_browser", is_flag=True, help="Open the sessions page in a browser.")
@redact_options
def serve(
    sources: Sequence[str],
    location: Path | str | None,
    host: str,
    port: int,
    reasoning: str,
    open_browser: bool,
    redact: bool,
    redact_patterns: Sequence[str],
    redact_allow: Sequence[str],
    redact_rules: Path | None,
) -> None:
    """Serve SOURCE... to a browser on this machine: the sessions (filter, sort),
    each session with a copy button on every message and block, search, and
    downloads in every format. Read-only; a source changed on disk shows its
    new content on the next request.

    Without --index, an index of SOURCE... is built at start in a temporary
    folder and kept current. Only requests to this address or localhost are
    answered.

    \b
    Examples:
      vis-export serve ~/.vis/vis.db --open
      vis-export serve exports/ --index ~/.cache/vis-index --port 8000
      vis-export serve chat.json --port 0 --reasoning none
    """
    from vis_export.extras import require

    require("starlette", "serve")
    require("uvicorn", "serve")
    if "-" in sources:
        raise click.BadParameter(
            "serve reads files and folders it can read again, not standard input", param_hint="SOURCE"
        )
    from vis_export.serve.server import bind, prepare, run, url_of

    redaction = _redaction(redact, redact_patterns, redact_allow, redact_rules)
    if redaction is not None and location is not None:
        raise click.UsageError(
            "--redact builds its own redacted index: leave out --index "
            "(an index made elsewhere may hold what is redacted)"
        )
    reporter, policy = Reporter(redaction=redaction), check_reasoning(reasoning)
    try:
        sock = bind(host, port)
    except OSError as error:
        echo(f"vis-export: cannot listen on {host}:{port}: {error.strerror or error}", err=True)
        sys.exit(1)
    catalogue = None
    try:
        catalogue, keeper = prepare(sources, location, policy, reporter.results, reporter.warning, redaction)
        with _progress_bar("Reading" if keeper is None else "Indexing") as progress:
            catalogue.refresh(progress)  # the total once its one walk of the sources has found the files
        if not len(catalogue) and set(sources) <= set(reporter.refused):
            echo("vis-export: serve: no source could be read; nothing to serve", err=True)
            sys.exit(1)
        echo(f"Serving {len(catalogue)} session(s) at {url_of(sock)} (Ctrl-C stops)", err=True)
        if policy == "all":
            echo("Private reasoning is shown on every page (--reasoning all).", err=True)
        run(catalogue, location if keeper is None else keeper.directory, policy, sock, open_browser, redaction)
    finally:
        if catalogue is not None:
            catalogue.close()


@main.command(context_settings=CONTEXT, short_help="Say what --redact would take out: places and kinds, never values.")
@sources_argument
@reasoning_option("The reasoning the export would keep: what it hides is not scanned.")
@click.option("--json", "as_json", is_flag=True, help="The findings and the count per kind as JSON on standard output.")
@click.option("--lenient", is_flag=True, help="Scan what can be read from invalid input, with warnings.")
@redact_rule_options
def scan(
    sources: Sequence[str],
    reasoning: str,
    as_json: bool,
    lenient: bool,
    redact_patterns: Sequence[str],
    redact_allow: Sequence[str],
    redact_rules: Path | None,
) -> None:
    """Say what --redact would take out of SOURCE...: one line per find,
    FILE: session ID: LOCATION: kind, then a count per kind. Never the value,
    nor its length or a hash of it.

    Exits with 1 when anything was found (for a hook that refuses to publish),
    0 when nothing was, 2 on bad input or options.

    \b
    Examples:
      vis-export scan ~/.vis/vis.db
      vis-export scan exports/ --json | jq .counts
      vis-export scan chat.json --redact-allow '@example\\.com$' --redact-pattern 'EMP-[0-9]{6}'
    """
    from vis_export.redaction.report import scan as scan_sessions

    redaction = _redaction(True, redact_patterns, redact_allow, redact_rules)
    assert redaction is not None
    reporter = Reporter(redaction=redaction)
    found = reporter.results(_read(sources, lenient))
    report = scan_sessions(found, check_reasoning(reasoning), redaction)
    if as_json:
        echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        for line in report.lines():
            echo(line)
    sys.exit(2 if reporter.failed else 1 if report.findings else 0)
