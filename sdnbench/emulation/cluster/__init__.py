"""Experimental: one topology spread over several machines with Mininet's cluster edition (docs/scale-out.md)."""
