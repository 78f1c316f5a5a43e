"""The MCP interface (official ``mcp`` SDK): memory and document tools over stdio and streamable HTTP."""
