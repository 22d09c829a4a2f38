#!/usr/bin/env python3
"""Side-by-side southbound benchmark: sdnbench-ofload vs cbench against the same
controllers — the minimal fast responder and every real controller sdnbench can
start here — in one run, same switch and MAC counts, cbench and ofload
alternating so drifting background load affects them alike.

For each controller and mode: cbench (OpenFlow 1.0 only), sdnbench-ofload
under OpenFlow 1.0 and 1.3 (each where the controller speaks it). The
controller's own CPU use is recorded per run: a controller at one full core
is the bottleneck, and no generator can drive it harder.

    sudo CBENCH=/path/to/cbench .venv/bin/python benchmarks/ofload/run.py
    .venv/bin/python benchmarks/ofload/run.py --controllers responder,osken --modes latency --reps 3

cbench comes from an oflops checkout built locally (CBENCH=path; without it
only sdnbench-ofload runs). POX runs when SDNBENCH_POX_DIR names a checkout.
Writes results/ofload-<time>.csv and .md, and every raw output under
results/raw-<time>/.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from sdnbench.controllers import ADAPTERS, ControllerSpec, make_adapter  # noqa: E402
from sdnbench.controllers.process import free_port, port_listening  # noqa: E402
from sdnbench.procs import cpu_set, cpus_left_over  # noqa: E402
from sdnbench.controllers.base import SouthboundProfile  # noqa: E402
from sdnbench.workloads.sbi import OFLOAD_DEFAULT_PORTS, OFLOAD_FIRST_DPID  # noqa: E402
from sdnbench.workloads.sbi import OfloadOptions, apply_profile, ofload_argv  # noqa: E402

BIN = Path(os.environ.get("SDNBENCH_BIN_DIR", ROOT / "target" / "release"))
COLUMNS = ["rep", "controller", "mode", "tool", "openflow", "switches", "macs", "loops", "warmup", "ms_per_loop",
           "threads", "mean_rps", "sd_rps", "min_rps", "max_rps", "latency_p50_us", "latency_p99_us",
           "generator_cores", "cpu_ns_per_response", "controller_cores", "valid", "unmatched", "raw"]


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, in seconds (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Responder:
    """ofload-responder: answers every PACKET_IN at once, the fastest controller possible."""

    versions = ("1.0", "1.3")

    def __init__(self, rawdir: Path, cpus: int | None):
        self.rawdir, self.cpus, self.proc, self.port = rawdir, cpus, None, 0

    def start(self, version: str, switches: int) -> int:
        self.port = free_port()
        log = open(self.rawdir / f"responder-{self.port}.log", "w")
        pinned = cpu_set(self.cpus)
        # One worker thread per CPU it is pinned to, so --controller-cpus 2
        # measures a two-core responder (unpinned: one thread).
        threads = str(len(pinned) if pinned else 1)
        self.proc = subprocess.Popen([str(BIN / "ofload-responder"), "-p", str(self.port), "-T", threads], stdout=log,
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=(lambda: os.sched_setaffinity(0, pinned)) if pinned else None)
        deadline = time.monotonic() + 10
        while not port_listening("127.0.0.1", self.port):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"ofload-responder did not listen; see {log.name}")
            time.sleep(0.05)
        return self.port

    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def profile(self) -> SouthboundProfile:
        return SouthboundProfile()

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


class Adapted:
    """A real controller, started and stopped by its sdnbench adapter as in an experiment."""

    def __init__(self, kind: str, app: str | None, rawdir: Path, cpus: int | None):
        self.kind, self.app, self.rawdir, self.cpus, self.adapter = kind, app, rawdir, cpus, None
        self.versions = ADAPTERS[kind].openflow_versions

    def start(self, version: str, switches: int) -> int:
        port = free_port()
        # Faucet must know its switches: the datapaths sdnbench-ofload and cbench emulate (dpids 1..N).
        datapaths = {OFLOAD_FIRST_DPID + i: OFLOAD_DEFAULT_PORTS for i in range(switches)}
        spec = ControllerSpec(kind=self.kind, label=self.kind, openflow=version, app=self.app, port=port, cpus=self.cpus,
                              options={"datapaths": datapaths, "southbound": True})
        self.adapter = make_adapter(spec)
        self.adapter.start(self.rawdir / f"{self.kind}-of{version}-{port}")
        return port

    def pid(self) -> int | None:
        pids = self.adapter.pids() if self.adapter else []
        return pids[0] if pids else None

    def profile(self) -> SouthboundProfile:
        """The PACKET_INs this controller answers (Faucet: its pipeline's), as its adapter says."""
        return self.adapter.southbound_profile()

    def stop(self) -> None:
        if self.adapter:
            self.adapter.stop()
            self.adapter = None


def controllers(names: list[str], rawdir: Path, cpus: int | None) -> list[tuple[str, object]]:
    """The controllers to measure ("kind" or "kind:app"), skipping (with a message) the
    ones not installed here."""
    chosen = []
    local = [k for k in ADAPTERS if k not in ("remote", "none")]
    for name in names:
        if name == "responder":
            chosen.append((name, Responder(rawdir, cpus)))
            continue
        kind, _, app = name.partition(":")
        if kind not in local:
            sys.exit(f"unknown controller {kind!r}: expected responder or one of {', '.join(local)}")
        avail = ADAPTERS[kind].availability()
        if not avail.ok:
            print(f"{name}: skipped, {avail.detail} (fix: {avail.fix})")
            continue
        chosen.append((name, Adapted(kind, app or None, rawdir, cpus)))
    return chosen


def measure(ctl, version: str, switches: int, argv_for, raw: Path, timeout_s: float) -> tuple[float | None, str]:
    """Start a fresh controller (no learned state), run argv_for(port) against it on the CPUs
    the controller does not use, stop it. Returns (controller cores used while the tool ran,
    the tool's output)."""
    port = ctl.start(version, switches)
    tool_cpus = cpus_left_over(ctl.cpus)
    try:
        argv = argv_for(port)
        pid = ctl.pid()
        c0, t0 = (cpu_seconds(pid) if pid else None), time.monotonic()
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                                 preexec_fn=(lambda: os.sched_setaffinity(0, tool_cpus)) if tool_cpus else None)
            text = out.stdout + out.stderr
        except subprocess.TimeoutExpired as exc:
            text = f"{exc.stdout or ''}{exc.stderr or ''}\n(timed out after {timeout_s:.0f} s)"
        c1, wall = (cpu_seconds(pid) if pid else None), time.monotonic() - t0
    finally:
        ctl.stop()
    raw.write_text(text)
    cores = (c1 - c0) / wall if c0 is not None and c1 is not None else None
    return cores, text


