"""Reading HTML as a browser does (html5lib follows the HTML standard's parser)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import html5lib

NS = "{http://www.w3.org/1999/xhtml}"


def parse(html: str) -> Any:
    return html5lib.parse(html, namespaceHTMLElements=True)


def fragment(html: str) -> Any:
    return html5lib.parseFragment(html, namespaceHTMLElements=True)


def text_content(element: Any) -> str:
    """The DOM's ``textContent``: every text node below the element, in order."""
    return "".join(element.itertext())


def elements(root: Any, tag: str | None = None) -> Iterator[Any]:
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        if tag is None or element.tag == NS + tag:
            yield element


def classes(element: Any) -> set[str]:
    return set((element.get("class") or "").split())


def code_elements(root: Any) -> list[Any]:
    """The ``<code>`` of every code block the projector wrote (not prose's own)."""
    return [
        code for figure in elements(root, "figure") if "code" in classes(figure) for code in elements(figure, "code")
    ]
