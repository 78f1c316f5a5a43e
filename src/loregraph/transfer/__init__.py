"""Memory that moves between backends: export/import as versioned JSON lines through the one write path,
migrate (export piped into import) and SQLite's online backup."""

from loregraph.transfer.backup import backup_sqlite
from loregraph.transfer.memory_file import (
    FORMAT,
    VERSION,
    Header,
    ImportReport,
    export_lines,
    export_memory,
    import_lines,
    migrate,
)

__all__ = ["FORMAT", "VERSION", "Header", "ImportReport", "backup_sqlite", "export_lines", "export_memory",
           "import_lines", "migrate"]
