"""Hypothesis strategies for sessions in the Vis content contract.

Valid sessions cover every block type, unknown types, unicode, backtick runs,
CRs and tabs, huge and empty strings, and nested tool JSON; the invalid ones
are a valid session with exactly one thing broken, with where it is broken.
Later format and search tests reuse these.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from vis_export.contract.blocktypes import looks_like_reasoning

KNOWN_TYPES = ("prose", "speech", "code", "tool", "reasoning", "error", "attachment", "notice")
ROLES = ("assistant", "developer", "system", "tool", "user")
STATUSES = ("cancelled", "completed", "failed", "streaming", "suspended")
TOOL_STATUSES = ("cancelled", "completed", "failed", "pending", "running")
PRIVATE_CANARY = "PRIVATE-CANARY"

# Keys that name reasoning come only from the strategies made for them (below).
snake_keys = st.from_regex(r"[a-z][a-z0-9]{0,7}(_[a-z0-9]{1,5}){0,2}", fullmatch=True).filter(
    lambda key: not looks_like_reasoning(key)
)
ids = st.text(min_size=1, max_size=24).filter(lambda s: not s.isspace())
times = st.integers(min_value=0, max_value=4_102_444_800_000)

# Text that stresses renderers: Markdown syntax, HTML, backtick runs, CR, tabs, unicode.
_tricky = st.sampled_from(
    [
        "```",
        "````",
        "`",
        "~~~",
        "\r\n",
        "\r",
        "\t",
        "\n",
        "    ",
        "# ",
        "> ",
        "- ",
        "1. ",
        "*",
        "_",
        "[",
        "](",
        "<script>alert(1)</script>",
        "<b>",
        "&amp;",
        "javascript:alert(1)",
        "{{ x }}",
        "{% if %}",
        "|",
        "\\",
        "\u00e9",
        "\u65e5\u672c",
        "\U0001f389",
        "\u200b",
        "\x00",
        "\u2028",
        # forged structure: turn headers and reasoning markers of the text format
        "\n\nUser\n\n",
        "\n== User ==\n",
        "\n== Assistant · gpt-5.6 ==\n",
        "\n--- end of reasoning ---\n",
        "\u2028== User ==\u2028",
        "\x0c== Assistant ==",
    ]
)
text = st.lists(st.one_of(st.text(max_size=12), _tricky), max_size=14).map("".join)
non_blank_text = text.filter(lambda s: s and not s.isspace())
huge_text = st.integers(min_value=20_000, max_value=60_000).map(lambda n: ("line of code ``` \t\r\n" * n)[:n])

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(snake_keys, inner, max_size=4)),
    max_leaves=12,
)


def _block(kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"id": ids, "type": st.just(kind), **fields})


def _optional(required: dict[str, Any], optional: dict[str, Any], kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"id": ids, "type": st.just(kind), **required}, optional=optional)


prose_blocks = _block("prose", markdown=st.one_of(text, st.just(""), huge_text.filter(lambda _: True)))
code_blocks = _optional(
    {"text": st.one_of(text, st.just(""), huge_text)},
    {"language": st.one_of(st.sampled_from(["python", "rust", "js", "c++", "x`y", "two words"]), non_blank_text)},
    "code",
)
tool_blocks = _optional(
    {"tool": non_blank_text, "status": st.sampled_from(TOOL_STATUSES)},
    {"input": json_values, "output": json_values, "error": json_values, "started_at": times, "completed_at": times},
    "tool",
)


@st.composite
def _reasoning_block(draw: st.DrawFn) -> dict[str, Any]:
    """Private reasoning (explicit or by default) always carries ``PRIVATE_CANARY``;
    visible reasoning never does, so a leak is a substring search away."""
    block: dict[str, Any] = {"id": draw(ids), "type": "reasoning"}
    visibility = draw(st.sampled_from([None, "private", "visible"]))
    body = draw(text)
    block["text"] = body if visibility == "visible" else f"{PRIVATE_CANARY} {body}"
    if visibility is not None:
        block["visibility"] = visibility
    return block


reasoning_blocks = _reasoning_block()

# Reasoning in disguise that the strict contract accepts (as unknown block types):
# mis-cased or renamed types, and any block marked with a visibility other than
# exactly "visible". Each is private (R2), so each carries the canary.
DISGUISED_TYPES = (
    "Reasoning",
    "REASONING",
    "reasoning ",
    " Reasoning",
    "Thinking",
    "thinking",
    "redacted_thinking",
    "thought",
    "chain_of_thought",
    "reasoning_v2",
    "reasoning-summary",
    "ReasoningBlock",
)
disguised_reasoning_blocks = st.one_of(
    st.fixed_dictionaries(
        {"id": ids, "type": st.sampled_from(DISGUISED_TYPES), "text": text.map(f"{PRIVATE_CANARY} {{}}".format)},
        optional={"visibility": st.sampled_from(["visible", "Visible", "private", "hidden", None, 1, ""])},
    ),
    st.fixed_dictionaries(
        {
            "id": ids,
            "type": st.sampled_from(["note", "summary", "x_block"]),
            "visibility": st.sampled_from(["private", "Private", "hidden", None, 0, "VISIBLE", " visible"]),
            "body": text.map(f"{PRIVATE_CANARY} {{}}".format),
        }
    ),
)
error_blocks = _optional({"code": snake_keys, "message": non_blank_text}, {"retryable": st.booleans()}, "error")
attachment_blocks = _block(
    "attachment",
    attachment_id=ids,
    name=non_blank_text,
    media_type=st.sampled_from(["image/png", "image/jpeg", "application/pdf", "text/plain"]),
)
notice_blocks = _block("notice", code=snake_keys, message=non_blank_text)
speech_blocks = _block("speech", text=non_blank_text)
unknown_blocks = st.builds(
    lambda block_id, kind, extra: {"id": block_id, "type": kind, **extra},
    ids,
    st.text(min_size=1, max_size=16).filter(lambda t: t not in KNOWN_TYPES and not looks_like_reasoning(t)),
    st.dictionaries(snake_keys.filter(lambda k: k not in ("id", "type", "visibility")), json_values, max_size=4),
)

# Every type but prose and code, whose texts come in two sizes below.
_other_blocks = (
    tool_blocks,
    reasoning_blocks,
    disguised_reasoning_blocks,
    error_blocks,
    attachment_blocks,
    notice_blocks,
    speech_blocks,
    unknown_blocks,
)
blocks = st.one_of(prose_blocks, code_blocks, *_other_blocks)

# The same without huge strings: for renderers whose tests parse every output
# with a pure-Python HTML parser (huge strings are covered by the other formats
# and by example tests).
small_prose_blocks = _block("prose", markdown=text)
small_code_blocks = _optional(
    {"text": text},
    {
        "language": st.one_of(
            st.sampled_from(["python", "rust", "js", "json", "c++", "x`y", "two words"]), non_blank_text
        )
    },
    "code",
)
small_blocks = st.one_of(small_prose_blocks, small_code_blocks, *_other_blocks)


@st.composite
def messages(draw: st.DrawFn, content: st.SearchStrategy[dict[str, Any]] = blocks) -> dict[str, Any]:
    created = draw(times)
    message: dict[str, Any] = {
        "id": draw(ids),
        "role": draw(st.sampled_from(ROLES)),
        "status": draw(st.sampled_from(STATUSES)),
        "content": draw(st.lists(content, max_size=6)),
        "created_at": created,
    }
    if draw(st.booleans()):
        message["completed_at"] = created + draw(st.integers(min_value=0, max_value=10**7))
    if draw(st.booleans()):
        message["model"] = draw(st.sampled_from(["gpt-5.6", "claude-x", "local model"]))
        message["provider"] = draw(st.sampled_from(["openai-codex", "anthropic"]))
    if draw(st.integers(0, 5)) == 0:
        message["author"] = {"display_name": draw(text)}
    return message


@st.composite
def session_documents(draw: st.DrawFn, content: st.SearchStrategy[dict[str, Any]] = blocks) -> dict[str, Any]:
    document: dict[str, Any] = {"id": draw(ids)}
    if draw(st.booleans()):
        document["title"] = draw(text)
    if draw(st.booleans()):
        document["created_at"] = draw(times)
    document["messages"] = draw(st.lists(messages(content), min_size=1, max_size=5))
    return document


# --- private reasoning in every shape R2 names ------------------------------------------

# The names R2 gives (and more agents and providers use) for private thought.
REASONING_NAMES = (
    "reasoning",
    "thinking",
    "thought",
    "thoughts",
    "redacted_thinking",
    "reasoning_content",
    "reasoning_details",
    "thinking_content",
    "private_reasoning",
    "hidden_reasoning",
    "chain_of_thought",
    "scratchpad",
)
_DIGITS_FOR = {"o": "0", "i": "1", "e": "3", "a": "4", "s": "5", "t": "7", "g": "9"}


def _look_alikes() -> dict[str, list[str]]:
    """Each basic letter and what passes for it: Unicode's confusables (the data
    ``confusable-homoglyphs`` ships), its small capital, its fullwidth form, a digit."""
    import json
    import unicodedata
    from importlib.resources import files

    data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        glyphs = [g["c"] for g in data.get(letter, []) if len(g["c"]) == 1 and not g["c"].isascii()]
        try:
            capital = unicodedata.lookup(f"LATIN LETTER SMALL CAPITAL {letter.upper()}")
        except KeyError:
            pass
        else:  # and what passes for the small capital (Cyrillic т and Greek τ for ᴛ, Cyrillic н for ʜ)
            glyphs += [capital, *(g["c"] for g in data.get(capital, []) if len(g["c"]) == 1)]
        glyphs.append(chr(ord(letter) - ord("a") + 0xFF41))  # fullwidth
        found[letter] = [letter, letter.upper(), *glyphs, *_DIGITS_FOR.get(letter, "")]
    return found


LOOK_ALIKES = _look_alikes()
_between_letters = st.sampled_from(["", "", "", "_", "-", " ", ".", "\u200b", "\u00ad", "\u0301"])


@st.composite
def disguised(draw: st.DrawFn, word: str) -> str:
    """``word`` as hostile input writes it: each letter any of its look-alikes,
    with signs, invisible characters or accents between, and words around."""
    letters = [draw(st.sampled_from(LOOK_ALIKES.get(c, [c]))) + draw(_between_letters) for c in word]
    return draw(st.sampled_from(["", "x_", "my ", "2"])) + "".join(letters) + draw(st.sampled_from(["", "_v2", "s"]))


reasoning_names = st.one_of(st.sampled_from(REASONING_NAMES), st.sampled_from(REASONING_NAMES).flatmap(disguised))
secrets = text.map(f"{PRIVATE_CANARY} {{}}".format)


@st.composite
def held_reasoning(draw: st.DrawFn) -> Any:
    """A stored value that is private reasoning by one of R2's marks (a type, a
    key, a true flag, a visibility), under a few layers of ordinary data."""
    secret = draw(secrets)
    mark = draw(st.sampled_from(["type", "key", "flag", "visibility"]))
    value: Any
    if mark == "type":
        value = {"type": draw(reasoning_names), draw(st.sampled_from(["text", "thinking", "content"])): secret}
    elif mark == "key":
        value = {draw(reasoning_names): secret, "signature": "sig"}
    elif mark == "flag":
        value = {"text": secret, draw(reasoning_names): draw(st.sampled_from([True, 1, "true"]))}
    else:
        value = {"visibility": draw(st.sampled_from(["private", "Private", None, "hidden"])), "text": secret}
    for wrap in draw(st.lists(st.sampled_from(["list", "map"]), max_size=3)):
        value = [draw(json_scalars), value] if wrap == "list" else {draw(snake_keys): value}
    return value


@st.composite
def blocks_holding_reasoning(draw: st.DrawFn) -> dict[str, Any]:
    """A block that is private reasoning, or holds it where R2 says it may sit:
    a tool's input or output, an unknown block, Lonis data, or a reasoning block
    marked visible (which shows its own text, never that)."""
    block_id = draw(ids)
    place = draw(st.sampled_from(["tool", "unknown", "lonis", "visible reasoning", "typed", "flagged"]))
    held = draw(held_reasoning())
    if place == "tool":
        key = draw(st.sampled_from(["input", "output", "error"]))
        return {"id": block_id, "type": "tool", "tool": "agent", "status": "completed", key: held}
    if place == "unknown":
        return {"id": block_id, "type": draw(st.sampled_from(["note", "x_block", "gemini_part"])), "data": held}
    if place == "lonis":
        payload = {"kind": "note", "data": {"text": "fine", "parts": held}}
        return {"id": block_id, "type": "lonis", "envelope": {"schema_version": "lonis.block/v1", "payload": payload}}
    if place == "visible reasoning":
        extra = draw(st.sampled_from(["details", "summary", "signature", "parts"]))
        return {"id": block_id, "type": "reasoning", "visibility": "visible", "text": draw(text), extra: held}
    if place == "typed":
        return {"id": block_id, "type": draw(reasoning_names), "text": draw(secrets)}
    flag = draw(reasoning_names)
    return {"id": block_id, "type": "prose", "markdown": draw(secrets), flag: draw(st.sampled_from([True, 1]))}


# --- invalid input: one thing broken in a valid session -----------------------------


def _camel(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["llmActual", "Provider", "ID", "fail-fast", ":provider", "a b", "_x", "x_", "2x", ""]))


@st.composite
def invalid_sessions(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A session document with one contract violation, and the location it is at."""
    document = copy.deepcopy(draw(session_documents()))
    messages_ = document["messages"]
    m = draw(st.integers(0, len(messages_) - 1))
    message = messages_[m]
    where = f"messages[{m}]"
    kind = draw(
        st.sampled_from(
            [
                "missing_field",
                "wrong_type",
                "bad_role",
                "bad_status",
                "upper_enum",
                "keyword_enum",
                "bad_key_envelope",
                "bad_key_deep",
                "completed_before",
                "block_without_id",
                "blank_id",
                "block_missing_field",
                "bad_tool_status",
                "bad_visibility",
                "bad_error_code",
                "content_not_array",
            ]
        )
    )
    if kind == "missing_field":
        del message[draw(st.sampled_from(["id", "role", "status", "content", "created_at"]))]
    elif kind == "wrong_type":
        field = draw(st.sampled_from(["id", "role", "status", "content", "created_at"]))
        message[field] = draw(st.sampled_from([None, 3.5, True, [], {}, "x"] if field != "id" else [None, 3, [], {}]))
        if field in ("role", "status") and message[field] == "x":
            message[field] = 7
        if field == "content" and message[field] == []:
            message[field] = "[]"
        if field == "created_at" and message[field] == "x":
            message[field] = "1740000000000"
    elif kind == "bad_role":
        message["role"] = draw(st.sampled_from(["robot", "", "human", "assistant "]))
    elif kind == "bad_status":
        message["status"] = draw(st.sampled_from(["done", "running", "", "complete"]))
    elif kind == "upper_enum":
        field = draw(st.sampled_from(["role", "status"]))
        message[field] = message[field].upper() if draw(st.booleans()) else message[field].capitalize()
    elif kind == "keyword_enum":
        field = draw(st.sampled_from(["role", "status"]))
        message[field] = ":" + message[field]
    elif kind == "bad_key_envelope":
        message[_camel(draw)] = draw(json_values)
    elif kind == "bad_key_deep":
        tool = {
            "id": "deep",
            "type": "tool",
            "tool": "t",
            "status": "completed",
            "input": {"outer": [{"inner": {_camel(draw): 1}}]},
        }
        message["content"].append(tool)
        where = f"{where}.content[{len(message['content']) - 1}].input"
    elif kind == "completed_before":
        message["created_at"] = draw(st.integers(min_value=1, max_value=10**13))
        message["completed_at"] = message["created_at"] - draw(
            st.integers(min_value=1, max_value=message["created_at"])
        )
    elif kind in (
        "block_without_id",
        "blank_id",
        "block_missing_field",
        "bad_tool_status",
        "bad_visibility",
        "bad_error_code",
    ):
        required = {
            "prose": "markdown",
            "code": "text",
            "tool": "tool",
            "reasoning": "text",
            "error": "code",
            "attachment": "name",
            "notice": "message",
            "speech": "text",
        }
        if kind == "bad_tool_status":
            block = draw(tool_blocks)
            block["status"] = draw(st.sampled_from(["Completed", "done", ":failed", ""]))
        elif kind == "bad_visibility":
            block = draw(reasoning_blocks)
            block["visibility"] = draw(st.sampled_from(["Private", "public", ":visible", ""]))
        elif kind == "bad_error_code":
            block = draw(st.one_of(error_blocks, notice_blocks))
            block["code"] = draw(st.sampled_from(["ProviderUnavailable", "provider-unavailable", ":x", "", "a__b"]))
        else:
            block = draw(
                st.one_of(
                    prose_blocks,
                    code_blocks,
                    tool_blocks,
                    reasoning_blocks,
                    error_blocks,
                    attachment_blocks,
                    notice_blocks,
                    speech_blocks,
                )
            )
            if kind == "block_without_id":
                del block["id"]
            elif kind == "blank_id":
                block["id"] = draw(st.sampled_from(["", " ", "\t\n"]))
            else:
                del block[required[block["type"]]]
        message["content"].append(block)
        where = f"{where}.content[{len(message['content']) - 1}]"
    elif kind == "content_not_array":
        message["content"] = {"0": {"id": "b", "type": "prose", "markdown": ""}}
    return document, where


