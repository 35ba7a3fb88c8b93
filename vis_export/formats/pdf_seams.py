"""Where a PDF laid out in parts joins: at a message that starts low on a page.

Each part of a long session is laid out on its own (``pdf.PART_SIZE``) and
starts on a new page, so the page a part ends on was left as full as its last
message happened to leave it: one line, sometimes. So a part that is followed
by another ends at the message boundary, among those on its last
``SEAM_PAGES`` pages, that leaves its last page fullest (one that starts a
page leaves the page before it full), and the next part starts with that
message: a page break between two messages, as any. The page it ends on is
cut below that boundary (the boxes of the messages after it are taken off the
page before it is drawn), so no part is laid out twice; in exchange each part
waits for the one before it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

SEAM_PAGES = 8  # the last pages of a part where it may end: moving more would lay more out again


class Start(NamedTuple):
    """Where a message's first fragment is: its page, its top in CSS pixels, its element."""

    page: int
    top: float
    element: Any


def message_starts(pages: list[Any]) -> list[Start]:
    """Each message's start, in document order (the ``article.message`` boxes)."""
    seen: dict[int, Start] = {}
    for number, page in enumerate(pages):
        for box in _articles(page._page_box):
            seen.setdefault(id(box.element), Start(number, box.position_y, box.element))
    return list(seen.values())


def _articles(box: Any) -> list[Any]:
    found: list[Any] = []
    for child in getattr(box, "children", ()):
        if _is_message(child):
            found.append(child)
        else:
            found += _articles(child)
    return found


def _is_message(box: Any) -> bool:
    element = getattr(box, "element", None)
    classes = element.get("class", "") if element is not None else ""
    return getattr(box, "element_tag", None) == "article" and "message" in classes.split()


def _fill(page: Any, down_to: float | None = None) -> float:
    """The share of a page's content area used, down to ``down_to`` (CSS pixels
    from the page's top) or as far as its messages reach."""
    box = page._page_box
    top = box.margin_top + box.padding_top + box.border_top_width
    if down_to is None:
        down_to = max((a.position_y + a.margin_height() for a in _articles(box)), default=top)
    return float(min(1.0, max(0.0, (down_to - top) / box.height)))


def cut_point(pages: list[Any], starts: list[Start]) -> tuple[int, int | None]:
    """How many pages the part keeps, and which of its messages (``starts``) the
    next part starts with (``None``: the one after its last). The page it keeps
    last is as full as the message boundaries on its last pages allow."""
    best: tuple[float, int, int | None] = (_fill(pages[-1]), len(pages), None)
    for index, start in enumerate(starts):
        if index == 0 or start.page < len(pages) - SEAM_PAGES:
            continue
        above = any(a.position_y < start.top for a in _articles(pages[start.page]._page_box))
        if above:
            fill, kept = _fill(pages[start.page], start.top), start.page + 1
        elif start.page:
            fill, kept = _fill(pages[start.page - 1]), start.page
        else:
            continue
        if fill > best[0]:
            best = (fill, kept, index)
    return best[1], best[2]


def cut_page(page: Any, start: Start) -> Any:
    """The page without the message that starts at ``start`` and those after it:
    their boxes are taken off, so the page ends above it (margin boxes stay)."""
    from weasyprint.document import Page

    target = next(a for a in _articles(page._page_box) if a.element is start.element)
    for child in page._page_box.children:
        if _cut_from(child, target):
            break
    return Page(page._page_box)


def _cut_from(box: Any, target: Any) -> bool:
    """Drop ``target`` and everything after it in document order."""
    children = list(getattr(box, "children", ()))
    for index, child in enumerate(children):
        if child is target:
            box.children = children[:index]
            return True
        if _cut_from(child, target):
            box.children = children[: index + 1]
            return True
    return False
