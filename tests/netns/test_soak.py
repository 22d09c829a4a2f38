"""The soak in short: consecutive trials across controllers and topologies leave nothing behind."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sdnbench.controllers import ADAPTERS

pytestmark = pytest.mark.netns

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "soak" / "run.py"


def test_six_groups_leave_no_process_interface_bridge_port_file_or_descriptor(tmp_path):
    if not ADAPTERS["osken"].availability().ok:
        pytest.skip("os-ken not installed (make controllers)")
    spec = importlib.util.spec_from_file_location("soak", SOAK)
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    assert soak.soak(["osken", "none"], ["native"], 1, tmp_path)
    summary = (tmp_path / "results.md").read_text()
    assert "trials: 6 (0 failed)" in summary and "groups after which something was left: 0" in summary
