from vis_export.cli import main

main()
