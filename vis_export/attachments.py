"""Attachment bytes for embedding: from ``--attachments DIR`` or the Vis store.

Only raster images are embedded (as ``data:`` URIs); SVG never is, since it
can carry script. An attachment id names one file directly inside DIR:
an id with a path separator or ``..`` is never looked up.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from vis_export.model import AttachmentBlock, Session, StoredAttachment

EMBEDDED_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_EMBEDDED_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class Attachments:
    directory: Path | None
    stored: Mapping[str, StoredAttachment]

    @classmethod
    def of(cls, session: Session | None, directory: Path | None) -> "Attachments":
        return cls(directory, session.attachments if session is not None else {})

    def data(self, attachment_id: str) -> bytes | None:
        stored = self.stored.get(attachment_id)
        if stored is not None and stored.data is not None:
            return stored.data
        if self.directory is None or Path(attachment_id).name != attachment_id or attachment_id in (".", ".."):
            return None
        path = self.directory / attachment_id
        try:
            if path.is_file() and path.stat().st_size <= MAX_EMBEDDED_BYTES:
                return path.read_bytes()
        except OSError:
            return None
        return None

    def data_uri(self, attachment_id: str, media_type: str) -> str | None:
        kind = media_type.split(";")[0].strip().lower()
        if kind not in EMBEDDED_TYPES:
            return None
        data = self.data(attachment_id)
        if data is None:
            return None
        return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"

    def size(self, attachment_id: str) -> int | None:
        stored = self.stored.get(attachment_id)
        if stored is not None and stored.size_bytes is not None:
            return stored.size_bytes
        data = self.data(attachment_id) if self.directory is not None else None
        return len(data) if data is not None else None

    def lookup(self, blocks: list[AttachmentBlock]):  # type: ignore[no-untyped-def]
        """``attachment:<id>`` or ``attachment:<name>`` in prose -> (data URI, name), if embeddable."""
        by_reference: dict[str, AttachmentBlock] = {}
        for block in blocks:
            by_reference.setdefault(block.attachment_id, block)
            by_reference.setdefault(block.name, block)

        def find(reference: str) -> tuple[str, str] | None:
            block = by_reference.get(reference)
            if block is None:
                return None
            uri = self.data_uri(block.attachment_id, block.media_type)
            return (uri, block.name) if uri else None

        return find


def human_size(size: int | None) -> str | None:
    if size is None:
        return None
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return None
