"""The wheel carries every template and schema (an export from an installed
package must not depend on the checkout)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT


@pytest.mark.slow
def test_wheel_ships_templates_and_schemas(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("vis_export-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        f"vis_export/templates/{p.relative_to(ROOT / 'templates').as_posix()}"
        for p in (ROOT / "templates").rglob("*")
        if p.is_file()
    }
    expected |= {
        f"vis_export/contract/{p.relative_to(ROOT / 'vis_export' / 'contract').as_posix()}"
        for p in (ROOT / "vis_export" / "contract").rglob("*.json")
    }
    expected |= {
        f"vis_export/serve/static/{p.name}" for p in (ROOT / "vis_export" / "serve" / "static").iterdir() if p.is_file()
    }
    expected |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "vis_export").rglob("*.py")}  # every module
    assert expected <= names, sorted(expected - names)
    assert "vis_export/py.typed" in names


def test_every_package_of_the_source_is_one_the_wheel_ships() -> None:
    """The wheel's packages are listed by name: a new subpackage left out of the
    list (``vis_export.redaction`` was) works in a checkout and fails installed."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "vis_export").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)


def test_every_library_the_package_imports_is_a_runtime_dependency() -> None:
    """Test-only extras install more than users get: an import that only they
    satisfy would pass here and fail for a user (as pypdf once did). The
    feature extras (pdf, search, postgresql, dask: all but test, all, and the tools of docs and plot) count: a missing
    one is named (test below)."""
    import ast
    import importlib.metadata as metadata
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    features = [
        d
        for extra, ds in project["optional-dependencies"].items()
        if extra not in ("all", "test", "docs", "plot")
        for d in ds
    ]
    declared = {
        re.split(r"[<>=\[; ]", d, maxsplit=1)[0].lower().replace("_", "-")
        for d in [*project["dependencies"], *features]
    }
    owners = metadata.packages_distributions()
    imported: set[str] = set()
    for path in (ROOT / "vis_export").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    third_party = {name for name in imported if name not in sys.stdlib_module_names and name != "vis_export"}
    needed = {dist.lower().replace("_", "-") for name in third_party for dist in owners.get(name, [name])}
    # markupsafe comes with jinja2, referencing with jsonschema: declared through them.
    assert needed - declared <= {"markupsafe", "referencing"}, sorted(needed - declared)


def test_the_version_has_one_home() -> None:
    import re

    from conftest import ROOT

    import vis_export

    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and not re.search(r'^version = "', pyproject, re.M)
    assert re.fullmatch(r"\d+\.\d+\.\d+", vis_export.__version__)


def test_a_missing_extra_is_named_in_one_line(tmp_path: Path) -> None:
    from conftest import INPUT

    for blocked, args, extra in (
        ("weasyprint", ["convert", str(INPUT / "session.json"), "--to", "pdf", "-o", str(tmp_path / "s.pdf")], "pdf"),
        ("tantivy", ["index", str(INPUT / "session.json"), "--index", str(tmp_path / "idx")], "search"),
        ("rich", ["show", str(INPUT / "session.json"), "--session", "golden_session"], "show"),
        ("starlette", ["serve", str(INPUT / "session.json"), "--port", "0"], "serve"),
        ("uvicorn", ["serve", str(INPUT / "session.json"), "--port", "0"], "serve"),
        (
            "typst",
            [
                "convert",
                str(INPUT / "session.json"),
                "--to",
                "pdf",
                "--pdf-engine",
                "typst",
                "-o",
                str(tmp_path / "t.pdf"),
            ],
            "typst",
        ),
    ):
        script = (
            f"import sys; sys.modules[{blocked!r}] = None\n"
            f"from vis_export.cli import main; main({args!r}, prog_name='vis-export')"
        )
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.strip().endswith(f"pip install 'vis-export[{extra}]'"), result.stderr
