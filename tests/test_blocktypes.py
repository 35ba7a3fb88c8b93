"""One declaration of the block types, and everything that must follow it does."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from vis_export.contract.blocktypes import KNOWN_TYPES, RENDERED_TYPES, for_each_type
from vis_export.formats.html import HtmlProjector
from vis_export.formats.markdown import MarkdownProjector
from vis_export.formats.text import TextProjector
from vis_export.resources import builtin_templates


def test_the_schema_names_the_declared_types() -> None:
    schema = json.loads((ROOT / "vis_export" / "contract" / "schema" / "block.json").read_text())
    consts = [
        branch["properties"]["type"]["const"] for branch in schema["oneOf"] if "const" in branch["properties"]["type"]
    ]
    assert sorted(consts) == sorted(KNOWN_TYPES)


@pytest.mark.parametrize("projector", [TextProjector, MarkdownProjector, HtmlProjector])
def test_every_projector_renders_every_type(projector: type) -> None:
    assert [name for name in RENDERED_TYPES if not callable(getattr(projector, f"block_{name}", None))] == []


def test_every_type_has_a_template() -> None:
    folder = builtin_templates() / "blocks"
    assert sorted(p.name for p in folder.glob("*.html.j2")) == sorted(f"{name}.html.j2" for name in RENDERED_TYPES)


def test_a_table_that_leaves_a_type_out_is_refused() -> None:
    with pytest.raises(TypeError, match=r"missing block types \['code'\], undeclared \['video'\]"):
        for_each_type({"prose": 1, "video": 2}, ("prose", "code"), "test table")
