"""``python -m vis_export``: the same command as ``vis-export``."""

from vis_export.cli import main

main(prog_name="vis-export")
