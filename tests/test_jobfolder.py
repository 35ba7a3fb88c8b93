"""A job's folder beside its output: its own sweep never takes it, even where
locks are per process (NFS). The sweep of folders dead jobs left, by a real
job, is in test_dask.py and test_dask_processes.py."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vis_export.jobs import jobfolder
from vis_export.jobs.jobfolder import JobFolder, sweep


def _locked_elsewhere(path: Path) -> bool:
    """Whether another process finds the lock file held."""
    code = (
        "import fcntl, os, sys\nhandle = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n    fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n    sys.exit(3)\n"
    )
    return subprocess.run([sys.executable, "-c", code, str(path)], timeout=60).returncode == 3


def test_a_jobs_own_folder_outlives_its_own_sweeps_where_locks_are_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On NFS a lock is the process's: the process takes it again, and closing
    any handle of the file frees it, so a job must not even look at its own."""

    def per_process(handle: int, operation: int) -> Any:
        return fcntl.lockf(handle, operation)

    monkeypatch.setattr(jobfolder.fcntl, "flock", per_process)
    made = JobFolder.make(tmp_path / "out")
    assert made is not None and _locked_elsewhere(made.path / jobfolder.OWNER)
    for _ in range(2):
        assert sweep(tmp_path / "out") == [] and sweep(Path(str(tmp_path / "out") + "/./")) == []
    assert made.path.is_dir() and _locked_elsewhere(made.path / jobfolder.OWNER)
    made.remove()
    assert list((tmp_path / "out").iterdir()) == []
