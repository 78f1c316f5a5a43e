"""Documents (spec 002): collections, chunking, document ingestion as one transaction, document search, graph
questions scoped to a collection, and a guarded web fetcher. A pipeline beside ``ingest``: fetch → clean → chunk
→ embed → rows + facts in one transaction (the facade supplies the per-chunk extraction)."""
