"""Where a job's lines go (``Report``): a job in this process and one on Dask
workers, convert and index alike, report through it, and with redaction
(R8) every line passes ``Redacting`` first. Below every job, so that no part
of a job imports another for it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from vis_export.problems import Problem
    from vis_export.redaction import Redaction


class Report(Protocol):
    """Where a job's lines go: problems fail the job, warnings do not."""

    def problem(self, line: str) -> None: ...
    def warning(self, line: str) -> None: ...


@dataclass
class Lines:
    """A ``Report`` that keeps the lines (the API's default)."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def problem(self, line: str) -> None:
        self.problems.append(line)

    def warning(self, line: str) -> None:
        self.warnings.append(line)


class Redacting(NamedTuple):
    """A ``Report`` whose lines quote no secret (R8): a problem's location may name a
    source's key, its message a value. (A named tuple: a dataclass is made by
    compiling its methods, near a millisecond of every command that imports this.)"""

    report: Report
    redaction: Redaction

    def problem(self, line: str) -> None:
        self.report.problem(self._shown(line))

    def warning(self, line: str) -> None:
        self.report.warning(self._shown(line))

    def _shown(self, line: str) -> str:
        from vis_export.redaction.redact import redacted_line  # only a redacting caller needs its dependencies

        return redacted_line(line, self.redaction)


def redacting(report: Report | None, redaction: Redaction | None) -> Report:
    """``report`` (by default a new ``Lines``), redacting its lines when ``redaction`` is given."""
    report = report if report is not None else Lines()
    return report if redaction is None else Redacting(report, redaction)


def report_reading(report: Report, source: str, loaded: bool, problems: Iterable[Problem]) -> bool:
    """What reading ``source`` found, as ``report``'s lines, the one way every
    job and command says it: the problems of a session that did not load fail
    the job; those of one that loaded anyway (``--lenient``) are warnings, which
    say what was left out or shown as inert data. Returns whether a line failed."""
    failed = False
    for problem in problems:
        if loaded:
            report.warning(problem.line(source).replace(": ", ": warning: ", 1))
        else:
            failed = True
            report.problem(problem.line(source))
    return failed
