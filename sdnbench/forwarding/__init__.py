"""Proactive forwarding: rules from the topology (rules.py), written through a controller's REST API (programmer.py)."""
