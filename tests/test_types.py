"""The type hints hold: mypy in strict mode over the package, configured in
pyproject.toml (third-party libraries without hints are taken as they are)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_mypy_strict_finds_no_type_errors() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
