"""Jobs on a Dask cluster: connecting (``cluster``), what workers run (``tasks``), and
the Dask side of ``convert`` and ``index``. Dask is imported only when a job asks for it."""
