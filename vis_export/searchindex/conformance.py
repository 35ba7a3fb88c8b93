"""The conformance suite every search engine passes, built-in or a plugin's.

A plugin's tests call ``check_engine("its-name", tmp_path)``: it indexes a
small session through the real job and checks what users rely on, the same
for every engine: code-aware matching (``parse_config``, ``parseConfig``,
``HTTPServer`` -> ``http_server``), exact quoted phrases, stemmed prose,
words of Chinese, Japanese and Korean text (written without spaces),
filters, hit fields and marked snippets, private reasoning never indexed, and
a changed session replacing its documents. It raises ``AssertionError`` naming
the first check that fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CANARY = "CONFORMANCE-PRIVATE-CANARY"
CODE_SESSION: dict[str, Any] = {
    "id": "code",
    "title": "Code",
    "messages": [
        {
            "id": "m1",
            "role": "assistant",
            "status": "completed",
            "created_at": 1740000000000,
            "content": [
                {
                    "id": "py",
                    "type": "code",
                    "language": "python",
                    "text": "def run(fn):\n    return parse_config(path)\n",
                },
                {"id": "kw", "type": "code", "language": "Python", "text": "wrapper = lambda: fn(*args, **kwargs)\n"},
                {"id": "near", "type": "code", "language": "python", "text": "fn(*args, kwargs)  # not the same\n"},
                {"id": "srv", "type": "code", "language": "rust", "text": "let s = http_server::bind(addr);\n"},
                {"id": "p1", "type": "prose", "markdown": "The parsers were **configured** and deployed."},
                # What a store may find hard to hold: NUL, LIKE's wildcards, a noncharacter.
                {"id": "odd", "type": "code", "language": "text", "text": "a => 100%_done\\x \x00end \U0010fffe0"},
                {"id": "decoy", "type": "code", "language": "text", "text": "100 xyd a\\\\x"},
            ],
        },
        {
            "id": "m2",
            "role": "user",
            "status": "completed",
            "created_at": 1750000000000,
            "content": [
                {"id": "p2", "type": "prose", "markdown": "Please deploy the HTTPServer now."},
                {"id": "p2", "type": "prose", "markdown": "The same id again, for a zebrafish."},  # ids may repeat
                {"id": "r1", "type": "reasoning", "text": "visible thoughts about deployment", "visibility": "visible"},
                {"id": "r2", "type": "reasoning", "text": f"{CANARY} secret deployment plan"},
            ],
        },
        {
            "id": "m3",
            "role": "user",
            "status": "completed",
            "created_at": 1760000000000,
            "content": [  # scripts without spaces between words: found by their words all the same
                {"id": "ja", "type": "prose", "markdown": "日本語の会話"},
                {"id": "sky", "type": "prose", "markdown": "今日の天気は晴れです。"},
                {"id": "cfg", "type": "prose", "markdown": "設定ファイルを変更しました"},
                {"id": "mixed", "type": "code", "language": "text", "text": "Python設定を開く"},
                {"id": "ko", "type": "prose", "markdown": "한국어를 배웁니다"},
                {"id": "zh", "type": "prose", "markdown": "搜索引擎把中文切成二元词组"},
            ],
        },
    ],
}
# (query, filters, the blocks it finds)
EXPECTED: list[tuple[str, dict[str, Any], set[str]]] = [
    ("parse_config", {}, {"py"}),
    ("parseConfig", {}, {"py"}),
    ("ParseConfig", {}, {"py"}),
    ("config", {}, {"py"}),
    ("HTTPServer", {}, {"srv", "p2"}),
    ("http_server", {}, {"srv", "p2"}),
    ("server", {}, {"srv", "p2"}),
    ('"fn(*args, **kwargs)"', {}, {"kw"}),
    ('"fn(*args"', {}, {"kw", "near"}),
    ('"parse_config(path)"', {}, {"py"}),
    # Words at a phrase's edges may be parts of longer ones; inner words are stemmed.
    ('"he parsers were **config"', {}, {"p1"}),
    ("configure", {}, {"p1"}),
    ("parser", {}, {"p1"}),
    ("deploying", {}, {"p1", "p2", "r1"}),
    ('deploy "HTTPServer now"', {}, {"p2"}),
    ("nothing_like_this", {}, set()),
    ("zebrafish", {}, {"p2"}),
    ('"=>"', {}, {"odd"}),
    ('"0%_d"', {}, {"odd"}),
    ('"done\\x"', {}, {"odd"}),
    ('"\x00end"', {}, {"odd"}),
    ('"\U0010fffe0"', {}, {"odd"}),
    ('"PARSE_CONFIG"', {}, set()),
    ("deploy", {"role": "user"}, {"p2", "r1"}),
    ("config", {"type": "code"}, {"py"}),
    ("fn", {"language": "PYTHON"}, {"py", "kw", "near"}),
    ("deploy", {"since": 1745000000000}, {"p2", "r1"}),
    ("deploy", {"until": 1745000000000}, {"p1"}),
    ("deploy", {"session": "code"}, {"p1", "p2", "r1"}),
    ("deploy", {"session": "other"}, set()),
    ("天気", {}, {"sky"}),
    ("設定", {}, {"cfg", "mixed"}),
    ("日本語", {}, {"ja"}),
    ("日本語の会話", {}, {"ja"}),
    ('"本語の会"', {}, {"ja"}),
    ("天", {}, {"sky"}),  # one character: every text holding it
    ("本日", {}, set()),  # both characters, never side by side
    ("会話 天気", {}, set()),
    ("Python設定", {}, {"mixed"}),
    ("python", {}, {"mixed"}),
    ("한국어", {}, {"ko"}),
    ("中文", {}, {"zh"}),
    ("ファイル", {"type": "prose"}, {"cfg"}),
    (CANARY, {}, set()),
    ("secret", {}, set()),
]


def check_engine(engine: str, location: Path | str) -> None:
    """Run the suite against ``engine``, in a new index under ``location`` (a folder), or
    in the empty database a ``postgresql://`` URI names (whose dump the caller
    checks for private reasoning: no file here holds it)."""
    from vis_export.jobs.indexing import index
    from vis_export.searchindex import search
    from vis_export.searchindex.target import is_database
    from vis_export.sources.messages import session_document

    def session(document: dict[str, Any]) -> Any:
        return session_document(document, "", "s").session

    where: Path | str = location if is_database(location) else Path(location) / f"conformance-{engine}"
    counts = index([session(CODE_SESSION)], where, engine=engine, reasoning="visible")
    assert (counts.added, counts.unchanged) == (1, 0), f"first job: {counts}"
    for query, filters, expected in EXPECTED:
        found = {hit.block_id for hit in search(query, where, limit=100, **filters)}
        assert found == expected, f"{engine}: {query!r} {filters} found {sorted(found)}, not {sorted(expected)}"
    (hit,) = search('"fn(*args, **kwargs)"', where)
    assert (hit.session_id, hit.session_title, hit.message_id, hit.role, hit.block_type, hit.language) == (
        "code",
        "Code",
        "m1",
        "assistant",
        "code",
        "python",
    ), f"{engine}: hit fields {hit}"
    assert "**fn(*args, **kwargs)**" in hit.snippet and "<mark>fn(*args, **kwargs)</mark>" in hit.snippet_html
    (hit,) = search("日本語", where)
    assert hit.snippet == "**日本語**の会話", f"{engine}: snippet {hit.snippet!r}"
    everything = search("", where, limit=10_000)
    assert CANARY not in json.dumps([h.to_json() for h in everything]), f"{engine}: private reasoning in a hit"
    assert isinstance(where, str) or all(
        CANARY.encode() not in path.read_bytes() for path in where.rglob("*") if path.is_file()
    ), f"{engine}: private reasoning in an index file"
    changed = json.loads(json.dumps(CODE_SESSION))
    changed["messages"][0]["content"] = changed["messages"][0]["content"][:1]
    counts = index([session(changed)], where, engine=engine, reasoning="visible")
    assert counts.updated == 1, f"{engine}: a changed session is updated: {counts}"
    assert {h.block_id for h in search("parse_config", where)} == {"py"}
    assert search('"fn(*args"', where) == [], f"{engine}: removed blocks still found"
    assert index([session(changed)], where, engine=engine, reasoning="visible").unchanged == 1
