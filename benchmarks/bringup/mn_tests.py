"""`mn --custom` file: the `ends` test, the check the benchmark asks of both tools.

It stamps when mn has started the network (and waited for the switches with
--wait), pings from the first host to the last and back (one echo each way,
1 s timeout, 0.2 s between tries, until both answer or CHECK_TIMEOUT_S
passes, as sdnbench's reachability check does), and stamps again.
"""

import os
import time

CHECK_TIMEOUT_S = float(os.environ.get("BRINGUP_CHECK_TIMEOUT_S", "60"))


def _stamp(phase):
    print(f"BRINGUP {phase} {time.time():.6f}", flush=True)


def ends(net):
    """Ping first host <-> last host until both directions answer; stamp before and after."""
    _stamp("connected")
    pair = [net.hosts[0], net.hosts[-1]]
    deadline = time.monotonic() + CHECK_TIMEOUT_S
    while net.ping(pair, timeout="1") != 0:
        if time.monotonic() > deadline:
            print("BRINGUP unreachable", flush=True)
            break
        time.sleep(0.2)
    _stamp("checked")


def stamp_only(net):
    """No check: stamp that the network is up (and connected, with --wait)."""
    _stamp("connected")
    _stamp("checked")


tests = {"ends": ends, "stamp": stamp_only}
