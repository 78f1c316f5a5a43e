"""Communities (issue 15): clusters of closely related entities of a group, named, summarised and searchable."""

from loregraph.communities.builder import BuildReport, CommunityBuilder, embedding_text
from loregraph.communities.cluster import Clustering, assign_incrementally, connected_components, detect, weighted_graph

__all__ = ["BuildReport", "Clustering", "CommunityBuilder", "assign_incrementally", "connected_components", "detect",
           "embedding_text", "weighted_graph"]
