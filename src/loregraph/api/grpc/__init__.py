"""gRPC interface: the knowledge service of spec 001 (``loregraph.knowledge.v1``)."""
