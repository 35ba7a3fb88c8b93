"""The wheel carries every template and schema (an export from an installed
package must not depend on the checkout)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT


def test_wheel_ships_templates_and_schemas(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("vis_export-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"vis_export/templates/{p.relative_to(ROOT / 'templates').as_posix()}"
                for p in (ROOT / "templates").rglob("*") if p.is_file()}
    expected |= {f"vis_export/contract/{p.relative_to(ROOT / 'vis_export' / 'contract').as_posix()}"
                 for p in (ROOT / "vis_export" / "contract").rglob("*.json")}
    assert expected <= names, sorted(expected - names)
    assert "vis_export/py.typed" in names
