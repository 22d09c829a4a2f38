"""Workloads: traffic flows, southbound load, northbound load, attacks."""
