"""The Dask runner of a job's work: connecting (``cluster``), the runner, local first
(``running``), and what a worker checks and keeps to run the work it is handed
(``tasks``). The work itself is the job's (``vis_export.jobs``); Dask is
imported only when a job asks for it."""
