"""Bare URLs in prose linked (mistune's ``url`` plugin), never through a redaction marker.

mistune links ``https://…`` up to the next space, so a marker that replaced the
end of a URL (``?token=[redacted: github-token 1]``) was cut in two: its first
word in the link, the rest after it, styled in no engine. In a redacted view a
bare URL ends where a marker begins; the marker is text of its own. Without
redaction the plugin is mistune's own, and output is what it was (R8).
"""

from __future__ import annotations

from typing import Any

from vis_export.redaction.rules import MARKERS

# mistune's URL_LINK_PATTERN, each character checked not to start a marker.
_NOT_MARKER = f"(?!{MARKERS.pattern})"
URL_BEFORE_MARKER = rf"""https?:\/\/(?:{_NOT_MARKER}[^\s<])*{_NOT_MARKER}[^<.,:;"')\]\s]"""


def url_plugin(marked: bool) -> Any:
    """The bare-URL plugin for ``mistune.create_markdown``: ``marked``, a redacted view's."""
    if not marked:
        return "url"
    from mistune.plugins.url import parse_url_link

    def url(md: Any) -> None:
        md.inline.register("url_link", URL_BEFORE_MARKER, parse_url_link)

    return url
