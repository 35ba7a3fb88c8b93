"""HTML and PDF benchmarks, each variant in a fresh process so peak memory is its own.

python -m benchmarks.render html SIZE      # ours, then the anchor, as JSON lines
python -m benchmarks.render pdf SIZE VARIANT
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import time
from typing import Any

from corpus import session_bytes


def loaded_session(size: int) -> Any:
    from vis_export.sources.files import read_bytes

    (loaded,) = read_bytes(session_bytes(size), "bench", "bench")
    return loaded.session


def html(size: int) -> dict[str, float]:
    """Our HTML export vs mistune + Pygments on the same prose and code."""
    import mistune
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    from vis_export.formats.html import HtmlProjector
    from vis_export.model import CodeBlock, ProseBlock, ReasoningBlock, ToolBlock

    session = loaded_session(size)
    start = time.perf_counter()
    for _ in HtmlProjector().pieces(session):
        pass
    ours = time.perf_counter() - start

    markdown = mistune.create_markdown(escape=True)
    formatter = HtmlFormatter()
    start = time.perf_counter()
    for _, block in session.blocks():
        if isinstance(block, ProseBlock):
            markdown(block.markdown)
        elif isinstance(block, ReasoningBlock) and not block.is_private:
            markdown(block.text)
        elif isinstance(block, CodeBlock):
            highlight(block.text, get_lexer_by_name(block.language or "text"), formatter)
        elif isinstance(block, ToolBlock):
            highlight(json.dumps(block.to_json()), get_lexer_by_name("json"), formatter)
    anchor = time.perf_counter() - start
    return {"ours": ours, "anchor": anchor}


def pdf(size: int, variant: str) -> dict[str, float]:
    """Pages per second: ours, or WeasyPrint on naive Pygments spans, or on plain <pre>."""
    from pypdf import PdfReader

    from vis_export.formats.options import ExportOptions
    from vis_export.formats.pdf import PrintProjector, render_pdf

    session = loaded_session(size)
    start, cpu = time.perf_counter(), _cpu_seconds()
    if variant == "ours":
        data = render_pdf(session, ExportOptions())
    else:
        from weasyprint import HTML

        page = PrintProjector(ExportOptions(no_highlight=True)).render(session)
        if variant == "naive":
            page = _naive_spans(page)
        data = HTML(string=page).write_pdf()
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    pages = len(PdfReader(io.BytesIO(data)).pages)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": seconds, "cpu_seconds": cpu, "pages": pages, "peak_mb": max(own, children) / 1024}


def _cpu_seconds() -> float:
    """CPU time of this process and the parts' processes it waited for: what a shared machine disturbs least."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _naive_spans(page: str) -> str:
    """Every code element re-highlighted the usual way: Pygments' HtmlFormatter, one
    span per token (and its stylesheet), as a plain exporter would."""
    import html as html_module
    import re

    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    formatter = HtmlFormatter(nowrap=True)

    def spans(match: re.Match[str]) -> str:
        language, body = match.group(1), html_module.unescape(match.group(2))
        try:
            lexer = get_lexer_by_name(language)
        except ClassNotFound:
            return match.group(0)
        return f'<code class="language-{language}">{highlight(body, lexer, formatter)}</code>'

    page = re.sub(r'<code class="language-([\w+#.-]+)">(.*?)</code>', spans, page, flags=re.S)
    return page.replace("</style>", formatter.get_style_defs(".highlight") + "</style>", 1)


def in_process(*args: str, module: str = "benchmarks.render") -> dict[str, float]:
    """Run one variant in a fresh interpreter (``python -m module *args``) and read its figures."""
    result = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    kind, size = sys.argv[1], int(sys.argv[2])
    figures = html(size) if kind == "html" else pdf(size, sys.argv[3])
    print(json.dumps(figures))
