"""R2: the policy makes one view of a session, and that view is all a projection receives.

One session holds private reasoning in every shape R2 names (disguised block
types, keys, true flags, look-alike letters, reasoning held in tools, unknown
blocks, Lonis data, metadata, and inside a reasoning block marked visible). It
goes through every registered format (a plugin's, installed from an entry
point, too: it writes all it is handed, as it is), both PDF engines, the index
documents, the clipboard, provider messages, ``serve`` and a Dask job; none
shows a byte of it, and a format is handed the view, never the loaded session.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sessions import sessions_read
from strategies import PRIVATE_CANARY
from test_disguised_reasoning import DISGUISES, ENVELOPES, _session

from vis_export.copying import clipboard
from vis_export.formats import FORMATS, Format, get_format
from vis_export.formats.options import ExportOptions
from vis_export.formats.provider import to_provider
from vis_export.model import Session
from vis_export.policy import SessionView
from vis_export.searchindex.documents import documents
from vis_export.sources import read

CANARY = PRIVATE_CANARY.encode()


def every_shape(strict: bool = False) -> dict[str, Any]:
    """A session document with private reasoning in every shape, and visible
    content around it; ``strict``: only the shapes the strict contract accepts."""
    document = _session({"type": "prose", "markdown": "the answer"})
    content = document["messages"][1]["content"]
    shapes = [block for block, valid in DISGUISES if valid or not strict]
    content += [{"id": f"d{n}", **copy.deepcopy(block)} for n, block in enumerate(shapes)]
    for where, fields in ENVELOPES:
        holder = document if where == "session" else document["messages"][1]
        holder.update(copy.deepcopy(fields))
    return document


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("every_shape") / "chat.json"
    path.write_text(json.dumps(every_shape()), encoding="utf-8")
    assert CANARY in path.read_bytes()
    return path


@pytest.fixture(scope="module")
def strict_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """For ``serve``, which reads strictly."""
    path = tmp_path_factory.mktemp("every_strict_shape") / "chat.json"
    path.write_text(json.dumps(every_shape(strict=True)), encoding="utf-8")
    (result,) = list(read(path))
    assert result.session is not None, result.problems
    return path


@pytest.fixture(scope="module")
def session(source: Path) -> Session:
    (read_session,) = sessions_read(source, lenient=True)
    return read_session


def _pdf_text(data: bytes) -> str:
    from io import BytesIO

    from pypdf import PdfReader

    return "".join(page.extract_text() or "" for page in PdfReader(BytesIO(data)).pages)


def _as_bytes(output: Any) -> bytes:
    return output if isinstance(output, bytes) else "".join(output).encode("utf-8", "surrogatepass")


def test_every_built_in_format_and_both_pdf_engines(session: Session) -> None:
    for name in FORMATS:
        engines = ("weasyprint", "typst") if name == "pdf" else ("weasyprint",)
        for engine in engines:
            for reasoning in ("none", "visible"):
                options = ExportOptions(reasoning=reasoning, pdf_engine=engine)  # type: ignore[arg-type]
                fmt = get_format(name)
                outputs = [fmt.render(session, options)]  # type: ignore[arg-type]  # a loaded session, on purpose
                if fmt.pieces is not None:
                    outputs.append(fmt.pieces(session, options))  # type: ignore[arg-type]
                if fmt.render_many is not None:
                    outputs.append(fmt.render_many([session, session], options))  # type: ignore[list-item]
                for output in outputs:
                    data = _as_bytes(output)
                    assert CANARY not in data, (name, engine, reasoning)
                    if name == "pdf":
                        assert PRIVATE_CANARY not in _pdf_text(data)
    assert CANARY in _as_bytes(get_format("json").render(session, ExportOptions(reasoning="all")))  # type: ignore[arg-type]


def test_a_format_is_handed_the_view_whatever_it_is_called_with(session: Session) -> None:
    """A format's functions, given the loaded session, receive the policy's view
    (made under the options' policy), and a view is passed on as it is."""
    handed: list[Any] = []

    def everything(given: Any, options: ExportOptions) -> str:
        handed.append(given)
        return repr(given) + json.dumps(given.to_json(), default=str)

    def each(given: Any, options: ExportOptions) -> str:
        return "".join(everything(one, options) for one in given)

    spy = Format("spy", "txt", everything, each, lambda given, options: iter([everything(given, options)]))
    options = ExportOptions(reasoning="visible")
    outputs = [spy.render(session, options), spy.render_many([session], options), *spy.pieces(session, options)]  # type: ignore
    assert all(PRIVATE_CANARY not in output for output in outputs)
    assert all(isinstance(view, SessionView) and view.reasoning == "visible" for view in handed)
    view = handed[0]
    spy.render(view, options)
    assert handed[-1] is view


def test_index_documents_clipboard_and_provider_messages(session: Session) -> None:
    for reasoning in ("none", "visible"):
        assert CANARY not in json.dumps(list(documents(session, reasoning)), ensure_ascii=False).encode()  # type: ignore[arg-type]
        assert CANARY not in json.dumps(clipboard(session, reasoning=reasoning)).encode()
        for message in session.messages:
            assert CANARY not in json.dumps(clipboard(message, reasoning=reasoning)).encode()
            for block in message.blocks:
                assert CANARY not in json.dumps(clipboard(block, reasoning=reasoning)).encode()
        for flavour in ("openai", "anthropic"):
            provided = to_provider(session, reasoning=reasoning, provider_format=flavour)
            assert CANARY not in json.dumps(provided).encode()


def test_serve_pages_downloads_and_copies(strict_source: Path) -> None:
    pytest.importorskip("starlette")
    from urllib.parse import quote

    from htmldom import parse
    from servedroom import room

    with room([strict_source.parent], index=None) as client:
        (row,) = client.get("/api/sessions").json()
        path = f"/s/{quote(row['id'], safe='')}"
        page = client.get(path)
        assert page.status_code == 200 and CANARY not in page.content
        for extension in ("json", "md", "txt", "html", "jsonl", "pdf"):
            answer = client.get(f"{path}.{extension}")
            assert answer.status_code == 200 and CANARY not in answer.content, extension
        anchors = [element.get("id") for element in parse(page.text).iter() if element.get("id")]
        copied = [client.get(f"/api/copy?session={row['id']}&anchor={anchor}") for anchor in anchors]
        assert any(answer.status_code == 200 for answer in copied)
        assert not any(CANARY in answer.content for answer in copied)


# A plugin's format that writes everything it is handed, as it is.
PLUGIN = """
import json
from vis_export.formats import Format


def _all(session, options):
    return type(session).__name__ + "\\n" + repr(session) + "\\n" + json.dumps(session.to_json(), default=str) + "\\n"


def dump():
    return Format("dump", "txt", _all, lambda sessions, options: "".join(_all(s, options) for s in sessions))
"""


def _run(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    environment = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=environment)


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    (site / "dump_plugin.py").write_text(PLUGIN)
    info = site / "dump_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dump-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vis_export.formats]\ndump = dump_plugin:dump\n")
    return site


