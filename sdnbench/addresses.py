"""Small facts about network addresses shared by the dashboard and the experiment checks."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """Whether host names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
