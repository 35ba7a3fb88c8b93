"""Running ``vis-export`` on a real terminal (a pty), as a person does."""

from __future__ import annotations

import os
import pty
import subprocess
import sys


def on_terminal(*args: str) -> bytes:
    """What ``vis-export ARGS`` writes to a terminal (stdout and stderr both)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "vis_export", *args], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower
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
