"""Was the testbed itself the bottleneck of a trial? Then its numbers describe the testbed.

A trial is marked not valid (it stays stored and counted, with the reasons)
when the machine's CPU was saturated while it ran, when its offered packet
rate was above the zero-loss envelope this machine measured for the same
data plane, topology and packet size (sdnbench calibrate), or when a load
generator reported that it could not keep up. Comparisons then never present
a saturated testbed as a difference between controllers.
"""

from __future__ import annotations

from .. import calibration
from ..workloads.traffic.runner import packet_rate

#: Mean CPU use of the whole machine over a trial at or above which the testbed saturated.
CPU_SATURATED_PCT = 95.0
#: Payload of a flow that names no size (sdnbench-tgen's default).
DEFAULT_SIZE_BYTES = 64
#: The prefix load generators give an error that makes their own measurement invalid.
GENERATOR_INVALID = "not valid"


def offered(trial) -> tuple[float, int] | None:
    """(total packets/s offered by the trial's rate-limited flows, their smallest payload), or None."""
    flows = [f for f in trial.flows if f.proto != "tcp" and packet_rate(f)]
    if not flows:
        return None
    return sum(packet_rate(f) for f in flows), min(f.size_bytes or DEFAULT_SIZE_BYTES for f in flows)


def invalid_reasons(trial, results, timings: dict, data_plane: str | None,
                    envelopes: list[calibration.Envelope] | None = None) -> list[str]:
    """Why this trial measured the testbed rather than the controller ([] when it did not)."""
    reasons = []
    cpu = timings.get("host_cpu_mean_pct")
    if cpu is not None and cpu >= CPU_SATURATED_PCT:
        reasons.append(f"the machine's CPU was saturated (mean {cpu:.0f} % while measuring)")
    for r in results:
        reasons += [e for e in r.errors if e.startswith(GENERATOR_INVALID)]
    load = offered(trial) if data_plane else None
    if load:
        pps, size = load
        env = calibration.lookup(data_plane, trial.topology, size, envelopes)
        if env is not None and pps > env.zero_loss_pps:
            reasons.append(f"offered {pps:,.0f} packets/s, above this testbed's zero-loss envelope of "
                           f"{env.zero_loss_pps:,.0f} packets/s ({trial.topology}, {size} B, no controller)")
    return reasons