# --- bounded work (R6): the classes of input that once took minutes or gigabytes ------
# Sizes cross the bounds (``prose_bounds``, ``lexing.HighlightBudget``, ``images.MAX_BLOCKS``)
# while keeping an example to seconds.

_ITEM_WORDS = st.sampled_from(["x", "item", "**bold** item", "`code`", "a b c d e f g h", "[l](https://x.y)", "é 日本"])


@st.composite
def huge_list_markdown(draw: st.DrawFn) -> str:
    """A list of thousands of items: bullets, numbers, tasks, nested; text before and after it.
    The last item ends in ``LAST``."""
    marker = draw(st.sampled_from(["- ", "* ", "1. ", "- [ ] ", "- [x] "]))
    nested = draw(st.booleans())
    word = draw(_ITEM_WORDS)
    lines = [("  " if nested and i % 2 else "") + f"{marker}{word} {i}" for i in range(draw(st.integers(1500, 5000)))]
    return draw(text) + "\n\n" + "\n".join(lines) + f" {LAST}\n\n" + draw(text)


@st.composite
def huge_table_markdown(draw: st.DrawFn) -> str:
    """A table of hundreds to thousands of rows, a few columns; the last row's first cell ends in ``LAST``."""
    columns = draw(st.integers(1, 5))
    word = draw(_ITEM_WORDS)
    head = ["| " + " | ".join(f"h{c}" for c in range(columns)) + " |", "|" + "---|" * columns]
    rows = [f"| {word} {r} |" + " x |" * (columns - 1) for r in range(draw(st.integers(400, 3000)))]
    rows[-1] = rows[-1].replace(" |", f" {LAST} |", 1)
    return draw(text) + "\n\n" + "\n".join(head + rows) + "\n"


