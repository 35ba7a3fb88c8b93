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
