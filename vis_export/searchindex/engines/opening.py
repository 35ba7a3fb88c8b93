"""An engine opened by name: the built-in ones, imported only when chosen, or
a plugin's. Apart from the contract (``engines``), which every engine imports,
so that the contract never imports an engine."""

from __future__ import annotations

from pathlib import Path

from vis_export.plugins import ENGINES_GROUP, plugins
from vis_export.searchindex.engines import BUILTIN_ENGINES, Engine, engine_names


def open_engine(name: str, directory: Path, writable: bool, threads: int = 0) -> Engine:
    from vis_export.extras import require

    if name in BUILTIN_ENGINES:
        require("tantivy" if name == "tantivy" else "whoosh", f"the {name} search engine")
    if name == "tantivy":
        from vis_export.searchindex.engines.tantivy_engine import TantivyEngine

        return TantivyEngine(directory, writable, threads)
    if name == "whoosh":
        from vis_export.searchindex.engines.whoosh_engine import WhooshEngine

        return WhooshEngine(directory, writable)
    plugin = plugins(ENGINES_GROUP, BUILTIN_ENGINES).get(name)
    if plugin is None:
        raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(engine_names())}")
    engine: Engine = plugin.load()(directory, writable, threads)
    return engine
