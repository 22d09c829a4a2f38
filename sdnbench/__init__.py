"""sdnbench: measure SDN controllers and data planes on real emulated networks."""

__version__ = "0.1.0"
