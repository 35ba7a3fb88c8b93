"""The tantivy engine's ``words`` field, stemmed before tantivy sees the text
(``tantivy_words``), holds what tantivy's own analysis of the text held: the
same terms at the same positions, the same field lengths, so the same hits,
phrases and scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tantivy
from conftest import examples
from hypothesis import HealthCheck, given, settings, strategies as st

from vis_export.searchindex.cjk import without_runs
from vis_export.searchindex.engines import tantivy_engine, tantivy_words

# Words around tantivy's length limit (40 bytes) in one- and two-byte letters,
# letters whose lowercase is longer or shorter in UTF-8 (İ, Ⱥ, the Kelvin
# sign), marks and letters Python and Rust may judge apart, CJK runs, white
# space Python splits at and Rust does not, and words the stemmer changes.
_PIECES = [
    *"aZ09_ -.\n\t\x00\x1c\x1f\x7f'é\u0130\u023a\u212aß\u0301\u0915\u093f\u00a0\u3000\u2028",
    "x" * 39,
    "y" * 40,
    "\u0130" * 19,
    "\u0130" * 20,
    "é" * 20,
    "日本語",
    "running",
    "Configured",
    "parsers",
    "parse_config(path)",
    "HTTPServer",
]
_TEXTS = (
    st.lists(st.sampled_from(_PIECES), max_size=30).map("".join) | st.text(st.characters(max_codepoint=127)) | st.text()
)


def _analyzer(tokenizer: Any, *filters: Any) -> Any:
    builder = tantivy.TextAnalyzerBuilder(tokenizer)
    for step in filters:
        builder = builder.filter(step)
    return builder.build()


_ORIGINALS = _analyzer(tantivy.Tokenizer.simple())
_EVERY_STEM = _analyzer(tantivy.Tokenizer.simple(), tantivy.Filter.lowercase(), tantivy.Filter.stemmer("english"))
_SPLIT = _analyzer(tantivy.Tokenizer.whitespace())


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_the_stemmed_words_are_tantivys_analysis_at_its_positions(text: str) -> None:
    """Position by position (a word dropped as too long leaves its place
    empty), and as the field's tokenizer leaves them."""
    stems = tantivy_words.Stems()
    given = stems.text(text)
    originals = _ORIGINALS.analyze(without_runs(text))
    expected = [
        tantivy_words.GAP if len(word.encode("utf-8")) >= 40 else stem
        for word, stem in zip(originals, _EVERY_STEM.analyze(without_runs(text)), strict=True)
    ]
    assert _SPLIT.analyze(given) == expected
    assert tantivy_words.indexed().analyze(given) == stems.stemming.analyze(without_runs(text))
    assert stems.text(text) == given  # from what is kept, the same


class _StemmedByTantivy(tantivy_engine.TantivyEngine):
    """The engine as it was: the text given whole, stemmed by tantivy's analysis."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, writable=True)
        self.index.register_tokenizer("vis_words", tantivy_words.stemming())

    def add(self, documents: list[dict[str, Any]]) -> None:
        assert self.writer is not None
        for document in documents:
            values = {**document, "words": without_runs(document["text"])}
            self.writer.add_document(tantivy.Document.from_dict(values, self.schema))


def _documents(texts: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "key": f"k{n}",
            "session_id": "s",
            "session_title": "",
            "message_id": "m",
            "block_id": f"b{n}",
            "role": "user",
            "block_type": "prose",
            "language": "",
            "created_at": n,
            "text": text,
            "terms": "",
        }
        for n, text in enumerate(texts)
    ]


def test_a_word_too_long_to_index_still_holds_its_place(tmp_path: Path) -> None:
    """Words on either side of it are not side by side: a phrase of the two
    does not narrow to that text. (A word under the limit that its lowercase
    takes past it is indexed.)"""
    engine = tantivy_engine.TantivyEngine(tmp_path, writable=True)
    engine.add(_documents([f"alpha {'y' * 40} beta", "alpha beta", f"alpha {'İ' * 19} beta"]))
    engine.commit()
    hits = engine.phrase_search(["alpha", "beta"], ["<alpha beta>"], {}, None, None, 10)
    assert [hit["block_id"] for _, hit in hits] == ["b1"]
    assert [hit["block_id"] for _, hit in engine.search(["\u0130" * 19], {}, None, None, 10, 0)] == ["b2"]


@settings(max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_TEXTS, min_size=1, max_size=8), st.data())
def test_both_ways_give_the_same_hits_and_scores(tmp_path_factory: Any, texts: list[str], data: Any) -> None:
    """Words, stems and phrases (positions), each scored by its field's lengths."""
    folder = tmp_path_factory.mktemp("both")
    documents = _documents(texts)
    engines = [tantivy_engine.TantivyEngine(folder / "now", writable=True), _StemmedByTantivy(folder / "before")]
    for engine in engines:
        engine.add(documents)
        engine.commit()
    for text in data.draw(st.lists(st.sampled_from(texts), min_size=1, max_size=4)):
        words = [w for w in _ORIGINALS.analyze(without_runs(text)) if len(w.encode("utf-8")) < 40] or ["absent"]
        query = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3))
        phrase = " ".join(query)
        found = [
            (
                engine.search(query, {}, None, None, 20, 0),
                engine.phrase_search(query, [f"<{phrase}>"], {}, None, None, 20),
            )
            for engine in engines
        ]
        assert found[0] == found[1], query
        assert found[0][0] or words == ["absent"], query  # the text's own words find it