LAST = "LASTPIECE"
huge_structure_blocks = _block("prose", markdown=st.one_of(huge_list_markdown(), huge_table_markdown()))

# Lexers that backtrack for minutes on a short string; each block is small, the blocks many.
RUNAWAY_LANGUAGES = ("maple", "scala", "cddl", "chapel", "rego", "smithy")


@st.composite
def many_small_code_blocks(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Hundreds of small blocks of one language (a runaway lexer's, mostly)."""
    language = draw(st.sampled_from([*RUNAWAY_LANGUAGES, "python"]))
    # Short blocks, few lines: what is measured is the lexing, not the page engine's
    # time a line of code (WeasyPrint: about 0.4 ms a line, whatever the highlighting).
    code = draw(st.sampled_from(['"' + "\\" * 40 + "\n" * 3, '"' + "\\" * 80, "x = 1\n" * 4]))
    count = draw(st.integers(200, 600))
    return [{"id": f"c{i}", "type": "code", "language": language, "text": code} for i in range(count)]


def _gif_of_tiny_blocks(size: int, block: int) -> bytes:
    count = size // (block + 1)
    comment = b"\x21\xfe" + (bytes([block]) + b"a" * block) * count + b"\x00"
    frame = b"\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00"
    return b"GIF89a\x01\x00\x01\x00\x00\x00\x00" + comment + frame + b"\x3b"


@st.composite
def repeated_image_references(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """An attachment block and a small prose block naming its image hundreds of times,
    with the files ``--attachments`` holds: a GIF of many tiny sub-blocks, a JPEG of
    fill bytes, or a GIF walked whole."""
    size = draw(st.integers(100_000, 3_000_000))
    data, kind = draw(
        st.sampled_from(
            [
                (_gif_of_tiny_blocks(size, 1), "image/gif"),
                (_gif_of_tiny_blocks(size, 255), "image/gif"),
                (b"\xff\xd8" + b"\xff" * size, "image/jpeg"),
            ]
        )
    )
    name = draw(st.sampled_from(["att1", "shot.gif"]))
    attached = {"id": "a", "type": "attachment", "attachment_id": "att1", "name": "shot.gif", "media_type": kind}
    references = " ".join([f"![i](attachment:{name})"] * draw(st.integers(50, 300)))
    prose = {"id": "p", "type": "prose", "markdown": references}
    return [attached, prose], {"att1": data}


def bounded_work_sessions() -> st.SearchStrategy[tuple[dict[str, Any], dict[str, bytes]]]:
    """A session of one of the classes above, and the attachment files it names."""

    def session(content: list[dict[str, Any]]) -> dict[str, Any]:
        message = {"id": "m", "role": "assistant", "status": "completed", "created_at": 1, "content": content}
        return {"id": "bounded", "messages": [message]}

    return st.one_of(
        huge_structure_blocks.map(lambda block: (session([block]), {})),
        many_small_code_blocks().map(lambda blocks: (session(blocks), {})),
        repeated_image_references().map(lambda pair: (session(pair[0]), pair[1])),
    )