def fmt(v: float | None, digits: int = 1) -> str:
    return "" if v is None else f"{v:.{digits}f}"


def run_cbench(args, ctl, name: str, mode: str, switches: int, rep: int, rawdir: Path) -> dict:
    """One cbench run (OpenFlow 1.0); retried once, as cbench now and then hangs in its handshake."""
    row = {"rep": rep, "controller": name, "mode": mode, "tool": "cbench", "openflow": "1.0", "switches": switches,
           "macs": args.macs, "loops": args.loops, "warmup": args.warmup, "ms_per_loop": args.ms, "threads": 1}
    for attempt in (1, 2):
        raw = rawdir / f"cbench-{name}-{mode}-rep{rep}-try{attempt}.txt"
        timing = raw.with_suffix(".time")

        def argv(port: int) -> list[str]:
            # cbench reports no CPU use; /usr/bin/time measures it over its whole run.
            return ["/usr/bin/time", "-f", "%U %S %e", "-o", str(timing), args.cbench, "-c", "127.0.0.1",
                    "-p", str(port), "-s", str(switches), "-M", str(args.macs), "-l", str(args.loops),
                    "-m", str(args.ms), "-w", str(args.warmup)] + (["-t"] if mode == "throughput" else [])
        cores, text = measure(ctl, "1.0", switches, argv, raw, args.loops * args.ms / 1000 + 30)
        m = re.search(r"min/max/avg/stdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+)", text)
        if m:
            break
        print(f"  cbench gave no result (try {attempt}); see {raw}")
    row.update(controller_cores=fmt(cores, 2), raw=raw.name)
    if not m:
        return {**row, "valid": "no result"}
    mn, mx, avg, sd = (float(x) for x in m.groups())
    row.update(mean_rps=fmt(avg), sd_rps=fmt(sd), min_rps=fmt(mn), max_rps=fmt(mx), valid="yes")
    try:
        user, system, wall = (float(x) for x in timing.read_text().split()[-3:])
        row["generator_cores"] = fmt((user + system) / wall, 2)
        if avg > 0:
            row["cpu_ns_per_response"] = fmt((user + system) / wall * 1e9 / avg, 0)
    except (OSError, ValueError):
        pass
    return row


