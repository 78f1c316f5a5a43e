"""Assembly: settings in, a ready ``Memory`` (and the processes that serve it) out — the one place defaults are
picked, for the CLI, REST, library users and every interface to come.

- ``assembly.components``: store (by URL scheme), schema, embedder, extractor, limits — what ``Memory.open``
  is built from (sits below the facade);
- ``assembly.service``: a started ``Memory`` with its job queue and worker, warm-up and start-up checks, and the
  ``serve`` / ``worker`` processes (sits above the facade);
- ``assembly.worker``: the job worker, which runs queued messages through the facade.
"""
