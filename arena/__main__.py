from arena.apps.cli import main

main()
