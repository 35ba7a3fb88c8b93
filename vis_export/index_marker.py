"""What marks a folder as a vis-export search index: its manifest file.

``searchindex`` writes the manifest; the directory walk of ``sources`` skips a
folder that holds one, since the index's own JSON files are not sessions (an
index kept beside a session file, ``index chat.json --index idx``, would
otherwise be read back by any later walk of that folder). It lives here so that
reading sources never imports the search index.
"""

from __future__ import annotations

from pathlib import Path

MANIFEST = "vis-export-index.json"
# What the index holds of a session, as its manifest records it (``searchindex.documents``, which makes it):
# 2: tool input, output and error, and attachments, are indexed.
# 3: Chinese, Japanese and Korean are indexed as bigrams among the terms, not as words.
SCHEMA_VERSION = 3


def is_index(folder: Path) -> bool:
    """Whether ``folder`` holds a vis-export index (its manifest)."""
    try:
        return (folder / MANIFEST).is_file()
    except OSError:
        return False
