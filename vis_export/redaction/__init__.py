"""Redaction (R8, ``redact.md``): secrets and personal data replaced by numbered
markers in the policy's one view, before anything is projected."""

from vis_export.redaction.redact import Finding, findings, redacted
from vis_export.redaction.rules import MARKER, Redaction, RulesError, read_rules

__all__ = ["MARKER", "Finding", "Redaction", "RulesError", "findings", "read_rules", "redacted"]
