"""Emulation: turns a TopologyGraph into a running Mininet + Open vSwitch network."""
