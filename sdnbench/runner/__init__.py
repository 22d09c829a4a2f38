"""Campaigns: plan the trial grid, run it, store each trial."""
