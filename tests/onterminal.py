"""Running ``vis-export`` on a real terminal (a pty), as a person does."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping


def on_terminal(
    *args: str, env: Mapping[str, str] | None = None, size: tuple[int, int] | None = None, typing: bool = False
) -> bytes:
    """What ``vis-export ARGS`` writes to a terminal (stdout and stderr both).

    ``env``: variables added to this process's environment; ``size``: the
    terminal's (rows, columns); ``typing``: standard input is the terminal too,
    as when a person runs the command (a pager only starts then)."""
    leader, follower = pty.openpty()
    if size is not None:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "vis_export", *args],
        stdin=follower if typing else subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**os.environ, **(env or {})},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks)
