"""Attachment bytes for embedding: from ``--attachments DIR`` or the Vis store.

An attachment id names one file directly inside DIR: an id with a path
separator or ``..`` is never looked up, and a file is read only if, links
followed, it is a regular file inside DIR (a link out of DIR, a FIFO or a
device is not read), checked on the open descriptor. Images go through
``images`` before HTML or PDF embeds them; provider messages carry the bytes of
an attachment declared as a raster image to the model's API as they are.
"""

from __future__ import annotations

import base64
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vis_export.images import FORMATS, MAX_BYTES, Embedded, ImageBudget, checked
from vis_export.model import AttachmentBlock, Session, StoredAttachment
from vis_export.problems import Problem


@dataclass(frozen=True)
class Attachments:
    """The attachments of one document; ``budget``: the image bytes it may still embed;
    ``verdicts``: each image as checked, read and checked once for the document."""

    directory: Path | None
    stored: Mapping[str, StoredAttachment]
    budget: ImageBudget = field(default_factory=ImageBudget, compare=False)
    verdicts: dict[tuple[str, str], Embedded | None] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, session: Session | None, directory: Path | None, pixels: int | None = None) -> Attachments:
        """A fresh budget too: each document (each part of a PDF) bounds its own images
        (and their ``pixels`` in all, if given)."""
        return cls(directory, session.attachments if session is not None else {}, ImageBudget(pixels=pixels))

    def data(self, attachment_id: str) -> bytes | None:
        stored = self.stored.get(attachment_id)
        if stored is not None and stored.data is not None:
            return stored.data
        if self.directory is None or Path(attachment_id).name != attachment_id or attachment_id in (".", ".."):
            return None
        try:
            return _read_inside(self.directory, attachment_id)
        except (OSError, ValueError):  # unreadable, or a NUL in the id
            return None

    def data_uri(self, attachment_id: str, media_type: str) -> str | None:
        """For provider messages: the bytes as declared, if declared as a raster image."""
        kind = media_type.split(";")[0].strip().lower()
        if kind not in FORMATS:
            return None
        data = self.data(attachment_id)
        if data is None:
            return None
        return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"

    def image(self, attachment_id: str, media_type: str) -> Embedded | None:
        """For HTML and PDF: the checked image, or why it is refused; ``None`` when the
        attachment is not declared as an image or its bytes are not at hand. Its bytes
        are read and checked on the first call only; every call is charged to
        ``budget``: showing one image again embeds it again. An image the budget no
        longer holds never fits again, and is forgotten (only the refusal is kept)."""
        if not media_type.strip().lower().startswith("image/"):
            return None
        key = (attachment_id, media_type)
        if key not in self.verdicts:
            data = self.data(attachment_id)
            self.verdicts[key] = checked(data, media_type) if data is not None else None
        verdict = self.verdicts[key]
        if verdict is None:
            return None
        shown = verdict.charged(self.budget)
        if shown is not verdict:
            self.verdicts[key] = shown
        return shown

    def file(self, attachment_id: str) -> Path | None:
        """The file in ``--attachments DIR`` that holds the bytes, for a link to it:
        only a regular file inside DIR (links resolved), as ``data`` reads."""
        if self.directory is None or Path(attachment_id).name != attachment_id or attachment_id in (".", ".."):
            return None
        root = self.directory.resolve()
        try:
            path = (root / attachment_id).resolve()
            return path if path.is_relative_to(root) and path.is_file() else None
        except (OSError, ValueError):
            return None

    def size(self, attachment_id: str) -> int | None:
        stored = self.stored.get(attachment_id)
        if stored is not None and stored.size_bytes is not None:
            return stored.size_bytes
        data = self.data(attachment_id) if self.directory is not None else None
        return len(data) if data is not None else None

    def lookup(self, blocks: list[AttachmentBlock]) -> Callable[[str], Embedded | None]:
        """``attachment:<id>`` or ``attachment:<name>`` in prose -> its image, if at hand."""
        by_reference: dict[str, AttachmentBlock] = {}
        for block in blocks:
            by_reference.setdefault(block.attachment_id, block)
            by_reference.setdefault(block.name, block)

        def find(reference: str) -> Embedded | None:
            block = by_reference.get(reference)
            return self.image(block.attachment_id, block.media_type) if block is not None else None

        return find


def missing(session: Session, directory: Path) -> list[Problem]:
    """A problem for each attachment of ``session`` whose bytes are neither in
    its store nor a file in ``directory``: it is named rather than shown, and
    ``--attachments`` pointing at the wrong folder is not silent."""
    at_hand = Attachments.of(session, directory)
    return [
        Problem(
            f"session {session.id}, message {message.id}, block {block.id}",
            f"attachment {block.attachment_id} ({block.name}) is not in {directory}; it is named, not shown",
        )
        for message in session.messages
        for block in message.blocks
        if isinstance(block, AttachmentBlock)
        and (block.attachment_id not in at_hand.stored or at_hand.stored[block.attachment_id].data is None)
        and at_hand.file(block.attachment_id) is None
    ]


def _read_inside(directory: Path, name: str) -> bytes | None:
    """The bytes of ``directory/name`` if, links resolved, it is a regular file inside
    ``directory`` of at most ``MAX_BYTES``. The resolved path is opened without
    following links and without waiting for a FIFO's writer, and checked on the
    descriptor, so nothing swapped in after the check is read."""
    root = directory.resolve()
    path = (root / name).resolve()
    if not path.is_relative_to(root):
        return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags), "rb") as handle:
        found = os.fstat(handle.fileno())
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_BYTES:
            return None
        data = handle.read(MAX_BYTES + 1)
    return data if len(data) <= MAX_BYTES else None


def human_size(size: int | None) -> str | None:
    if size is None:
        return None
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return None
