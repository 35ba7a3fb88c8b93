"""A package adds a format and a search engine through entry points, and the
engine passes the importable conformance suite.

The plugin is a real distribution on the path (a module and its ``.dist-info``
with ``entry_points.txt``), found by the same metadata machinery as an
installed one; everything runs in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import INPUT

PLUGIN = """
from vis_export.formats import Format
from vis_export.formats.text import to_text
from vis_export.searchindex.engines.whoosh_engine import WhooshEngine


def shout():
    return Format("shout", "txt", lambda session, options: to_text(session).upper(), None)


class Whoosh2(WhooshEngine):
    name = "whoosh2"

    def __init__(self, directory, writable, threads=0):
        super().__init__(directory, writable)
"""
ENTRY_POINTS = """[vis_export.formats]
shout = shout_plugin:shout

[vis_export.engines]
whoosh2 = shout_plugin:Whoosh2
"""


def _install(folder: Path) -> dict[str, str]:
    (folder / "shout_plugin.py").write_text(PLUGIN)
    info = folder / "shout_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return {"PYTHONPATH": str(folder)}


def _run(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **env}
    )


def test_a_plugin_format_and_engine(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    env = _install(tmp_path / "site")
    out = tmp_path / "out.txt"
    result = _run(env, "-m", "vis_export", "convert", str(INPUT / "session.json"), "--to", "shout", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "PARSE THE CONFIG" in out.read_text()
    assert "shout" in _run(env, "-m", "vis_export", "convert", "--help").stdout
    result = _run(
        env,
        "-c",
        "from pathlib import Path; from vis_export.searchindex.conformance import check_engine; "
        f"check_engine('whoosh2', Path({str(tmp_path)!r}))",
    )
    assert result.returncode == 0, result.stderr


def test_without_the_plugin_its_names_are_unknown(tmp_path: Path) -> None:
    result = _run({}, "-m", "vis_export", "convert", str(INPUT / "session.json"), "--to", "shout")
    assert result.returncode == 2 and "'shout' is not one of" in result.stderr


@pytest.mark.slow
def test_a_plugin_format_whose_imports_fail_converts_the_same_on_a_local_cluster(tmp_path: Path) -> None:
    """``Format.imports`` are imported ahead by the process a local Dask
    cluster's workers are forked from: one that raises (not ImportError) at
    import must not stop that process, and the job, when rendering never needs it."""
    pytest.importorskip("distributed")
    (tmp_path / "site").mkdir()
    env = _install(tmp_path / "site")
    (tmp_path / "site" / "shout_broken.py").write_text("raise ValueError('this module fails at import')\n")
    (tmp_path / "site" / "shout_plugin.py").write_text(
        PLUGIN
        + "\nfrom dataclasses import replace\n\n\ndef imports_broken():\n"
        + "    return replace(shout(), imports=('shout_broken', 'no_such_module'))\n"
    )
    entry_points = tmp_path / "site" / "shout_plugin-1.0.dist-info" / "entry_points.txt"
    broken = "broken = shout_plugin:imports_broken\n\n[vis_export.engines]"
    entry_points.write_text(ENTRY_POINTS.replace("[vis_export.engines]", broken))
    args = ["convert", str(INPUT / "session.json"), "--to", "broken", "-o"]
    here = _run(env, "-m", "vis_export", *args, str(tmp_path / "here.txt"))
    there = _run(
        env, str(Path(__file__).parent / "all_on_workers.py"), *args, str(tmp_path / "there.txt"), "--dask", "local:1"
    )
    assert (here.returncode, here.stderr) == (there.returncode, there.stderr) == (0, ""), there.stderr
    assert (tmp_path / "here.txt").read_bytes() == (tmp_path / "there.txt").read_bytes()


@pytest.mark.slow
def test_a_plugin_format_on_a_path_the_script_adds_converts_on_a_local_cluster(tmp_path: Path) -> None:
    """A script that finds the plugin through ``sys.path.insert`` (no
    ``PYTHONPATH``): the local cluster's workers, forked from a process that
    imported vis-export ahead, know its format too."""
    pytest.importorskip("distributed")
    (tmp_path / "site").mkdir()
    env = _install(tmp_path / "site")
    script = tmp_path / "job.py"
    script.write_text(
        "import sys\n"
        f"sys.path[:0] = [{str(tmp_path / 'site')!r}, {str(Path(__file__).parent)!r}]\n"
        "from all_on_workers import waiting\n"
        "from vis_export.distributed.local import ClusterProcess\n"
        "from vis_export.cli import main\n\n"
        "ClusterProcess.answered = waiting\n"
        "main(sys.argv[1:])\n"
    )
    args = ["convert", str(INPUT / "session.json"), "--to", "shout", "-o"]
    here = _run(env, "-m", "vis_export", *args, str(tmp_path / "here.txt"))
    there = _run({}, str(script), *args, str(tmp_path / "there.txt"), "--dask", "local:1")
    assert (here.returncode, here.stderr) == (there.returncode, there.stderr) == (0, ""), there.stderr
    assert (tmp_path / "here.txt").read_bytes() == (tmp_path / "there.txt").read_bytes()


@pytest.mark.slow
def test_a_plugin_format_that_prints_does_not_stop_a_local_clusters_workers(tmp_path: Path) -> None:
    """A format that writes to standard output on a worker: the job goes on
    (the workers' standard output is not the pipe their cluster answers on,
    which, full, would block them)."""
    pytest.importorskip("distributed")
    (tmp_path / "site").mkdir()
    env = _install(tmp_path / "site")
    chatty = PLUGIN.replace(
        "lambda session, options: to_text(session).upper()",
        "lambda session, options: print('chatty ' * 40_000) or to_text(session).upper()",
    )
    assert chatty != PLUGIN
    (tmp_path / "site" / "shout_plugin.py").write_text(chatty)
    args = ["convert", str(INPUT / "session.json"), "--to", "shout", "-o"]
    here = _run(env, "-m", "vis_export", *args, str(tmp_path / "here.txt"))
    job = [str(Path(__file__).parent / "all_on_workers.py"), *args, str(tmp_path / "there.txt"), "--dask", "local:1"]
    there = _run(env, *job, timeout=60)  # a job that blocks fails here
    assert (here.returncode, here.stderr) == (there.returncode, there.stderr) == (0, ""), there.stderr
    assert (tmp_path / "here.txt").read_bytes() == (tmp_path / "there.txt").read_bytes()
