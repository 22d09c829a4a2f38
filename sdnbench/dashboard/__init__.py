"""The live dashboard: a page over a run's progress, series and cells, served while it runs or after."""
