"""`python -m loregraph`: the same command line as the `loregraph` script."""

from loregraph.cli.main import main

main()