def test_a_plugin_format_from_an_entry_point_is_handed_the_view(
    plugin_site: Path, source: Path, tmp_path: Path
) -> None:
    convert = ["-m", "vis_export", "convert", "--lenient", "--to", "dump"]
    one = _run(plugin_site, *convert, str(source))
    two = _run(plugin_site, *convert, str(source), str(source))  # several sessions on one stream
    to_file = _run(plugin_site, *convert, str(source), "-o", str(tmp_path / "out.txt"))
    for result in (one, two, to_file):
        assert result.returncode == 0, result.stderr
    written = (tmp_path / "out.txt").read_text()
    for output in (one.stdout, two.stdout, written):
        assert output.startswith("SessionView\n") and PRIVATE_CANARY not in output
    assert "the answer" in written
    everything = _run(plugin_site, *convert, "--reasoning", "all", str(source))
    assert PRIVATE_CANARY in everything.stdout  # authorised: the plugin sees what the policy shows


@pytest.mark.slow
def test_a_plugin_format_on_dask_workers_is_handed_the_view(plugin_site: Path, source: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    job = Path(__file__).parent / "all_on_workers.py"
    out = tmp_path / "there.txt"
    args = ["convert", "--lenient", str(source), "--to", "dump", "-o", str(out), "--dask", "local:1"]
    result = _run(plugin_site, str(job), *args)
    assert result.returncode == 0, result.stderr
    written = out.read_text()
    assert written.startswith("SessionView\n") and "the answer" in written and PRIVATE_CANARY not in written
