"""The choices of the export options that have them, standard library only:
the command line offers exactly these, and the API's keyword parameters are
typed with them. A leaf, so that building the command line (every command, a
no-op index rerun included) imports neither the formats nor their renderers."""

from __future__ import annotations

from typing import Literal

Paper = Literal["A4", "Letter"]
Theme = Literal["light", "dark"]
ProviderFormat = Literal["openai", "anthropic"]
PdfEngine = Literal["weasyprint", "typst"]
PAPERS: tuple[Paper, ...] = ("A4", "Letter")
THEMES: tuple[Theme, ...] = ("light", "dark")
PROVIDER_FORMATS: tuple[ProviderFormat, ...] = ("openai", "anthropic")
PDF_ENGINES: tuple[PdfEngine, ...] = ("weasyprint", "typst")

# The reasoning policy's levels (``policy``, R2), here so that checking one imports neither the policy nor the model.
Reasoning = Literal["none", "visible", "all"]
REASONING_CHOICES: tuple[Reasoning, ...] = ("none", "visible", "all")
DEFAULT_REASONING: Reasoning = "visible"


# The levels a search index may be built at: private reasoning is never indexed, whoever may search the index.
IndexReasoning = Literal["none", "visible"]
INDEX_REASONING: tuple[IndexReasoning, ...] = ("none", "visible")


def check_reasoning(reasoning: str) -> Reasoning:
    if reasoning not in REASONING_CHOICES:
        raise ValueError(f"reasoning must be one of {', '.join(REASONING_CHOICES)}, not {reasoning!r}")
    return reasoning


def check_index_reasoning(reasoning: str) -> IndexReasoning:
    if reasoning not in INDEX_REASONING:
        raise ValueError("the index takes reasoning none or visible: private reasoning is never indexed")
    return reasoning
