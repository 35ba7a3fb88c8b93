"""Hostile sources: special files, deep and extreme values, near-miss JSON.

Reading never raises, never hangs and never grows without bound; every
problem is one located line; one bad session never stops the others; and what
loads, every format renders. Anything that a regression could make hang runs
under a hard time limit (a subprocess with a timeout, or SIGALRM).
"""

from __future__ import annotations

import copy
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT
from hypothesis import example, given, strategies as st
from timelimit import cpu_limit

from vis_export import to_html, to_json, to_markdown, to_text
from vis_export.contract import MAX_DEPTH, MAX_TIME
from vis_export.sources import jsontext, read
from vis_export.sources.files import read_bytes
from vis_export.sources.jsontext import MAX_TEXT_BYTES, PER_CHARACTER, PER_CONTAINER, containers_allowed

MESSAGE = {
    "id": "m1",
    "role": "user",
    "status": "completed",
    "created_at": 1740000000000,
    "content": [{"id": "b1", "type": "prose", "markdown": "hi"}],
}
MEMORY_CAP = 3 << 30  # a regression that reads /dev/zero fails at this, not at the machine's limit


def run_cli(*args: str, stdin: bytes | None = None, memory: int = MEMORY_CAP) -> subprocess.CompletedProcess[str]:
    """``vis-export ARGS`` in a subprocess, with a timeout and a memory cap."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "vis_export", *args],
        capture_output=True,
        timeout=30,
        preexec_fn=cap,
        input=stdin.decode() if stdin is not None else None,
        text=True,
    )


def test_one_bad_file_never_stops_a_directory(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    os.mkfifo(tmp_path / "sniffed")  # no session suffix: looked at for a SQLite header, without blocking
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "deep.json").write_text("[" * 5000 + "]" * 5000)
    (tmp_path / "nan.jsonl").write_text(
        json.dumps(MESSAGE) + "\n" + json.dumps(MESSAGE).replace("1740000000000", "NaN")
    )
    (tmp_path / "good.json").write_text(json.dumps(MESSAGE))
    result = run_cli("validate", str(tmp_path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines == [
        f"{tmp_path / 'deep.json'}: line 1 column {MAX_DEPTH + 1}: not JSON: nested deeper than {MAX_DEPTH} levels",
        f"{tmp_path / 'nan.jsonl'}: line 2: not JSON: NaN is not a JSON number (column 67)",
        f"{tmp_path / 'pipe.jsonl'}: not a regular file (a FIFO); only regular files are read",
        f"{tmp_path / 'zero.json'}: not a regular file (a character device); only regular files are read",
        "4 of 5 file(s) invalid, 1 valid session(s)",
    ]
    report = {entry["file"]: entry for entry in json.loads(run_cli("validate", "--json", str(tmp_path)).stdout)}
    assert report[str(tmp_path / "good.json")]["sessions"] == 1
    assert [report[name]["valid"] for name in sorted(report)] == [False, True, False, False, False]


def test_more_json_containers_than_memory_allows_are_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 MB of empty lists took 1.9 GB to validate: a text with more brackets than
    its size leaves room for in the memory budget is refused at the first bracket
    past that, before anything is built. JSON Lines count as a whole: no line need
    pass it alone. Exactly at the limit with a small budget; the finding itself
    in a process of its own, under a memory cap."""
    prefix = '{"id":"s","messages":[],"x":['

    def lists(count: int) -> str:
        return prefix + ",".join(["[]"] * (count - 3)) + "]}"

    def bracket(text: str, index: int) -> str:
        position = [m.start() for m in re.finditer(r"[\[{]", text)][index]
        line_start = text.rindex("\n", 0, position) + 1 if "\n" in text[:position] else 0
        return f"line {text.count(chr(10), 0, position) + 1} column {position - line_start + 1}"

    def refusal(length: int, budget: int) -> str:
        return (
            f"holds more than {containers_allowed(length, budget):,} JSON objects and arrays for its size:"
            f" reading it would take more than {budget / 1e9:g} GB of memory"
        )

    budget = 3_000_000
    monkeypatch.setattr(jsontext, "MEMORY_BUDGET", budget)
    fits = max(c for c in range(3, 20_000) if c <= containers_allowed(len(lists(c)), budget))
    assert [r.ok for r in read_bytes(lists(fits).encode(), "f", "f")] == [True]
    past = lists(fits + 1)
    allowed = containers_allowed(len(past), budget)
    (refused,) = read_bytes(past.encode(), "f", "f")
    assert [p.line("f") for p in refused.problems] == [f"f: {bracket(past, allowed)}: {refusal(len(past), budget)}"]
    line = json.dumps({**MESSAGE, "x": [[]] * (fits // 4)})
    whole = f"{line}\n" * 5
    (refused,) = read_bytes(whole.encode(), "f", "f")
    where = bracket(whole, containers_allowed(len(whole), budget))
    assert [p.line("f") for p in refused.problems] == [f"f: {where}: {refusal(len(whole), budget)}"]

    monkeypatch.undo()
    huge = tmp_path / "huge.json"
    huge.write_text(text := lists(13_000_000))  # the finding was 60 MB; 39 MB is within the size limit
    allowed = containers_allowed(len(text), jsontext.MEMORY_BUDGET)
    where = f"line 1 column {len(prefix) + (allowed - 3) * 3 + 1}"  # "[]," after the first three brackets
    result = run_cli("validate", str(huge), memory=1536 << 20)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        f"{huge}: {where}: {refusal(len(text), jsontext.MEMORY_BUDGET)}",
        "1 of 1 file(s) invalid, 0 valid session(s)",
    ]


def test_special_files_named_directly(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = run_cli("validate", str(tmp_path / "pipe"), "/dev/zero", str(tmp_path / "missing.json"))
    assert result.returncode == 1
    assert result.stderr.splitlines()[:3] == [
        f"{tmp_path / 'pipe'}: not a regular file (a FIFO); only regular files are read",
        "/dev/zero: not a regular file (a character device); only regular files are read",
        f"{tmp_path / 'missing.json'}: no such file or directory",
    ]


# --- near-miss JSON, generated -------------------------------------------------------------


class Raw(str):
    """A token written into the JSON text as it is: what ``json.dumps`` cannot write."""


def dump(value: Any) -> str:
    """JSON text with ``Raw`` tokens in place; strings ASCII-escaped, so a lone
    surrogate becomes a ``\\udXXX`` escape, as another writer would leave it."""
    if isinstance(value, Raw):
        return value
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {dump(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(item) for item in value) + "]"
    return json.dumps(value)


extreme_numbers = st.sampled_from(
    [
        Raw("NaN"),
        Raw("Infinity"),
        Raw("-Infinity"),
        Raw("1e400"),
        Raw("-1E999"),
        Raw("9" * 4301),
        Raw("1" + "0" * 400),
        10**30,
        -1,
        1e300,
        -0.0,
        2**63,
        MAX_TIME,
        MAX_TIME + 1,
        0.5,
        3.0,
        True,
        None,
    ]
)
deep = st.sampled_from([MAX_DEPTH - 10, MAX_DEPTH - 2, MAX_DEPTH, MAX_DEPTH + 1, 999, 5000]).map(
    lambda n: Raw("[" * n + "]" * n)
)
lone_surrogates = st.tuples(
    st.text(max_size=3), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.text(max_size=3)
).map("".join)
wrong = st.one_of(
    extreme_numbers,
    deep,
    lone_surrogates,
    st.text(max_size=4),
    st.sampled_from(["", " ", ":user", "Assistant", "user", "completed", "content.block.delta"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["k", "badKey"]), st.integers(), max_size=2),
)
MESSAGE_FIELDS = ("id", "role", "status", "created_at", "completed_at", "model", "content", "meta")
BLOCKS = [
    {"id": "b1", "type": "prose", "markdown": "hi"},
    {"id": "t1", "type": "tool", "tool": "x", "status": "completed", "input": {"q": 1}, "started_at": 1},
    {"id": "c1", "type": "code", "text": "x = 1\n", "language": "python"},
]
BLOCK_FIELDS = ("id", "type", "markdown", "text", "input", "output", "started_at", "completed_at", "status")


@st.composite
def near_miss_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A valid message with a few envelope and block fields replaced by near misses."""
    message: dict[str, Any] = {**MESSAGE, "content": copy.deepcopy(BLOCKS)}
    for name in draw(st.lists(st.sampled_from(MESSAGE_FIELDS), max_size=2, unique=True)):
        message[name] = draw(wrong)
    blocks = (
        [block for block in message["content"] if isinstance(block, dict)]
        if isinstance(message["content"], list)
        else []
    )
    for _ in range(draw(st.integers(0, 2)) if blocks else 0):
        draw(st.sampled_from(blocks))[draw(st.sampled_from(BLOCK_FIELDS))] = draw(wrong)
    return message


@st.composite
def near_miss_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Events of several sessions, each counting its own ``seq``, some fields near misses."""
    events = []
    for _ in range(draw(st.integers(1, 8))):
        event: dict[str, Any] = draw(
            st.sampled_from(
                [
                    {"type": "content.block.started", "block": {"id": "b1", "type": "prose", "markdown": ""}},
                    {"type": "content.block.delta", "block_id": "b1", "field": "markdown", "text": "x"},
                    {"type": "content.block.completed", "block_id": "b1"},
                    {"type": "turn.completed", "status": "completed"},
                    {"type": "queue.paused"},
                ]
            )
        ).copy()
        event.update(
            turn_id=draw(st.sampled_from(["t1", "t2"])),
            session_id=draw(st.sampled_from(["a", "b", "c"])),
            seq=draw(st.integers(1, 4)),
            ts=draw(st.integers(0, 10)),
        )
        for name in draw(
            st.lists(st.sampled_from(["session_id", "seq", "ts", "turn_id", "block", "text"]), max_size=1)
        ):
            event[name] = draw(wrong)
        events.append(event)
    return events


LONIS = [json.loads(line) for line in (INPUT / "lonis.jsonl").read_text().splitlines()]
LONIS_LATE = {
    **LONIS[0],
    "attribution": {"identity": "x", "provenance": {"when": "9999-12-31T23:59:59-14:00", "producer": "x"}},
}


@st.composite
def near_miss_lonis(draw: st.DrawFn) -> dict[str, Any]:
    block = copy.deepcopy(draw(st.sampled_from(LONIS)))
    where = draw(
        st.sampled_from(
            [
                ("attribution", "provenance", "when"),
                ("payload", "data", "extra"),
                ("payload", "data"),
                ("attribution", "identity"),
            ]
        )
    )
    target = block
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = draw(
        st.one_of(wrong, st.sampled_from(["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]))
    )
    return block


documents = st.one_of(
    near_miss_messages().map(lambda m: ("message.json", dump(m))),
    st.lists(near_miss_messages(), min_size=1, max_size=3).map(lambda ms: ("array.json", dump(ms))),
    st.tuples(st.one_of(wrong, st.just(5)), st.lists(near_miss_messages(), max_size=2)).map(
        lambda s: ("session.json", dump({"id": "s", "created_at": s[0], "messages": s[1]}))
    ),
    st.lists(near_miss_messages(), min_size=1, max_size=3).map(
        lambda ms: ("lines.jsonl", "\n".join(dump(m) for m in ms))
    ),
    near_miss_events().map(lambda es: ("events.jsonl", "\n".join(dump(e) for e in es))),
    st.lists(near_miss_lonis(), min_size=1, max_size=2).map(lambda bs: ("lonis.jsonl", "\n".join(dump(b) for b in bs))),
)


@given(documents, st.booleans())
@example(("message.json", dump({**MESSAGE, "meta": Raw("NaN")})), False)
@example(("message.json", dump({**MESSAGE, "meta": "\ud800"})), False)
@example(("message.json", dump({**MESSAGE, "created_at": 1e300})), True)
@example(("lines.jsonl", dump(MESSAGE) + "\n" + dump({**MESSAGE, "meta": Raw("[" * 2000 + "]" * 2000)})), True)
@example(("lonis.jsonl", dump(LONIS_LATE)), False)
def test_near_miss_json_is_read_without_raising_and_every_problem_located(
    document: tuple[str, str], lenient: bool
) -> None:
    name, text = document
    with tempfile.TemporaryDirectory() as folder, cpu_limit(20):
        path = Path(folder) / name
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        results = list(read(path, lenient=lenient))
        assert results
        for result in results:
            assert result.source == str(path)
            for problem in result.problems:
                assert isinstance(problem.location, str) and "\n" not in problem.line(result.source)
            if result.session is None:
                assert result.problems and all(p.location for p in result.problems if _is_value_problem(p.message))
                continue
            assert lenient or result.ok
            document_json = to_json(result.session)
            json.loads(document_json, parse_constant=_refuse)  # strict JSON out: no NaN, no Infinity
            document_json.encode("utf-8")  # no lone surrogate either
            to_text(result.session), to_markdown(result.session), to_html(result.session)


def _is_value_problem(message: str) -> bool:
    """Problems about a value (not the file as a whole) must say where the value is."""
    return not message.startswith(("no ", "empty file", "expected a message"))


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} in JSON output")


def _session_of(content: list[Any], messages: int) -> bytes:
    found = [{**MESSAGE, "id": f"m{n}", "content": content} for n in range(messages)]
    return json.dumps({"id": "s", "messages": found}, separators=(",", ":")).encode()


def _traced_peak(data: bytes) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        (result,) = read_bytes(data, "s.json", "s")
        assert result.ok, result.problems
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_stated_memory_bound_holds() -> None:
    """``jsontext`` estimates what loading takes as ``PER_CHARACTER`` bytes a
    character and ``PER_CONTAINER`` a container, and refuses past the budget:
    the estimate must not be below what loading takes. Measured (Python's own
    allocations, the text included) on the costliest shapes known, at about 1 MB."""
    two_letters = [a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    tool = {"id": "t", "type": "tool", "tool": "t", "status": "completed"}
    shapes = {
        "two-letter strings": _session_of([{**tool, "output": two_letters}], 250),
        "tiny prose blocks": _session_of([{"id": str(n), "type": "prose", "markdown": "ok"} for n in range(20)], 1200),
        "numbers": _session_of([{**tool, "output": list(range(10**5, 10**5 + 1000))}], 150),
        "small maps": _session_of([{**tool, "output": [{"a": n} for n in range(1000)]}], 50),
    }
    for shape, data in shapes.items():
        estimate = PER_CHARACTER * len(data) + PER_CONTAINER * (data.count(b"{") + data.count(b"["))
        assert _traced_peak(data) + len(data) <= estimate, shape
    assert PER_CHARACTER * MAX_TEXT_BYTES <= jsontext.MEMORY_BUDGET
