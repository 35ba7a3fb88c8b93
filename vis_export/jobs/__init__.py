"""Jobs over many sessions: work plus sinks, run by the runner they are given
(``vis_export.running``: this process, or a Dask cluster's workers)."""
