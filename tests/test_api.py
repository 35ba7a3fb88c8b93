"""The public API as a user meets it: every name works whatever was imported
before, and every Python example in the README and the docs runs."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GOLDEN, INPUT, ROOT

import vis_export

DOCUMENTED = {"Session", "Message", "Block", "Problem", "InvalidInput", "VisExportError", "ExportOptions"}


def test_every_public_name_survives_importing_every_submodule() -> None:
    """Importing ``vis_export.x`` binds ``x`` on the package: no submodule may be
    named like a public function, or the function disappears behind it."""
    script = """
import importlib, inspect, pkgutil, types, vis_export
for module in pkgutil.walk_packages(vis_export.__path__, "vis_export."):
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)
for name in vis_export.__all__:
    value = getattr(vis_export, name)
    assert not isinstance(value, types.ModuleType), name
    assert name == "__version__" or inspect.isfunction(value) or inspect.isclass(value), name
    assert name == "__version__" or value.__name__ == name, name
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr


def test_no_submodule_is_named_like_a_public_name() -> None:
    names = {m.name.rsplit(".", 1)[-1] for m in pkgutil.walk_packages(vis_export.__path__, "vis_export.")}
    assert not names & set(vis_export.__all__)


def test_public_functions_are_the_ones_their_modules_define() -> None:
    for name in vis_export.__all__:
        if name == "__version__":
            continue
        value = getattr(vis_export, name)
        assert inspect.getmodule(value) is importlib.import_module(value.__module__)
        assert (name in DOCUMENTED) == inspect.isclass(value), name


def test_every_python_example_in_the_readme_and_the_docs_runs(tmp_path: Path, golden_store: Path) -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    examples = [
        (page.relative_to(ROOT).as_posix(), block)
        for page in pages
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    ]
    assert {page for page, _ in examples} >= {"README.md", "docs/api.md"}
    (tmp_path / "sessions").mkdir()
    for name in ("session.json", "messages.jsonl", "events.jsonl"):
        shutil.copy(INPUT / name, tmp_path / "sessions" / name)
    shutil.copy(INPUT / "session.json", tmp_path / "chat.json")
    shutil.copy(INPUT / "session.json", tmp_path / "a.json")
    assert golden_store == tmp_path / "vis.db"  # the fixture builds it right here
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:
        namespaces: dict[str, dict[str, object]] = {}  # a page's examples run in order, each page on its own
        for page, block in examples:
            exec(compile(block, page, "exec"), namespaces.setdefault(page, {}))  # noqa: S102 - the pages' own examples
    finally:
        os.chdir(previous)
    assert (tmp_path / "idx").is_dir() and GOLDEN.exists()


def test_validate_in_the_api_and_on_the_command_line_agree(tmp_path: Path) -> None:
    """A failed Lonis replay makes a file invalid in both, with the same problem."""
    from click.testing import CliRunner

    from vis_export.cli import main

    block = json.loads((INPUT / "lonis.jsonl").read_text().splitlines()[0])
    block.setdefault("provenance", {})["replay"] = {"replayable": True, "required_hashes": ["input_hash"]}
    source = tmp_path / "replay.jsonl"
    source.write_text(json.dumps(block) + "\n")
    problems = vis_export.validate(source)
    assert [p.message for p in problems] == ["replay failed: missing input_hash"]
    result = CliRunner().invoke(main, ["validate", str(source)])
    assert result.exit_code == 1
    assert f"{source}: block 1, provenance.replay: replay failed: missing input_hash" in result.stderr.splitlines()


def test_all_names_exactly_the_lazy_exports() -> None:
    from vis_export import _LAZY

    assert sorted(vis_export.__all__) == sorted(["__version__", *_LAZY])


def test_to_pdf_takes_a_message_and_a_list_of_messages() -> None:
    session = next(vis_export.load(INPUT / "session.json"))
    for obj in (session.messages[0], list(session.messages[:2])):
        assert vis_export.to_pdf(obj).startswith(b"%PDF-")
    with pytest.raises(TypeError, match="takes a Session, a Message or a list of messages"):
        vis_export.to_pdf(session.messages[0].blocks[0])  # type: ignore[arg-type]


