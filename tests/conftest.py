from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
INPUT = GOLDEN / "input"

# Few examples while developing, many in CI (CI=true): same tests, deeper search.
DEV_EXAMPLES, CI_EXAMPLES = 20, 300
settings.register_profile(
    "dev",
    max_examples=DEV_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def examples(deep: int) -> int:
    """``max_examples`` for a test whose examples are costly: ``deep`` under CI's profile, and the loaded profile's
    share of it (a few at least) under another, so that a plain ``pytest`` stays quick and CI still searches deep.
    A fixed ``max_examples`` would cost the same in both."""
    loaded = settings().max_examples
    return deep if loaded >= CI_EXAMPLES else max(min(deep, 5), deep * loaded // CI_EXAMPLES)


def aged(folder: Path) -> Path:
    """``folder`` with its files dated two clock ticks back, as a later rerun finds them: a stamp taken within a
    tick of a change is not trusted (``sources.stamp``), and dating the files costs no sleep."""
    from vis_export.sources.stamp import RACY_NS

    past = time.time_ns() - 2 * RACY_NS
    for file in folder.iterdir():
        os.utime(file, ns=(past, past), follow_symlinks=False)
    return folder


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="Rewrite the golden expected outputs.")
    parser.addoption("--slow", action="store_true", help="Also run the slow tests (CI=true runs them always).")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A plain ``pytest`` on a laptop runs the quick tests in a few minutes; CI (``CI=true``), ``--slow`` or an
    explicit ``-m`` runs the slow ones too, so nothing is left out where it counts."""
    if os.environ.get("CI") or config.getoption("--slow") or config.getoption("-m"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
        config.hook.pytest_deselected(items=slow)


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def golden_store(tmp_path: Path) -> Path:
    """The golden Vis store, built from golden/store/rows.json with the real table layout."""
    import json

    from visstore import build_store

    return build_store(tmp_path / "vis.db", json.loads((GOLDEN / "store" / "rows.json").read_text()))


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The scheduler address of a real Dask ``LocalCluster`` (two worker processes of one
    thread each), shared by a module's tests: starting one costs seconds."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", host="127.0.0.1"
    ) as local:
        yield local.scheduler_address
