"""Fixtures for sdnbench-tgen tests: a namespace pair that is always removed."""

from __future__ import annotations

import pytest

from .nspair import make_pair, netns_missing, pair_cleanup


@pytest.fixture
def ns_pair():
    """Two namespaces on one veth pair; skipped with the reason when the machine cannot."""
    reason = netns_missing()
    if reason:
        pytest.skip(reason)
    pair = make_pair()
    try:
        yield pair
    finally:
        pair_cleanup(pair.names)