# What each function takes of the command's options: the format's own (``TAKES``) and the policy.
_FORMAT_OF = {
    "to_text": "text",
    "to_markdown": "markdown",
    "to_html": "html",
    "to_pdf": "pdf",
    "to_provider": "provider",
    "to_json": "json",
}


def _options_of(name: str) -> set[str]:
    from dataclasses import fields

    from vis_export.formats import TAKES

    if name in _FORMAT_OF:
        return {"reasoning", *TAKES[_FORMAT_OF[name]]}
    if name == "clipboard":
        return {"reasoning"} | TAKES["text"] | TAKES["markdown"] | TAKES["html"]
    if name == "convert":
        return {f.name for f in fields(vis_export.ExportOptions)} - {"links_from"}
    return set()


@pytest.mark.parametrize("name", [n for n in vis_export.__all__ if inspect.isfunction(getattr(vis_export, n, None))])
def test_help_lists_every_option_of_every_public_function(name: str) -> None:
    """``help()`` is how many users learn the API: each option is a named,
    typed keyword parameter it lists, never hidden in ``**options``."""
    import pydoc

    function = getattr(vis_export, name)
    parameters = inspect.signature(function).parameters
    assert not [p for p in parameters.values() if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)], name
    assert _options_of(name) <= set(parameters), f"{name} lacks {_options_of(name) - set(parameters)}"
    assert all(p.annotation is not inspect.Parameter.empty for p in parameters.values()), name
    shown = pydoc.render_doc(function, renderer=pydoc.plaintext)
    assert all(f"{option}:" in shown for option in _options_of(name)), shown


@pytest.mark.parametrize("name", ["to_text", "to_markdown", "to_html", "to_provider", "clipboard"])
def test_a_misspelt_option_is_a_type_error_naming_it(name: str) -> None:
    session = next(vis_export.load(INPUT / "session.json"))
    with pytest.raises(TypeError, match="'reasonin'"):
        getattr(vis_export, name)(session, reasonin="none")


def test_convert_takes_the_commands_options_as_keywords(tmp_path: Path) -> None:
    outcome = vis_export.convert([INPUT / "session.json"], "markdown", f"{tmp_path}/out/", reasoning="none")
    assert not outcome.failed and [p.name for p in outcome.written] == ["golden_session.md"]
    kept = vis_export.convert([INPUT / "session.json"], "markdown", f"{tmp_path}/all/", reasoning="all")
    assert kept.written[0].read_text() != outcome.written[0].read_text()
    options = vis_export.ExportOptions(reasoning="none")
    same = vis_export.convert([INPUT / "session.json"], "markdown", f"{tmp_path}/same/", options)
    assert same.written[0].read_text() == outcome.written[0].read_text()
    with pytest.raises(TypeError, match="not both"):
        vis_export.convert([INPUT / "session.json"], "markdown", f"{tmp_path}/x/", options, no_tools=True)
    with pytest.raises(TypeError, match="'no_tool'"):
        vis_export.convert([INPUT / "session.json"], "markdown", f"{tmp_path}/x/", no_tool=True)  # type: ignore[call-arg]


def test_search_takes_dates_as_the_command_does(tmp_path: Path) -> None:
    from datetime import UTC, date, datetime

    vis_export.index(vis_export.load(INPUT / "session.json"), tmp_path / "idx")

    def found(**bounds: object) -> list[str]:
        return [hit.block_id for hit in vis_export.search("config", tmp_path / "idx", limit=100, **bounds)]  # type: ignore[arg-type]

    every = found()
    assert every and found(since="2025-02-19") == found(since=1739923200000) == every
    assert found(since=date(2025, 2, 19)) == found(since=datetime(2025, 2, 19, tzinfo=UTC)) == every
    assert found(until="2025-02-18") == found(until="2025-02-19T00:00:00+01:00") == []
    with pytest.raises(ValueError, match="not a date"):
        found(since="yesterday")
