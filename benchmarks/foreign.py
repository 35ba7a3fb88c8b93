"""Reading other agents' transcripts beside reading the same conversation as Vis
JSON Lines (goal: at most 1.5x).

A coding agent's session is mostly tool calls: the generated Claude Code file
and Codex rollout alternate a prompt, thinking or reasoning, a few tool calls
with their results (one entry each, as the tools write them) and an answer.
The anchor is the imported session written as Vis JSON Lines (one message a
line) and read back: the same conversation, in the toolkit's own format.

python -m benchmarks.foreign          # the figures at 1 MB and 16 MB (CPU time, best of 15 and 5)
python -m benchmarks.foreign --phases # where the 1 MB reads' time goes (CPU time, medians of 31)
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from benchmarks.harness import Result, best_time, cpu_medians, table
from corpus import words

COMMANDS = ("pytest -q tests/", "git status --short", "rg -n 'def parse' src/", "ls -la build/")


def _turns(rng: random.Random, target_bytes: int, write: Callable[[random.Random, int], list[dict[str, Any]]]) -> bytes:
    lines: list[bytes] = []
    size, turn = 0, 0
    while size < target_bytes:
        for entry in write(rng, turn):
            line = json.dumps(entry).encode() + b"\n"
            lines.append(line)
            size += len(line)
        turn += 1
    return b"".join(lines)


def _claude_turn(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    def entry(kind: str, n: int, content: Any, api_id: str | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind, "content": content}
        if api_id:
            message.update(id=api_id, type="message", model="claude-sonnet-4")
        return {
            "type": kind,
            "uuid": f"{turn}-{n}",
            "parentUuid": f"{turn}-{n - 1}",
            "sessionId": "bench",
            "cwd": "/work/project",
            "version": "2.0.0",
            "timestamp": f"2025-06-01T10:{turn % 60:02d}:{n % 60:02d}.000Z",
            "message": message,
        }

    api = f"msg_{turn}"
    out = [
        entry("user", 0, words(rng, 30)),
        entry("assistant", 1, [{"type": "thinking", "thinking": words(rng, 60), "signature": "c2ln" * 40}], api),
    ]
    for n in range(2, 2 + 2 * rng.randint(2, 5), 2):
        call = {
            "type": "tool_use",
            "id": f"toolu_{turn}_{n}",
            "name": "Bash",
            "input": {"command": rng.choice(COMMANDS), "description": words(rng, 5)},
        }
        out.append(entry("assistant", n, [call], api))
        result = {
            "type": "tool_result",
            "tool_use_id": call["id"],
            "content": "\n".join(words(rng, 8) for _ in range(12)),
        }
        out.append(entry("user", n + 1, [result]))
    out.append(entry("assistant", 99, [{"type": "text", "text": words(rng, 80)}], api))
    return out


def _codex_turn(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    def record(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"2025-09-01T10:{turn % 60:02d}:00.000Z", "type": kind, "payload": payload}

    prompt = words(rng, 30)
    out = [
        record("turn_context", {"cwd": "/work", "model": "gpt-5-codex"}),
        record(
            "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
        ),
        record("event_msg", {"type": "user_message", "message": prompt}),
        record(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": words(rng, 40)}],
                "encrypted_content": "gAAA" * 200,
            },
        ),
    ]
    for n in range(rng.randint(2, 5)):
        call_id = f"call_{turn}_{n}"
        arguments = json.dumps({"command": ["bash", "-lc", rng.choice(COMMANDS)], "workdir": "/work"})
        out.append(
            record(
                "response_item", {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}
            )
        )
        output = json.dumps({"output": "\n".join(words(rng, 8) for _ in range(12)), "metadata": {"exit_code": 0}})
        out.append(record("response_item", {"type": "function_call_output", "call_id": call_id, "output": output}))
    answer = words(rng, 80)
    out.append(
        record(
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
        )
    )
    out.append(record("event_msg", {"type": "agent_message", "message": answer}))
    return out


def claude_code_bytes(target_bytes: int, seed: int = 11) -> bytes:
    return _turns(random.Random(seed), target_bytes, _claude_turn)


def codex_bytes(target_bytes: int, seed: int = 11) -> bytes:
    head = {"timestamp": "2025-09-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": "bench", "cwd": "/work"}}
    return json.dumps(head).encode() + b"\n" + _turns(random.Random(seed), target_bytes, _codex_turn)


def run(sizes: dict[str, int]) -> list[Result]:
    from vis_export.sources.files import read_bytes

    results = []
    for label, size in sizes.items():
        for name, data in (("Claude Code", claude_code_bytes(size)), ("Codex", codex_bytes(size))):
            (loaded,) = read_bytes(data, "bench.jsonl", "bench")
            assert loaded.session is not None, loaded.problems
            vis = "".join(json.dumps(m.to_json()) + "\n" for m in loaded.session.messages).encode()
            repeat = 5 if size > 2_000_000 else 15
            ours = best_time(partial(read_bytes, data, "bench.jsonl", "bench"), repeat, time.process_time)
            anchor = best_time(partial(read_bytes, vis, "vis.jsonl", "vis"), repeat, time.process_time)
            results.append(Result(f"read {name} {label}", ours, "same as Vis JSONL", anchor, "<= 1.5x"))
    return results


def phases(size: int, repeat: int = 31) -> str:
    """Where each read's CPU time goes (medians, every path in turn in one run): decoding
    its lines (``parse_lines``), the reader (an importer's mapping, checking and
    building; the anchor's checking and building), and the rest (the quick reading
    of the whole file, which JSON Lines fails, and finding what the file is)."""
    from vis_export.contract.duplicates import recording
    from vis_export.sources.files import _collector_paused, read_bytes
    from vis_export.sources.imported import foreign_lines
    from vis_export.sources.jsontext import parse_lines
    from vis_export.sources.messages import message_lines

    def decode(text: str) -> None:
        with _collector_paused(), recording():  # as ``read_bytes`` reads
            parse_lines(text)

    def importer(text: str) -> None:
        with _collector_paused(), recording():
            results = foreign_lines(parse_lines(text), [], text, "b", "b", False)
        assert results is not None and results[0].session is not None

    def anchor(text: str) -> None:
        with _collector_paused(), recording():
            assert message_lines(parse_lines(text), "v", "v", owned=True).session is not None

    out = [f"{'path':<24} {'total':>8} {'decode':>8} {'reader':>8} {'rest':>8}  (ms CPU, medians of {repeat})"]
    for name, data in (("Claude Code", claude_code_bytes(size)), ("Codex", codex_bytes(size))):
        (loaded,) = read_bytes(data, "bench.jsonl", "bench")
        assert loaded.session is not None
        vis = "".join(json.dumps(m.to_json()) + "\n" for m in loaded.session.messages).encode()
        paths: list[Callable[[], object]] = []
        for raw, reader in ((data, importer), (vis, anchor)):
            text = raw.decode()
            paths += [partial(read_bytes, raw, "b.jsonl", "b"), partial(decode, text), partial(reader, text)]
        times = cpu_medians(paths, repeat)
        for label, (total, decoding, read) in ((name, times[:3]), (f"{name} anchor", times[3:])):
            cells = (total, decoding, read - decoding, total - read)
            out.append(f"{label:<24} " + " ".join(f"{t * 1000:8.2f}" for t in cells))
    return "\n".join(out)


if __name__ == "__main__":
    if "--phases" in sys.argv:
        print(phases(1_000_000))
        sys.exit()
    sizes = {"1 MB": 1_000_000} if "--quick" in sys.argv else {"1 MB": 1_000_000, "16 MB": 16_000_000}
    print(table(run(sizes)))
