"""Benchmarks: each path measured beside its anchor in the same run (``python -m benchmarks``)."""
