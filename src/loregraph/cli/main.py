"""Command-line interface: ``loregraph demo | ingest | search | extract | export | import | migrate | backup | serve |
worker | bench | models``.

The application and its shared helpers are in ``cli/app.py``; each group of commands has its module, imported
here in the order ``--help`` lists them. Commands stay thin: the work is done below, in the library.
"""

from __future__ import annotations

import importlib

from loregraph.cli.app import app

# registration order is the order ``--help`` lists the commands in
COMMAND_MODULES = ("memory_commands", "communities_commands", "transfer_commands", "bench_commands",
                   "server_commands", "model_commands")
for _module in COMMAND_MODULES:
    importlib.import_module(f"loregraph.cli.{_module}")

__all__ = ["app", "main"]


def main() -> None:  # pragma: no cover
    app(prog_name="loregraph")


if __name__ == "__main__":  # `python -m loregraph.cli.main`
    main()
