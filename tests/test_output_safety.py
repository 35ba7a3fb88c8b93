"""R6 for outputs: never replace a source, a clear place for every session,
and nothing half-written left behind, even when the export is killed."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from vis_export.cli import main


def _session(session_id: str, text: str = "hello") -> dict:
    return {
        "id": session_id,
        "title": session_id,
        "messages": [
            {
                "id": "m",
                "role": "user",
                "status": "completed",
                "created_at": 1,
                "content": [{"id": "p", "type": "prose", "markdown": text}],
            }
        ],
    }


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_json_into_the_source_folder_never_replaces_a_source(tmp_path: Path) -> None:
    # Session "b" would be written as b.json: the other source file's name.
    (tmp_path / "a.json").write_text(json.dumps(_session("b", "from a")))
    (tmp_path / "b.json").write_text(json.dumps(_session("a", "from b")))
    before = _snapshot(tmp_path)
    code, output = _run("convert", str(tmp_path), "--to", "json", "-o", str(tmp_path))
    assert code == 1 and "not written" in output and "source" in output
    assert _snapshot(tmp_path) == before


def test_an_output_file_that_is_a_source_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(_session("s")))
    (tmp_path / "link.txt").symlink_to(source)
    os.link(source, tmp_path / "hard.md")
    before = _snapshot(tmp_path)
    for target, fmt in (("chat.json", "json"), ("link.txt", "text"), ("hard.md", "markdown")):
        code, output = _run("convert", str(source), "--to", fmt, "-o", str(tmp_path / target))
        assert code == 1 and f"{target}: not written: it is a source file being read" in output
    assert _snapshot(tmp_path) == before


def test_json_never_goes_into_a_folder_read_through_a_link(tmp_path: Path) -> None:
    """The walk follows a linked subfolder, so what is written there (however the
    path is spelled) would be read back next time: refused, even while it is empty."""
    source, elsewhere = tmp_path / "src", tmp_path / "elsewhere"
    source.mkdir()
    elsewhere.mkdir()
    (source / "chat.json").write_text(json.dumps(_session("s")))
    (source / "link").symlink_to(elsewhere)
    for output in (source / "link" / "out.json", source / "link" / "new" / "s.json", elsewhere / "out.json"):
        code, output_text = _run("convert", str(source), "--to", "json", "-o", str(output))
        assert code == 1, output_text
        assert f"it is inside the source folder {elsewhere.resolve()}, where it would be read back" in output_text
    assert list(elsewhere.iterdir()) == []
    code, _ = _run("convert", str(source / "chat.json"), "--to", "json", "-o", str(source / "link" / "out.json"))
    assert code == 0  # a named file's folder is not walked, nor its links


def test_other_formats_may_go_into_a_source_folder(tmp_path: Path) -> None:
    (tmp_path / "chat.json").write_text(json.dumps(_session("s")))
    code, _ = _run("convert", str(tmp_path), "--to", "html", "-o", str(tmp_path))
    assert code == 0 and (tmp_path / "s.html").is_file()


def test_a_trailing_slash_names_a_folder(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(_session("s")))
    code, _ = _run("convert", str(source), "--to", "text", "-o", f"{tmp_path / 'out' / 'single'}/")
    assert code == 0 and (tmp_path / "out" / "single" / "s.txt").is_file()


def test_several_sessions_and_a_file_for_output(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    for name in ("a", "b"):
        (tmp_path / "in" / f"{name}.json").write_text(json.dumps(_session(name)))
    (tmp_path / "taken").write_text("a file")
    code, output = _run("convert", str(tmp_path / "in"), "--to", "text", "-o", str(tmp_path / "taken"))
    assert code == 1 and output.strip().endswith("is a file; 2 sessions need a directory")
    code, _ = _run("convert", str(tmp_path / "in"), "--to", "text", "-o", str(tmp_path / "new"))
    assert code == 0 and sorted(p.name for p in (tmp_path / "new").iterdir()) == ["a.txt", "b.txt"]


def test_several_html_documents_never_share_standard_output(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(json.dumps(_session(name)))
    result = CliRunner().invoke(main, ["convert", str(tmp_path), "--to", "html"])
    assert result.exit_code == 2 and "name an output directory with -o" in result.output
    assert "<html" not in result.output


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])  # SIGHUP: the terminal closed
def test_sigterm_during_an_export_leaves_no_partial_file(tmp_path: Path, number: int) -> None:
    big = {
        "id": "big",
        "messages": [
            {
                "id": f"m{n}",
                "role": "user",
                "status": "completed",
                "created_at": n,
                "content": [{"id": "p", "type": "prose", "markdown": f"paragraph {n} " * 20}],
            }
            for n in range(60_000)
        ],
    }
    (tmp_path / "big.json").write_text(json.dumps(big))
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vis_export",
            "convert",
            str(tmp_path / "big.json"),
            "--to",
            "html",
            "-o",
            str(out / "big.html"),
        ],
        stderr=subprocess.PIPE,
    )
    # A session this large is rendered by a job: its partial file is made inside the job's folder in ``out``.
    deadline = time.monotonic() + 60
    while not list(out.rglob("*.part")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert list(out.rglob("*.part")), "no partial file was made to be left behind"
    assert process.poll() is None, "the export finished before it could be interrupted"
    process.send_signal(number)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0 and b"Traceback" not in stderr
    assert list(out.iterdir()) == []


_SIGNAL_AT_EVERY_STEP = r"""
import os, signal, sys
from pathlib import Path
from vis_export.output import write_atomic

signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
folder, data = Path(sys.argv[1]), "x" * 100_000
step = 0
while True:
    target = folder / f"out{step}.txt"
    count = 0

    def trace(frame, event, arg):
        global count
        count += 1
        if count == step:
            os.kill(os.getpid(), signal.SIGTERM)
        return trace

    interrupted = False
    sys.settrace(trace)
    try:
        write_atomic(target, [data[:50_000], data[50_000:]])
    except SystemExit:
        interrupted = True
    finally:
        sys.settrace(None)
    left = sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))
    if left or (target.exists() and target.read_text() != data):
        print(f"step {step}: left {left}, target exists: {target.exists()}")
        sys.exit(1)
    if not interrupted and count < step:
        break
    step += 1
print(step)
"""


def test_sigterm_at_any_step_of_an_atomic_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A SIGTERM delivered at each line ``write_atomic`` runs, in turn, down into
    ``tempfile`` (a real signal to a real process, timed by a tracer): wherever it
    lands, the target is absent or whole and no ``.part`` file stays behind. Under
    load the signal can land right after the temporary file is created, before
    its removal is armed."""
    result = subprocess.run(
        [sys.executable, "-c", _SIGNAL_AT_EVERY_STEP, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert int(result.stdout) > 20  # the write had that many steps, each interrupted once


# --- outputs that are streams (R3): written into, never renamed over ---------------


def _null_device(path: Path) -> Path:
    """A node of the machine's null device, made here: the real ``/dev/null`` is never at stake."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def _is_null_device(path: Path) -> bool:
    info = os.lstat(path)
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node takes root")
@pytest.mark.parametrize("fmt", ["text", "json", "pdf"])
def test_a_character_device_is_written_into_never_replaced(tmp_path: Path, fmt: str) -> None:
    """``-o /dev/null`` as root: a rename over the node would turn it into a file
    that every later program writing to it fills. Named as the file of one
    session, or found in a folder under a session's name, the node stays."""
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(_session("s")))
    node = _null_device(tmp_path / "null")
    (tmp_path / "out").mkdir()
    inside = _null_device(tmp_path / "out" / f"s.{'txt' if fmt == 'text' else fmt}")
    for output in (str(node), f"{tmp_path / 'out'}/"):
        code, text = _run("convert", str(source), "--to", fmt, "-o", output)
        assert code == 0, text
    assert _is_null_device(node) and _is_null_device(inside)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.json", "null", "out"]  # no temporary file left
    assert [p.name for p in (tmp_path / "out").iterdir()] == [inside.name]


def test_a_fifo_is_written_into_never_replaced(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(_session("s", "through a pipe")))
    code, _ = _run("convert", str(source), "--to", "markdown", "-o", str(tmp_path / "expected.md"))
    assert code == 0
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        code, text = _run("convert", str(source), "--to", "markdown", "-o", str(fifo))
    finally:
        if reader.is_alive() and not received:  # the export never opened it: let the reader go
            with open(fifo, "wb"):
                pass
        reader.join(timeout=30)
    assert code == 0, text
    assert not reader.is_alive(), "the export replaced the FIFO: its reader still waits"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received == [(tmp_path / "expected.md").read_bytes()]


def test_standard_output_under_another_name_is_written_into(tmp_path: Path) -> None:
    """A link to ``/proc/self/fd/1`` (as ``/dev/stdout`` is) leads to this
    process's standard output, here a file opened for appending by a shell: the
    export is appended through the descriptor, and the link stays a link."""
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(_session("s", "to standard output")))
    link = tmp_path / "stdout.txt"
    link.symlink_to("/proc/self/fd/1")
    captured = tmp_path / "captured"
    captured.write_text("before\n")
    with open(captured, "a") as stdout:
        result = subprocess.run(
            [sys.executable, "-m", "vis_export", "convert", str(source), "--to", "text", "-o", str(link)],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    expected = subprocess.run(
        [sys.executable, "-m", "vis_export", "convert", str(source), "--to", "text"], capture_output=True, timeout=120
    ).stdout
    assert captured.read_bytes() == b"before\n" + expected


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node takes root")
def test_a_file_made_elsewhere_is_placed_into_a_stream(tmp_path: Path) -> None:
    """How a Dask job puts a rendered file at its name: into a device, never over it."""
    from vis_export.output import place

    made = tmp_path / "made.txt"
    made.write_text("rendered")
    node = _null_device(tmp_path / "null")
    place(made, node)
    assert _is_null_device(node) and not made.exists()
    made.write_text("rendered")
    place(made, tmp_path / "new" / "file.txt")
    assert (tmp_path / "new" / "file.txt").read_text() == "rendered" and not made.exists()


def test_a_socket_is_refused_as_an_output(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(_session("s")))
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        code, text = _run("convert", str(source), "--to", "text", "-o", str(tmp_path / "sock"))
    finally:
        server.close()
    assert code == 1 and "is a socket" in text and len(text.splitlines()) == 1
    assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)


def test_an_index_named_as_a_device_or_a_fifo_is_refused_and_left(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(_session("s")))
    os.mkfifo(tmp_path / "fifo")
    targets = [tmp_path / "fifo"]
    if os.geteuid() == 0:
        targets.append(_null_device(tmp_path / "null"))
    for target in targets:
        kind = stat.S_IFMT(os.lstat(target).st_mode)
        code, text = _run("index", str(source), "--index", str(target))
        assert code == 1
        assert text.strip() == f"vis-export: {target}: not a directory; an index is a directory of its own"
        assert stat.S_IFMT(os.lstat(target).st_mode) == kind
