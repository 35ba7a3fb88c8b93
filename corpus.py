"""Deterministic synthetic sessions, from one message to well over 16 MB, for the benchmarks and the tests alike.

It stands beside both, importing neither and nothing of ``vis_export``: the benchmarks measure on it and the tests
make their large and realistic inputs with it, so a test never depends on the benchmark package (its harness, its
plotting) and a benchmark never on a test helper.

The mix follows real agent sessions: prose with Markdown, code blocks in a few
languages, tool calls with nested JSON input and output, private and visible
reasoning. The same seed and size always give the same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

WORDS = (
    "the parser reads config files and returns a mapping of sections keys values tests pass "
    "deploy server request handler cache index query session token error retry"
).split()
CODE = {
    "python": "def parse_config(path):\n    with open(path) as f:\n        return toml.load(f)\n",
    "rust": "fn parse(input: &str) -> Result<Config, Error> {\n    toml::from_str(input)\n}\n",
    "javascript": "export function parseConfig(text) {\n  return JSON.parse(text);\n}\n",
    "bash": 'for f in tests/*.py; do\n  python -m pytest "$f" -q\ndone\n',
}


def words(rng: random.Random, n: int) -> str:
    """``n`` words of a developer's vocabulary: text a search finds and a layout wraps, with no meaning to get wrong."""
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _block(rng: random.Random, index: int) -> dict[str, Any]:
    kind = rng.choices(["prose", "code", "tool", "reasoning"], weights=[5, 3, 2, 1])[0]
    block_id = f"b{index}"
    if kind == "prose":
        paragraphs = [
            f"**{words(rng, 3)}** {words(rng, rng.randint(20, 80))} `inline_code()`" for _ in range(rng.randint(1, 4))
        ]
        if rng.random() < 0.15:  # answers often quote code in the prose itself
            language = rng.choice(list(CODE))
            paragraphs.insert(1, f"```{language}\n{CODE[language]}```")
        return {"id": block_id, "type": "prose", "markdown": "\n\n".join(paragraphs)}
    if kind == "code":
        language = rng.choice(list(CODE))
        return {"id": block_id, "type": "code", "language": language, "text": CODE[language] * rng.randint(1, 30)}
    if kind == "tool":
        return {
            "id": block_id,
            "type": "tool",
            "tool": rng.choice(["run_tests", "read_file", "shell"]),
            "status": rng.choice(["completed", "completed", "failed"]),
            "input": {
                "paths": [f"src/module_{rng.randint(1, 99)}.py" for _ in range(rng.randint(1, 5))],
                "options": {"fail_fast": rng.random() < 0.5, "timeout_ms": rng.randint(100, 9000)},
            },
            "output": {
                "pass": rng.randint(0, 50),
                "fail": rng.randint(0, 3),
                "log": [words(rng, 12) for _ in range(rng.randint(1, 6))],
            },
            "started_at": 1740000000000 + index,
            "completed_at": 1740000000500 + index,
        }
    return {
        "id": block_id,
        "type": "reasoning",
        "text": words(rng, rng.randint(20, 120)),
        "visibility": rng.choice(["private", "visible"]),
    }


def session(target_bytes: int, seed: int = 7) -> dict[str, Any]:
    """A session whose JSON is at least ``target_bytes`` long (one message when tiny)."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    size, block_index, t = 0, 0, 1740000000000
    while True:
        role = "user" if len(messages) % 2 == 0 else "assistant"
        count = 1 if role == "user" else rng.randint(2, 8)
        content = []
        for _ in range(count):
            block = (
                {"id": f"b{block_index}", "type": "prose", "markdown": words(rng, 30)}
                if role == "user"
                else _block(rng, block_index)
            )
            content.append(block)
            block_index += 1
        message = {
            "id": f"m{len(messages)}",
            "role": role,
            "status": "completed",
            "content": content,
            "created_at": t,
            "completed_at": t + 900,
        }
        if role == "assistant":
            message.update(model="gpt-5.6", provider="openai-codex")
        messages.append(message)
        t += 1000
        size += len(json.dumps(message))
        if size >= target_bytes:
            break
    return {
        "id": f"bench_{target_bytes}",
        "title": "Benchmark session",
        "created_at": 1740000000000,
        "messages": messages,
    }


def session_bytes(target_bytes: int, seed: int = 7) -> bytes:
    """``session`` as the UTF-8 JSON a Vis file holds."""
    return json.dumps(session(target_bytes, seed), ensure_ascii=False).encode("utf-8")


# Other agents' transcripts: a coding agent's session is mostly tool calls, so each turn is a prompt,
# thinking or reasoning, a few shell calls with their results (one entry each, as the tools write them)
# and an answer.
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
