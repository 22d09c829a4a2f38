#!/usr/bin/env python3
"""Side-by-side link benchmark: a plain veth pair vs sdnbench-linkemu (vs netem where the kernel has it).

Two network namespaces A and B, joined three ways in turn:
  * veth      one veth pair A <-> B;
  * linkemu   A <-> veth <-> sdnbench-linkemu (its own namespace, as sdnbench runs it) <-> veth <-> B;
  * netem     one veth pair with `tc qdisc netem` on A's end (skipped with a message without sch_netem).
For each it measures, with sdnbench-tgen (64 B UDP, A -> B):
  * added latency: one-way delay mean/p50/p99 at 1,000 packets/s with no delay configured, and with
    5 ms configured (the excess over 5 ms), against the plain pair;
  * throughput: loss and the emulator's CPU at rising rates; the highest rate held with < 0.1 % loss,
    and packets/s per core = forwarded packets / the emulator's CPU seconds (its sends include the
    kernel delivering each frame into B's stack);
  * the emulator's own release lateness p50/p99/max at each point.
Writes results/trials.csv and results/summary.md. Needs root. Everything it creates (namespaces
sblkb*, processes) is removed on exit.

Usage: sudo benchmarks/linkemu/run.py [--seconds 3] [--rates 10000,25000,50000,100000,150000] [--cpu N]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from sdnbench.paths import native_tool  # noqa: E402

TAG = f"sblkb{os.getpid() % 10000}"
NS_A, NS_B = f"{TAG}a", f"{TAG}b"
IP_A, IP_B = "10.198.0.1", "10.198.0.2"
LOSS_MAX_PCT = 0.1
OWNED: list[subprocess.Popen] = []
OFFLOADS = ["tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off"]


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs a setup command, failing loudly."""
    return subprocess.run(argv, check=check, capture_output=True, text=True)


def spawn(argv: list, **kw) -> subprocess.Popen:
    """Starts a process this script owns (stopped by PID in cleanup)."""
    p = subprocess.Popen([str(a) for a in argv], **kw)
    OWNED.append(p)
    return p


def host_end(ns: str, dev: str, ip: str) -> None:
    """Address, up, offloads off (as sdnbench sets every emulated link end)."""
    sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
    sh("ip", "-n", ns, "link", "set", dev, "up")
    sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, *OFFLOADS, check=False)


def namespaces() -> None:
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "add", ns)


def cleanup() -> None:
    """Stops every process this script started (by PID) and deletes its namespaces and interfaces."""
    for p in OWNED:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    OWNED.clear()
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "del", ns, check=False)
    for dev in (f"{TAG}x", f"{TAG}y"):
        sh("ip", "link", "del", dev, check=False)


class Joint:
    """One way of joining A and B; set up, then torn down."""

    def __init__(self, kind: str, delay_ms: float, workdir: Path, cpu: int | None):
        self.kind, self.delay_ms, self.workdir, self.cpu = kind, delay_ms, workdir, cpu
        self.emulator: subprocess.Popen | None = None
        self.out = workdir / f"linkemu-{kind}-{delay_ms}.jsonl"

    def up(self) -> None:
        namespaces()
        if self.kind in ("veth", "netem"):
            sh("ip", "link", "add", "a0", "netns", NS_A, "type", "veth", "peer", "name", "b0", "netns", NS_B)
            if self.kind == "netem":
                sh("ip", "netns", "exec", NS_A, "tc", "qdisc", "add", "dev", "a0", "root", "netem",
                   "delay", f"{self.delay_ms}ms", "limit", "100000")
        else:
            sh("ip", "link", "add", f"{TAG}x", "type", "veth", "peer", "name", "a0", "netns", NS_A)
            sh("ip", "link", "add", f"{TAG}y", "type", "veth", "peer", "name", "b0", "netns", NS_B)
            for dev in (f"{TAG}x", f"{TAG}y"):
                sh("ethtool", "-K", dev, *OFFLOADS, check=False)
            cfg = self.workdir / "linkemu.json"
            one_way = {"delay_ns": int(self.delay_ms * 1e6)} if self.delay_ms else {}
            cfg.write_text(json.dumps({"links": [{"name": "bench", "a": f"{TAG}x", "b": f"{TAG}y",
                                                  "a_to_b": one_way, "b_to_a": {}}]}))
            argv = [native_tool("sdnbench-linkemu"), "--config", cfg, "--netns-private", "--interval", "0s"]
            if self.cpu is not None:
                argv += ["--cpu", self.cpu]
            self.emulator = spawn(argv, stdout=open(self.out, "w"), stderr=subprocess.DEVNULL)
            mine = os.readlink("/proc/self/ns/net")
            for _ in range(500):
                if os.readlink(f"/proc/{self.emulator.pid}/ns/net") != mine:
                    break
                time.sleep(0.01)
            for dev in (f"{TAG}x", f"{TAG}y"):
                sh("ip", "link", "set", "dev", dev, "netns", str(self.emulator.pid))
            for _ in range(500):
                if '"start"' in self.out.read_text():
                    break
                time.sleep(0.01)
            else:
                raise RuntimeError("sdnbench-linkemu did not start")
        host_end(NS_A, "a0", IP_A)
        host_end(NS_B, "b0", IP_B)
        # Resolve ARP first: the first probe must not wait for it.
        sh("ip", "netns", "exec", NS_A, "ping", "-c", "2", "-i", "0.2", "-W", "2", IP_B, check=False)

    def mark(self) -> dict | None:
        """The emulator's counters and lateness since the previous mark (SIGUSR1)."""
        if self.emulator is None:
            return None
        before = self.out.read_text().count('"mark"')
        self.emulator.send_signal(10)   # SIGUSR1
        for _ in range(500):
            lines = [json.loads(x) for x in self.out.read_text().splitlines() if '"mark"' in x]
            if len(lines) > before:
                return lines[-1]["data"]
            time.sleep(0.01)
        return None

    def down(self) -> None:
        if self.emulator is not None:
            self.emulator.terminate()
            self.emulator.wait(10)
        cleanup()


