"""REST service (FastAPI): the add-messages contract with a durable queue, Graphiti-compatible routes,
loregraph's own routes, API keys scoped to groups."""

from loregraph.api.rest.app import create_app

__all__ = ["create_app"]
