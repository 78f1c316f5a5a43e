"""Network interfaces over the Memory facade (REST today; MCP and gRPC share the same facade)."""
