"""What ``vis-export show`` does: find one session, message or block among the
loaded sessions, and put it in front of a person.

A search hit names its session, message and block; ``show --session S --block
B`` opens that block under its message's header, so it reads in context
without a browser. Ids are only ever compared, never used as paths.

Where the text goes decides how it looks: on a terminal it is coloured (rich's
colour system for that terminal; styles without colours under ``NO_COLOR``)
and paged through ``$PAGER`` (``less`` by default) when it is taller than the
screen; through a pipe or into a file it is plain, with no pager. Either way
no control character from the data is written (``formats.terminal_projector``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import chain

from vis_export.errors import VisExportError
from vis_export.formats.options import ExportOptions
from vis_export.model import Message, Session
from vis_export.output import encode
from vis_export.policy import DEFAULT_REASONING, Reasoning, shows
from vis_export.strings import surrogates_replaced

Shown = Session | Message  # a whole session, or a message (with only the chosen block when one is named)


class NotFound(VisExportError, LookupError):
    """An id that is not in the sources, or a block the reasoning policy hides: the message is one line."""

    def line(self) -> str:
        return str(self)  # it names where it looked, or says ``vis-export:`` itself


def pick(
    sessions: Iterable[Session],
    session_id: str,
    message_id: str | None = None,
    block_id: str | None = None,
    reasoning: Reasoning = DEFAULT_REASONING,
    sources: Sequence[str] = (),
) -> Sequence[Shown]:
    """Every match, in source order (ids are rarely repeated, and nothing is
    dropped silently when they are): the sessions called ``session_id``; with
    ``message_id`` their messages of that id; with ``block_id`` each block of
    that id, as its message holding only that block."""
    found = [session for session in sessions if session.id == session_id]
    if not found:
        where = ", ".join(sources) or "the sources"
        raise NotFound(f"vis-export: no session with id {session_id!r} in {where}")
    if message_id is None and block_id is None:
        return found
    source = ", ".join(dict.fromkeys(session.source for session in found)) or "the sources"
    messages = [m for s in found for m in s.messages if message_id is None or m.id == message_id]
    if not messages:
        raise NotFound(f"{source}: session {session_id!r}: no message with id {message_id!r}")
    if block_id is None:
        return messages
    chosen = [replace(m, blocks=(b,)) for m in messages for b in m.blocks if b.id == block_id]
    if not chosen:
        inside = f"message {message_id!r}" if message_id is not None else f"session {session_id!r}"
        raise NotFound(f"{source}: {inside}: no block with id {block_id!r}")
    shown = [m for m in chosen if shows(m.blocks[0], reasoning)]  # a hidden one would be a bare header
    if not shown:
        raise NotFound(
            f"{source}: session {session_id!r}: block {block_id!r} is reasoning that --reasoning {reasoning} hides"
        )
    return shown


def write(chosen: Sequence[Shown], options: ExportOptions, pager: bool = True) -> None:
    """Draw ``chosen`` for standard output, a piece at a time: coloured on a
    terminal, and through the pager once it is taller than the screen (which
    starts as soon as the first screenful is drawn); plain elsewhere."""
    from rich.console import Console

    from vis_export.formats.terminal_projector import TerminalProjector

    probe = Console(file=sys.stdout)  # rich's reading of this terminal: colours, NO_COLOR, FORCE_COLOR
    size = shutil.get_terminal_size()
    colours = probe.color_system if probe.is_terminal else None
    projector = TerminalProjector(options, size.columns, colours, no_color=probe.no_color)
    pieces: Iterator[str] = (
        surrogates_replaced(piece)
        for index, obj in enumerate(chosen)
        for piece in chain(["\n"] if index else [], projector.pieces(obj))
    )
    if pager and sys.stdout.isatty():
        screen, overflows = first_screen(pieces, size.lines, size.columns)
        if overflows:
            import click

            click.echo_via_pager(chain(screen, pieces))
            return
        pieces = iter(screen)
    sys.stdout.flush()
    for piece in pieces:
        sys.stdout.buffer.write(encode(piece))
    sys.stdout.buffer.flush()


def first_screen(pieces: Iterator[str], rows: int, columns: int) -> tuple[list[str], bool]:
    """The pieces that fill a screen of ``rows`` × ``columns`` (a long line
    wraps onto several rows), and whether there is more than fits: the rest
    stays in ``pieces``, not drawn yet."""
    from click import unstyle
    from rich.cells import cell_len

    taken: list[str] = []
    used = 0
    for piece in pieces:
        taken.append(piece)
        *lines, last = piece.split("\n")
        for line in [*lines, last] if last else lines:
            used += max(1, -(-cell_len(unstyle(line)) // max(columns, 1)))
        if used > rows:
            return taken, True
    return taken, False
