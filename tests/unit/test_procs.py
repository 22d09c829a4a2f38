"""CPU sets for pinning a controller and its load generator apart."""

from __future__ import annotations

import os

import pytest

from sdnbench.procs import cpu_set, cpus_left_over


def test_controller_and_generator_cpus_are_disjoint_and_cover_the_allowed_set(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert cpu_set(1) == [0] and cpus_left_over(1) == [1, 2, 3]
    assert cpu_set(3) == [0, 1, 2] and cpus_left_over(3) == [3]


def test_nothing_left_over_means_no_generator_pinning(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert cpus_left_over(2) is None
    assert cpus_left_over(None) is None and cpus_left_over(0) is None
    with pytest.raises(ValueError, match="cpus: 3 asked, this machine has 2"):
        cpu_set(3)
