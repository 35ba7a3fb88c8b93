"""`vis-export serve` through its ASGI app (httpx's ASGI transport), each page
beside its anchor in the same run: a 1 MB session's page after its first render
(anchor: that first render), `/api/search` at 96k blocks (anchor: the library's
`search()` on the same index) and the sessions page at 100,000 sessions
(anchor: the same page at 100 sessions).

python -m benchmarks.serve [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from benchmarks.harness import Result, table
from benchmarks.search import QUERIES, our_job, query_p95, write_sessions
from corpus import session_bytes

ROUNDS = 60


def p95(fns: list[Callable[[], object]], rounds: int = ROUNDS) -> float:
    """The 95th percentile of single calls, ``fns`` called in turn ``rounds`` times."""
    times = []
    for _ in range(rounds):
        for fn in fns:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return statistics.quantiles(times, n=20)[18]


class Client:
    """Requests straight into the ASGI app (httpx's ASGI transport) on one event
    loop: the app's own cost, sync endpoints in their thread pool included,
    without a network or the test client's thread hops."""

    def __init__(self, app: Any):
        import asyncio

        import httpx2

        self.loop = asyncio.new_event_loop()
        self.client = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1")

    def get(self, url: str) -> Any:
        return self.loop.run_until_complete(self.client.get(url))

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


@contextmanager
def client(folder: Path, keep_index: bool) -> Iterator[tuple[Client, float, Any]]:
    """A client of serve over ``folder`` (its own index when ``keep_index``),
    the start-up time (reading, and indexing), and the index's folder."""
    from vis_export.serve.app import create_app
    from vis_export.serve.server import LOCAL_NAMES, prepare

    def sessions(results: list[Any]) -> list[Any]:
        return [r.session for r in results if r.session is not None]

    start = time.perf_counter()
    catalogue, keeper = prepare([str(folder)], None, "visible", sessions, print)
    if not keep_index and keeper is not None:
        keeper.close()
        catalogue.keeper = keeper = None
    catalogue.refresh()
    started = time.perf_counter() - start
    location = keeper.directory if keeper else None
    made = Client(create_app(catalogue, location, "visible", LOCAL_NAMES))
    try:
        yield made, started, location
    finally:
        made.close()
        if keeper:
            keeper.close()


def get(made: Client, url: str) -> Callable[[], None]:
    def fetch() -> None:
        answer = made.get(url)
        assert answer.status_code == 200, (url, answer.status_code)

    return fetch


def session_page(size: int) -> tuple[list[Result], str]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "big.json").write_bytes(session_bytes(size))
        with client(folder, keep_index=False) as (made, _, _):
            url = f"/s/bench_{size}"
            start = time.perf_counter()
            get(made, url)()
            first = time.perf_counter() - start
            ours = p95([get(made, url)])
    label = f"{size / 1e6:.0f} MB" if size >= 1_000_000 else f"{size // 1000} KB"
    result = Result(f"serve session page {label} p95", ours, "its first render", first, "<= 50 ms")
    line = f"serve: first render of the {label} session page {first * 1000:.0f} ms, then p95 {ours * 1000:.1f} ms"
    return [result], line


def api_search(blocks: int) -> tuple[list[Result], str]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "sources"
        folder.mkdir()
        texts = write_sessions(folder, blocks)
        with client(folder, keep_index=True) as (made, started, index):
            library = query_p95(index)
            fetches = [get(made, "/api/search?" + urlencode({"q": query})) for query in QUERIES]
            for fetch in fetches:
                fetch()
            ours = p95(fetches, 5)  # as query_p95: five rounds of the ten queries
        job = our_job(folder, Path(scratch) / "index", None)
    label = f"{len(texts) // 1000}k blocks"
    return [
        Result(f"serve /api/search {label} p95", ours, "search() p95", library, "<= 20 ms"),
        Result(f"serve start-up {label} (read+index)", started, "vis-export index", job, "report", unit="s"),
    ], f"serve over {label}: start-up (read, summarise, index) {started:.1f} s, `vis-export index` {job:.1f} s"


def sessions_page(count: int) -> list[Result]:
    figures = {}
    for n in (100, count):
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            (folder / "many.json").write_text(json.dumps([_tiny(i) for i in range(n)]))
            with client(folder, keep_index=False) as (made, started, _):
                for url in ("/", "/?sort=title&page=3", "/?title=9"):
                    get(made, url)()  # the sorted order is built once per sort
                figures[n] = {url: p95([get(made, url)]) for url in ("/", "/?sort=title&page=3", "/?title=9")}
                figures[n]["start"] = started
    return [
        Result(f"serve sessions {count:,} {what}", figures[count][url], "same at 100", figures[100][url], "<= 50 ms")
        for what, url in (("p95", "/"), ("sorted p3", "/?sort=title&page=3"), ("filtered", "/?title=9"))
    ]


def _tiny(i: int) -> dict[str, Any]:
    t = 1740000000000 + i * 60_000
    message = {"id": "m", "role": "user", "status": "completed", "created_at": t, "content": []}
    return {"id": f"s{i}", "title": f"Session number {i}", "messages": [message]}


def run(quick: bool = False) -> tuple[list[Result], list[str]]:
    pages, page_line = session_page(100_000 if quick else 1_000_000)
    found, search_line = api_search(10_000 if quick else 100_000)
    listed = sessions_page(10_000 if quick else 100_000)
    return pages + found + listed, [page_line, search_line]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.serve", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    results, lines = run(parser.parse_args().quick)
    print(table(results))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
