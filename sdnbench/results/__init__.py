"""The results store: one SQLite database per run directory."""
