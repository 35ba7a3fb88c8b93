"""Jobs over many sessions that run in this process or on a cluster (``vis_export.distributed``)."""
