"""loregraph: temporal knowledge-graph memory for AI agents."""

from loregraph.memory import Memory, Message

__all__ = ["Memory", "Message"]
__version__ = "0.1.0"
