"""Imported ahead of a PDF job by the process that a local Dask cluster's
workers are forked from (``Format.imports``): WeasyPrint, if it can be. Where
its system libraries are missing, importing it raises ``OSError``, which would
stop that process and the cluster with it; the job's own tasks then say what
is missing, in one line each."""

from contextlib import suppress

with suppress(Exception):
    import weasyprint  # noqa: F401 - imported for the processes forked from this one
