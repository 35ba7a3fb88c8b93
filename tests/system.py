"""System tools and fonts a test needs that pip cannot install (Debian packages
.ci/run installs).

Locally a test whose tool or font is missing skips, saying what it needs; in CI
(``CI=true``) it fails, so a machine without them cannot pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

# A font package and a fontconfig pattern that lists a font only it installs.
FONT_PACKAGES = {"fonts-noto-cjk": ":lang=ja", "fonts-noto-color-emoji": "Noto Color Emoji"}


def require(*tools: str) -> None:
    """Skip (locally) or fail (CI) when a system tool a test needs is missing."""
    _missing([tool for tool in tools if shutil.which(tool) is None])


def require_fonts(*packages: str) -> None:
    """Skip (locally) or fail (CI) unless fontconfig finds these packages' fonts."""
    require("fc-list")
    _missing(
        [
            package
            for package in packages
            if not subprocess.run(
                ["fc-list", FONT_PACKAGES[package]], capture_output=True, text=True, timeout=60
            ).stdout.strip()
        ]
    )


def _missing(packages: list[str]) -> None:
    if not packages:
        return
    message = f"needs {', '.join(packages)} (Debian packages; .ci/run installs them)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
