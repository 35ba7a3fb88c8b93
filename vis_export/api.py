"""The functions ``import vis_export`` offers; the CLI is a thin layer over these."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from vis_export.contract import check_message, check_session
from vis_export.contract.lonis_check import ReplayVerdict
from vis_export.copying import clipboard
from vis_export.formats.json import to_json
from vis_export.formats.markdown import to_markdown
from vis_export.formats.text import to_text
from vis_export.model import Session
from vis_export.problems import Problem
from vis_export.sources import Source, load, read

__all__ = [
    "FileReport",
    "clipboard",
    "load",
    "read",
    "to_json",
    "to_markdown",
    "to_text",
    "validate",
    "validation_reports",
]


@dataclass
class FileReport:
    """What ``validate`` finds in one source file: its problems (contract
    problems and failed Lonis replays alike), its sessions, and each Lonis
    block's content hash and replay verdict."""

    file: str
    sessions: int = 0
    problems: list[Problem] = field(default_factory=list)
    # What a session read anyway says it left out (another tool's entries this version does not show).
    warnings: list[Problem] = field(default_factory=list)
    blocks: list[tuple[int, str, ReplayVerdict]] = field(default_factory=list)  # (number, kind, verdict)

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "valid": self.valid,
            "sessions": self.sessions,
            "problems": [{"location": p.location, "message": p.message} for p in self.problems],
        }
        if self.warnings:
            out["warnings"] = [{"location": p.location, "message": p.message} for p in self.warnings]
        if self.blocks:
            out["blocks"] = [
                {"block": number, "kind": kind, "content_hash": verdict.content_hash, "replay": verdict.to_json()}
                for number, kind, verdict in self.blocks
            ]
        return out


def validation_reports(sources: Source | Iterable[Source]) -> Iterator[FileReport]:
    """One report per source file, in order, each as soon as its file is read."""
    from vis_export.lonis_parsed import replay_reports

    report: FileReport | None = None
    for result in read(sources):
        if report is not None and report.file != result.source:
            yield report
            report = None
        report = report or FileReport(result.source)
        if result.session is not None:
            report.sessions += 1
            for number, kind, verdict in replay_reports(result.session):
                report.blocks.append((number, kind, verdict))
                if verdict.status == "failed":
                    report.problems.append(Problem(f"block {number}, provenance.replay", str(verdict)))
        (report.problems if result.session is None else report.warnings).extend(result.problems)
    if report is not None:
        yield report


def validate(obj: Any) -> list[Problem]:
    """Every problem of ``obj`` (empty when valid), as ``vis-export validate`` finds them.

    ``obj`` may be a path (file or directory), parsed JSON (a session object, a
    message, or a list of messages) or an already loaded ``Session``.
    """
    if isinstance(obj, Session):
        return []
    if isinstance(obj, (str, os.PathLike)):
        # Located with the file they are in: a directory holds many.
        return [p.at(report.file) for report in validation_reports(obj) for p in report.problems]
    problems: list[Problem] = []
    if isinstance(obj, dict) and "messages" in obj:
        check_session(obj, (), problems)
    elif isinstance(obj, dict):
        check_message(obj, (), problems)
    elif isinstance(obj, list):
        for index, message in enumerate(obj):
            check_message(message, (index,), problems)
    else:
        raise TypeError(f"cannot validate a {type(obj).__name__}")
    return problems
