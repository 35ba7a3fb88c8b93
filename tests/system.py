"""System tools a test needs that pip cannot install (Debian packages .ci/run installs).

Locally a test whose tool is missing skips, saying what it needs; in CI
(``CI=true``) it fails, so a machine without them cannot pass by skipping.
"""

from __future__ import annotations

import os
import shutil

import pytest


def require(*tools: str) -> None:
    """Skip (locally) or fail (CI) when a system tool a test needs is missing."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if not missing:
        return
    message = f"needs {', '.join(missing)} (Debian packages; .ci/run installs them)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
