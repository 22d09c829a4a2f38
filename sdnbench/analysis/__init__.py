"""Statistics and comparison tables over the results store."""