def tgen(rate: int, seconds: float) -> dict:
    """One UDP flow A -> B; the receiver's summary plus the sender's achieved ratio."""
    t = native_tool("sdnbench-tgen")
    with tempfile.TemporaryDirectory() as tmp:
        rx = spawn(["ip", "netns", "exec", NS_B, t, "recv", "--bind", f"{IP_B}:5001", "--interval", "0s",
                    "--expect-flows", "1"], stdout=open(Path(tmp) / "rx", "w"), stderr=subprocess.DEVNULL)
        time.sleep(0.2)
        tx = subprocess.run(["ip", "netns", "exec", NS_A, t, "send", "--to", f"{IP_B}:5001", "--rate", f"{rate}pps",
                             "--duration", f"{seconds}s", "--payload", "64B"], capture_output=True, text=True)
        rx.wait(30)
        recv = [json.loads(x)["data"] for x in (Path(tmp) / "rx").read_text().splitlines()]
    send = [json.loads(x)["data"] for x in tx.stdout.splitlines() if '"summary"' in x]
    out = next(d for d in recv if d.get("role") == "receiver")
    out["achieved_ratio"] = send[0]["achieved_ratio"] if send else None
    return out


def measure(kind: str, delay_ms: float, rates: list[int], seconds: float, workdir: Path, cpu) -> list[dict]:
    rows = []
    path = Joint(kind, delay_ms, workdir, cpu)
    try:
        path.up()
        for rate in rates:
            before = path.mark()
            t0 = time.monotonic()
            r = tgen(rate, seconds)
            wall = time.monotonic() - t0
            w = path.mark()
            emu = w["links"][0] if w else {}
            cpu_s = w["cpu_s"] - before["cpu_s"] if w and before else None
            rows.append({
                "path": kind, "delay_ms": delay_ms, "rate_pps": rate, "sent_ratio": r["achieved_ratio"],
                "rx_pkts": r["rx_pkts"], "loss_pct": r["loss_pct"], "reordered_pkts": r["reordered_pkts"],
                "owd_mean_ms": r["owd_mean_ms"], "owd_p50_ms": r["owd_p50_ms"], "owd_p99_ms": r["owd_p99_ms"],
                "emu_cpu_s": cpu_s, "wall_s": wall,
                "pps_per_core": (emu.get("tx_pkts", 0) / cpu_s) if cpu_s else None,
                "late_p50_us": emu.get("late_p50_us"), "late_p99_us": emu.get("late_p99_us"),
                "late_max_us": emu.get("late_max_us"), "ring_drop_pkts": emu.get("ring_drop_pkts"),
                "emu_dropped_pkts": sum(emu.get(k, 0) for k in ("lost_pkts", "limit_drop_pkts", "ring_drop_pkts",
                                                                 "tx_error_pkts", "truncated_pkts")) if w else None,
                "sched": w.get("sched") if w else None,
            })
            print(json.dumps(rows[-1]), flush=True)
    finally:
        path.down()
    return rows


