"""One exception base: every failure vis-export expects is a ``VisExportError``,
which the command line catches once and prints as its one line, exit status 1."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Callable

import click
import pytest
from click.testing import CliRunner
from conftest import ROOT

import vis_export
from vis_export.cli import VisExportGroup
from vis_export.errors import VisExportError
from vis_export.problems import Problem


def _failures() -> list[tuple[str, Callable[[], VisExportError], str]]:
    """Each module's own failure as raised, and the line the command line has always printed for it."""
    from vis_export.distributed.cluster import DaskFailure
    from vis_export.extras import MissingExtra
    from vis_export.output import OutputError
    from vis_export.problems import InvalidInput
    from vis_export.searchindex.directory import PlacementRefused
    from vis_export.searchindex.guard import IndexFailure
    from vis_export.show import NotFound

    return [
        ("index", lambda: IndexFailure("idx: is damaged"), "vis-export: idx: is damaged"),
        ("placement", lambda: PlacementRefused("idx: inside src"), "vis-export: idx: inside src"),
        ("dask", lambda: DaskFailure("lost the scheduler"), "vis-export: lost the scheduler"),
        ("not found", lambda: NotFound("a.json: session 's': no message 'm'"), "a.json: session 's': no message 'm'"),
        ("extra", lambda: MissingExtra("PDF needs the 'pdf' extra"), "vis-export: error: PDF needs the 'pdf' extra"),
        ("output", lambda: OutputError("out.txt: is a file"), "vis-export: out.txt: is a file"),
        ("input", lambda: InvalidInput("a.json", [Problem("$", "not JSON")]), "vis-export: a.json: $: not JSON"),
    ]


@pytest.mark.parametrize(("kind", "raised", "line"), _failures(), ids=[kind for kind, _, _ in _failures()])
def test_the_command_line_prints_each_failure_as_its_one_line(
    kind: str, raised: Callable[[], VisExportError], line: str
) -> None:
    @click.group(cls=VisExportGroup)
    @click.option("--debug", is_flag=True)
    def group(debug: bool) -> None:
        pass

    @group.command()
    def fail() -> None:
        raise raised()

    for args in (["fail"], ["--debug", "fail"]):  # expected, so never a traceback
        result = CliRunner().invoke(group, args)
        assert isinstance(raised(), VisExportError)
        assert (result.exit_code, result.stderr) == (1, line + "\n"), kind


def _subclasses(base: type[BaseException]) -> set[str]:
    found: set[str] = set()
    for cls in base.__subclasses__():
        found |= {cls.__name__, *_subclasses(cls)}
    return found


def test_the_command_line_catches_no_failure_one_by_one() -> None:
    """The base is caught once: a command that catches one module's failure by
    name (its own message, its own status) is what the base replaced."""
    for module in pkgutil.walk_packages(vis_export.__path__, "vis_export."):
        if module.name != "vis_export.__main__":  # it runs the command line
            try:
                importlib.import_module(module.name)
            except ImportError:  # an optional extra's module
                continue
    ours = _subclasses(VisExportError)
    tree = ast.parse((ROOT / "vis_export" / "cli.py").read_text(encoding="utf-8"))
    caught = {
        name.id if isinstance(name, ast.Name) else getattr(name, "attr", "")
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler) and handler.type is not None
        for name in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])
    }
    assert {"IndexFailure", "DaskFailure", "NotFound"} <= ours
    assert caught & ours == set()
