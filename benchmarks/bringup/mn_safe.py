#!/usr/bin/env python3
"""Run Mininet's own `mn` with its error cleanup disabled.

`mn` calls `mininet.clean.cleanup()` (what `mn -c` does: it kills processes by
name and deletes every OVS bridge on the machine) when it fails or is
interrupted. The benchmark never lets it: cleanup here only says it was
refused, and the benchmark removes what belongs to the measured topology.
Usage: mn_safe.py MN_ARGS...
"""

import runpy
import sys

import mininet.clean


def refuse_cleanup(*_args, **_kwargs):
    """Stand-in for `mn -c`: print that it was refused."""
    print("BRINGUP cleanup-refused", flush=True)


mininet.clean.cleanup = refuse_cleanup
mininet.clean.Cleanup.cleanup = classmethod(refuse_cleanup)
sys.argv = ["mn", *sys.argv[1:]]
runpy.run_path("/usr/bin/mn", run_name="__main__")
