"""What reading one session gives: the session, or the problems that stop it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the sources package names this class, and a no-op rerun loads no model
    from vis_export.model import Session
    from vis_export.problems import Problem


@dataclass(frozen=True, slots=True)
class LoadResult:
    """One session read from ``source``, or why it could not be.

    Normally ``session`` is ``None`` exactly when ``problems`` is not empty; a
    batch reports these and goes on with the other results. Read leniently, a
    session can come with problems: they are then warnings about what was
    left out or shown as inert data.
    """

    source: str
    session: Session | None
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def failed(source: str, *problems: Problem) -> LoadResult:
    return LoadResult(source, None, problems)
