"""What redaction takes out of sessions, said without the values (``scan``, ``--redact-report``).

A finding names its source file, session, place and kind, and a count per kind
sums them up: never the value, its length or a hash of it, so a report cannot
confirm a guessed secret.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vis_export.model import Session
from vis_export.policy import Reasoning, visible_session
from vis_export.redaction.redact import Redactor
from vis_export.redaction.rules import Redaction
from vis_export.terminal import escaped


@dataclass
class Report:
    findings: list[dict[str, str]] = field(default_factory=list)

    def add(self, session: Session, reasoning: Reasoning, redaction: Redaction) -> None:
        """The finds of ``session`` as the export under ``reasoning`` would show it."""
        redactor = Redactor(redaction)
        redactor.session(visible_session(session, reasoning))
        for finding in redactor.findings:
            self.findings.append(
                {"file": session.source, "session": session.id, "location": finding.where, "kind": finding.kind}
            )

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(finding["kind"] for finding in self.findings).items()))

    def to_json(self) -> dict[str, Any]:
        return {"findings": self.findings, "counts": self.counts()}

    def lines(self) -> Iterable[str]:
        """``FILE: session ID: LOCATION: kind`` per finding, then ``kind: N`` per kind (data escaped for a terminal)."""
        for f in self.findings:
            yield escaped(f"{f['file']}: session {f['session']}: {f['location']}: {f['kind']}")
        for kind, count in self.counts().items():
            yield f"{kind}: {count}"


def scan(sessions: Iterable[Session], reasoning: Reasoning, redaction: Redaction) -> Report:
    report = Report()
    for session in sessions:
        report.add(session, reasoning, redaction)
    return report
