"""Shared pytest setup: netns tests skip with a reason when the machine cannot run them."""

from __future__ import annotations

import os
import shutil

import pytest


def netns_skip_reason() -> str | None:
    """Why tests that build real networks cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    for tool in ("ovs-vsctl", "ip", "ethtool"):
        if not shutil.which(tool):
            return f"needs {tool}"
    return None


def pytest_collection_modifyitems(config, items):
    reason = netns_skip_reason()
    if reason:
        for item in items:
            if "netns" in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