def netem_available() -> str | None:
    """None when tc can attach netem here, else why not."""
    r = subprocess.run(["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]


def summarize(rows: list[dict], netem_skip: str | None) -> str:
    def at(path, delay, rate):
        return next((r for r in rows if r["path"] == path and r["delay_ms"] == delay and r["rate_pps"] == rate), None)

    lines = ["# sdnbench-linkemu vs a plain veth pair" + ("" if netem_skip else " vs netem"), ""]
    if netem_skip:
        lines += [f"netem: skipped, this kernel cannot attach it ({netem_skip}).", ""]
    lines += ["## Added latency (64 B UDP, 1,000 packets/s)", "",
              "| path | configured delay | one-way mean | p50 | p99 | added over veth (mean) | emulator lateness p50 / p99 / max |",
              "|---|---|---|---|---|---|---|"]
    veth = at("veth", 0.0, 1000)
    for path in ("veth", "linkemu", "netem"):
        for delay in (0.0, 5.0):
            r = at(path, delay, 1000)
            if not r:
                continue
            added = (r["owd_mean_ms"] - delay - veth["owd_mean_ms"]) * 1000 if veth else float("nan")
            late = (f"{r['late_p50_us']:.1f} / {r['late_p99_us']:.1f} / {r['late_max_us']:.0f} µs"
                    if r["late_p50_us"] is not None else "—")
            lines.append(f"| {path} | {delay:g} ms | {r['owd_mean_ms'] * 1000:.1f} µs | {r['owd_p50_ms'] * 1000:.1f} µs | "
                         f"{r['owd_p99_ms'] * 1000:.1f} µs | {added:+.1f} µs | {late} |")
    lines += ["", "## Throughput (64 B UDP)", "",
              "| path | delay | rate | sent/requested | loss | of which the emulator's | reordered | emulator CPU | "
              "packets/s per core | lateness p99 |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["rate_pps"] == 1000:
            continue
        core = f"{r['emu_cpu_s'] / r['wall_s']:.0%}" if r["emu_cpu_s"] else "—"
        per = f"{r['pps_per_core']:,.0f}" if r["pps_per_core"] else "—"
        p99 = f"{r['late_p99_us']:.0f} µs" if r["late_p99_us"] is not None else "—"
        mine = "—" if r["emu_dropped_pkts"] is None else f"{r['emu_dropped_pkts']:,} pkts"
        lines.append(f"| {r['path']} | {r['delay_ms']:g} ms | {r['rate_pps']:,} | {r['sent_ratio']:.3f} | "
                     f"{r['loss_pct']:.3f} % | {mine} | {r['reordered_pkts']} | {core} | {per} | {p99} |")
    lines += ["", "## Highest rate held with < 0.1 % loss", "", "| path | delay | rate |", "|---|---|---|"]
    for path, delay in sorted({(r["path"], r["delay_ms"]) for r in rows}):
        held = [r["rate_pps"] for r in rows if r["path"] == path and r["delay_ms"] == delay and r["rate_pps"] > 1000
                and r["loss_pct"] < LOSS_MAX_PCT and (r["sent_ratio"] or 0) > 0.99]
        lines.append(f"| {path} | {delay:g} ms | {max(held):,} pps |" if held else f"| {path} | {delay:g} ms | — |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rates", default="10000,25000,50000,100000,150000")
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1, help="CPU the emulator is pinned to")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces)", file=sys.stderr)
        return 2
    for tool in ("sdnbench-tgen", "sdnbench-linkemu"):
        if native_tool(tool) is None:
            print(f"{tool} is not built: cargo build --release -p {tool}", file=sys.stderr)
            return 2
    rates = [1000] + [int(x) for x in args.rates.split(",")]
    skip = netem_available()
    if skip:
        print(f"netem skipped: {skip}", flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for kind in ("veth", "linkemu") + (() if skip else ("netem",)):
                rows += measure(kind, 0.0, rates, args.seconds, Path(tmp), args.cpu)
                if kind != "veth":
                    rows += measure(kind, 5.0, [1000, 10000, 50000], args.seconds, Path(tmp), args.cpu)
        finally:
            cleanup()
    with open(out / "trials.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "summary.md").write_text(summarize(rows, skip))
    print((out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
