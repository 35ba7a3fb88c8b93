"""What a job's Dask workers need to write a database index themselves, in
a module of its own: a frozen dataclass is made by compiling its methods
(3.5 M instructions), and a no-op index rerun imports ``target``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Database:
    """A database index as a job's Dask workers write it: ``job`` names the job,
    whose writers (workers, and the job's own process) take turns on a session
    that two of its sources hold, instead of failing each other as writers of
    two jobs do after ``wait`` seconds (see ``PostgresEngine``)."""

    uri: str
    wait: float
    origin: str
    job: str
