"""The import graph: imports go only downward (docs/development.md, Layout).

Two checks. import-linter runs the contracts in ``pyproject.toml``
(``[tool.importlinter]``: the layers, what ``distributed`` and ``formats`` may
not import, no cycles among a package's modules). And a check of our own,
with the standard library, that no two modules import each other however
indirectly: every ``import`` counts, at the top of a module, inside a
function (a deferred import is still a dependency) or under
``TYPE_CHECKING``, so a cycle cannot hide in a function body.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "vis_export"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: its file, and whether it is a package's ``__init__``."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imported(tree: ast.Module, module: str, is_package: bool, known: set[str]) -> Iterator[str]:
    """The package's modules ``tree`` imports anywhere in it (``from m import name``
    counts as ``m.name`` when that is a module, else as ``m``)."""

    def known_prefix(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (found := known_prefix(alias.name)) is not None:
                    yield found
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: None if is_package else -1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    yield full
                elif (found := known_prefix(base)) is not None:
                    yield found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {
        module: set(_imported(ast.parse(path.read_text(encoding="utf-8")), module, is_package, known)) - {module}
        for module, (path, is_package) in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's
    algorithm, iterative: no recursion limit to meet)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_cycles_are_found() -> None:
    """The check itself: a cycle of three, one of two, and a module alone."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": set()}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_no_module_imports_itself_back() -> None:
    assert _cycles(_graph()) == []


def test_nothing_imports_the_package_face() -> None:
    """``vis_export`` (its ``__init__``) offers the API, and so imports, lazily,
    what the API needs: a module of the package importing it (for
    ``__version__``: ``vis_export.version``) would depend on everything."""
    importers = sorted(module for module, imports in _graph().items() if PACKAGE in imports)
    assert importers == []


def test_import_contracts_are_kept() -> None:
    pytest.importorskip("importlinter", reason="needs import-linter (the test extra)")
    lint = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"
    linted = subprocess.run([sys.executable, "-c", lint], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_no_test_imports_the_benchmarks() -> None:
    """Tests make their inputs with ``corpus.py``, beside both: a test that imported a
    benchmark would tie the suite to the harness (and a benchmark's change to the
    tests). ``test_docs`` alone reads the plot's figures, to hold them to the docs."""
    tests = Path(__file__).resolve().parent
    importing = []
    for path in sorted(tests.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(name == "benchmarks" or name.startswith("benchmarks.") for name in names):
                importing.append(path.name)
    assert set(importing) <= {"test_docs.py"}, importing
