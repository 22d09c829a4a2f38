"""Experiment files: strict schema, YAML loading with line numbers, JSON Schema export."""
