"""Bounds shared by several parts of the experiment format, each with the reason for its value.

A bound turns a typo (a rate of 10^20, a sweep of 10^30 combinations) into an
error naming its line instead of a hang or a run that never ends. Each is set
well above what published evaluations use, so a real study never meets one.
Bounds that belong to one part live with it: file size and nesting in
config/source.py, network size in topology/kind.py, sweeps in config/fields.py,
stages in config/units.py.
"""

from __future__ import annotations

#: Packets/s of one flow or one attacking host. Published studies go to 10^6; the
#: native sender reaches about 334,000 per core here; ten times the published top.
MAX_RATE_PPS = 10_000_000
#: Bit/s of one flow: 100 Gbit/s, beyond what a veth pair carries.
MAX_RATE_BPS = 100_000_000_000
#: Seconds of one flow, attack or phase: a day (published flows last up to 1,200 s).
MAX_DURATION_S = 86_400
#: Packets of one flow: ten million packets/s for a thousand seconds.
MAX_PACKETS = 10_000_000_000
#: Bytes of one TCP transfer: 100 Gbit/s for 800 s.
MAX_VOLUME_BYTES = 10**13
#: Largest UDP payload (65,535 minus the IPv4 and UDP headers).
MAX_PAYLOAD_BYTES = 65_507
#: A multiple of a measured rate (overload, load during attacks): far past any saturation.
MAX_MULTIPLE = 100

#: Repetitions of every trial: a 95 % confidence interval narrows little past 30.
MAX_REPETITIONS = 1_000
#: Controllers compared in one experiment (each is a table column and a process).
MAX_CONTROLLERS = 64
#: Topologies of one experiment. Each is built at plan time and again by preflight
#: (a 5,000-switch line takes about 0.1 s), and published comparisons use a handful.
MAX_TOPOLOGIES = 16
#: Workloads of one experiment.
MAX_WORKLOADS = 64
#: Flows of one traffic workload, run at the same time: each is a sender and a
#: receiver process, and a 2-core machine saturates long before a thousand.
MAX_FLOWS = 1_000
#: Waits an experiment sets (between trials, for switches to connect): an hour.
MAX_WAIT_S = 3_600

#: Trials of one experiment. A trial takes seconds, so 100,000 run for days.
MAX_TRIALS = 100_000
#: Flows over all trials: each is built at plan time (check, plan) and then run.
MAX_FLOW_RUNS = 200_000