def run_ofload(args, ctl, name: str, mode: str, switches: int, version: str, threads: int, rep: int,
               rawdir: Path) -> dict:
    """One sdnbench-ofload run; its summary record gives every column."""
    row = {"rep": rep, "controller": name, "mode": mode, "tool": "sdnbench-ofload", "openflow": version,
           "switches": switches, "macs": args.macs, "loops": args.loops, "warmup": args.warmup,
           "ms_per_loop": args.ms, "threads": threads}
    raw = rawdir / f"ofload-{name}-{mode}-of{version}-T{threads}-rep{rep}.jsonl"

    def argv(port: int) -> list[str]:
        # As the sbi workload runs it: the controller's profile may raise -M (Faucet answers a host once).
        opts = OfloadOptions(switches=switches, macs_per_switch=args.macs, loops=args.loops, ms_per_loop=args.ms,
                             warmup_loops=args.warmup, throughput=mode == "throughput", threads=threads,
                             busy_poll=bool(args.controller_cpus))  # the tools have cores of their own
        return ofload_argv(str(BIN / "sdnbench-ofload"), "127.0.0.1", port, version, apply_profile(opts, ctl.profile()))
    cores, text = measure(ctl, version, switches, argv, raw, args.loops * args.ms / 1000 + 60)
    row.update(controller_cores=fmt(cores, 2), raw=raw.name)
    summary = None
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") == "summary":
            summary = rec["data"]
    if summary is None:
        return {**row, "valid": "error"}
    rate, lat, gen = summary["responses_per_s"], summary["latency_us"] or {}, summary["generator_cpu"]
    busy = gen.get("cores_busy", gen["cores_used"])  # busy-polling: the time not spent polling idle
    row.update(macs=summary["macs_per_switch"], mean_rps=fmt(rate["mean"]), sd_rps=fmt(rate["sd"]), min_rps=fmt(rate["min"]), max_rps=fmt(rate["max"]),
               latency_p50_us=fmt(lat.get("p50")), latency_p99_us=fmt(lat.get("p99")),
               generator_cores=fmt(busy, 2),
               cpu_ns_per_response=fmt(busy * 1e9 / rate["mean"], 0) if rate["mean"] else "",
               valid="yes" if summary["valid"] else "no: " + "; ".join(summary["invalid_reasons"]),
               unmatched=summary["totals"]["unmatched"])
    return row


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--controllers", default="responder,testcontroller,osken,osken:l2_packet_out,ryu,pox,faucet",
                   help="comma-separated kind or kind:app (default: %(default)s); controllers not installed "
                        "here are skipped with a message")
    p.add_argument("--modes", default="throughput,latency", help="default: %(default)s")
    p.add_argument("--reps", type=int, default=2, help="repetitions (default %(default)s)")
    p.add_argument("--loops", type=int, default=6, help="cbench -l (default %(default)s)")
    p.add_argument("--ms", type=int, default=1000, help="cbench -m, ms per loop (default %(default)s)")
    p.add_argument("--warmup", type=int, default=1, help="cbench -w (default %(default)s)")
    p.add_argument("--macs", type=int, default=1000, help="cbench -M (default %(default)s)")
    p.add_argument("--switches", default="responder=16,default=8",
                   help="switch count per controller, name=N pairs (default: %(default)s; "
                        "ovs-testcontroller's handshake with cbench times out at 16)")
    p.add_argument("--threads", default="1,2", help="sdnbench-ofload -T values (default %(default)s)")
    p.add_argument("--controller-cpus", type=int, default=1,
                   help="pin the controller to this many CPUs and the tools to the rest (default %(default)s; "
                        "0: no pinning). Unpinned, a multi-threaded Python controller's threads convoy on the "
                        "GIL across cores whenever the generator leaves one idle, which favours a generator "
                        "that spins (cbench) over one that sleeps")
    p.add_argument("--cbench", default=os.environ.get("CBENCH", ""), help="cbench binary (default: $CBENCH)")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    for b in ("sdnbench-ofload", "ofload-responder"):
        if not (BIN / b).is_file():
            sys.exit(f"missing {BIN / b}: cargo build --release -p sdnbench-ofload -p ofload-responder")
    if args.cbench and not shutil.which(args.cbench):
        sys.exit(f"cbench {args.cbench!r} is not an executable")
    print(f"cbench: {args.cbench}" if args.cbench else
          "cbench: not given (CBENCH=/path/to/cbench to compare with it); running sdnbench-ofload only")
    counts = dict(pair.split("=") for pair in args.switches.split(","))
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    outdir = HERE / "results"
    rawdir = outdir / f"raw-{stamp}"
    rawdir.mkdir(parents=True, exist_ok=True)
    csv_path = outdir / f"ofload-{stamp}.csv"
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    with open(csv_path, "w", newline="") as f:
        out = csv.DictWriter(f, COLUMNS)
        out.writeheader()
        for name, ctl in controllers(args.controllers.split(","), rawdir, args.controller_cpus or None):
            switches = int(counts.get(name, counts.get(name.partition(":")[0], counts.get("default", 8))))
            for mode in args.modes.split(","):
                for rep in range(1, args.reps + 1):
                    print(f"== {name}, {mode}, {switches} switches, repetition {rep}", flush=True)
                    rows = []
                    if args.cbench and "1.0" in ctl.versions:
                        rows.append(run_cbench(args, ctl, name, mode, switches, rep, rawdir))
                    for threads in (int(t) for t in args.threads.split(",")):
                        for version in ("1.0", "1.3"):
                            if version in ctl.versions:
                                rows.append(run_ofload(args, ctl, name, mode, switches, version, threads, rep, rawdir))
                    for row in rows:
                        print(f"   {row['tool']:<16} OF{row['openflow']} T{row['threads']}: "
                              f"{row.get('mean_rps') or '-':>12} responses/s, controller {row.get('controller_cores') or '-'} "
                              f"cores, valid {row['valid']}", flush=True)
                        out.writerow(row)
                    f.flush()
    load_after = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    pinning = (f"controller pinned to {args.controller_cpus} CPU(s), tools to the rest" if args.controller_cpus
               else "nothing pinned")
    note = f"load average before: {load_before}, after: {load_after}; {os.cpu_count()} CPUs; {pinning}"
    md = subprocess.run([sys.executable, str(HERE / "summarize.py"), str(csv_path), note],
                        capture_output=True, text=True, check=True).stdout
    csv_path.with_suffix(".md").write_text(md)
    print(md)
    print(f"results: {csv_path} {csv_path.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
