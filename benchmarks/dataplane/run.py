#!/usr/bin/env python3
"""Data-plane benchmark: zero-loss packet rate and TCP throughput through four data planes, one run.

For each data plane (variants.py: Linux bridge = this machine's ceiling, Mininet's default
userspace OVS, sdnbench `ovs` = today's ports, sdnbench `ovs_fast`), each topology (single-2,
linear-7, tree depth 3 fanout 2 = 7 switches) and each UDP payload (64 B, 1,024 B), from the first
host to the last with no controller (standalone switches):
  * the zero-loss rate: the highest rate with < 0.1 % loss whose sender kept within 1 % of it,
    found by doubling/halving from 10k packets/s, then geometric bisection, 3 s per trial
    (a failed trial is repeated once, so one burst of other work on the machine does not end
    the search);
  * TCP throughput through linear-7 (sdnbench-tgen bulk transfer).
The generator is sdnbench-tgen; its sender uses UDP GSO (one sendmsg per batch) wherever the
sending interface has segmentation off, as every sdnbench port has, so the generator stays above
the data plane; Mininet's default keeps offloads on, so its sender uses plain sendmmsg. A search
stops at the first rate where nothing arrives at all (Mininet's default: every datagram fails its
UDP checksum); each cell reports the receiver's UDP checksum errors.
Writes results/trials.csv, results/summary.csv and results/summary.md (ratios: fast/today,
fast/mininet, each/ceiling). Needs root.

Usage: benchmarks/dataplane/run.py [--seconds 3] [--bisect 5] [--variants bridge,mininet,today,fast]
                                   [--topologies single-2,linear-7,tree-3x2] [--sizes 64,1024] [--keep]
--keep adds this run's cells to those already in results/ (a cell measured again replaces its old one).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))
from variants import VARIANTS, network  # noqa: E402

from sdnbench.paths import native_tool  # noqa: E402
from sdnbench.topology import build_topology  # noqa: E402

LOSS_MAX_PCT, RATE_ERR_MAX_PCT = 0.1, 1.0
TOPOLOGIES = {
    "single-2": {"kind": "single", "hosts": 2},
    "linear-7": {"kind": "linear", "switches": 7, "hosts_per_switch": 1},
    "tree-3x2": {"kind": "tree", "depth": 3, "fanout": 2},
}
TCP_TOPOLOGY, TCP_SECONDS = "linear-7", 5
PORT = 5301


def load1() -> float:
    """The one-minute load average now."""
    return float(open("/proc/loadavg").read().split()[0])


def _summaries(text: str) -> dict[str, dict]:
    """role -> summary data from sdnbench-tgen JSON Lines."""
    out = {}
    for line in text.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("type") == "summary":
                out.setdefault(rec["data"].get("role"), rec["data"])
    return out


def _receiver(host, tool: str, dst_ip: str, argv: list[str], secs: float):
    """Start a receiver and wait until it listens."""
    rx = host.popen([tool, "recv", "--bind", f"{dst_ip}:{PORT}", "--interval", "0s",
                     "--duration", f"{secs + 20:g}s", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True)
    rx.stderr.readline()
    return rx


def udp_trial(hosts, src, dst, tool, size, pps, secs, gso) -> dict:
    """One open-loop UDP trial: sent and received packet counts, the sender's achieved rate."""
    rx = _receiver(hosts[dst], tool, hosts[dst].IP(), [], secs)
    tx = hosts[src].popen([tool, "send", "--to", f"{hosts[dst].IP()}:{PORT}", "--rate", f"{pps}pps",
                           "--payload", f"{size}B", "--duration", f"{secs:g}s", *(["--gso"] if gso else [])],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sent_out, _ = tx.communicate(timeout=secs + 30)
    recv_out, _ = rx.communicate(timeout=secs + 30)
    s = _summaries(sent_out).get("sender", {})
    r = _summaries(recv_out).get("receiver", {})
    sent = s.get("tx_pkts", 0)
    return {"sent_pkts": sent, "sent_pps": round(s.get("tx_rate_pps", 0.0), 1),
            "received_pkts": r.get("rx_pkts", 0)}


def tcp_trial(hosts, src, dst, tool, secs) -> dict:
    """One TCP bulk transfer for secs: goodput in Mbit/s (0 when it stalled)."""
    rx = _receiver(hosts[dst], tool, hosts[dst].IP(), ["--proto", "tcp"], secs)
    tx = hosts[src].popen([tool, "send", "--proto", "tcp", "--to", f"{hosts[dst].IP()}:{PORT}",
                           "--duration", f"{secs}s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sent_out, _ = tx.communicate(timeout=secs + 20)
        recv_out, _ = rx.communicate(timeout=secs + 20)
    except subprocess.TimeoutExpired:
        for p in (tx, rx):
            p.kill()
            p.wait()
        return {"tcp_mbps": 0.0, "note": "stalled"}
    s = _summaries(sent_out).get("sender", {})
    secs_taken = s.get("transfer_time_s") or 0
    confirmed = s.get("bytes_confirmed") or 0
    mbps = confirmed * 8 / secs_taken / 1e6 if secs_taken else 0.0
    return {"tcp_mbps": round(mbps, 1), "retransmits": s.get("retransmits"), "note": "" if mbps else "stalled"}


class Cell:
    """The zero-loss search of one variant x topology x payload, recording every trial."""

    def __init__(self, hosts, src, dst, tool, gso, label: dict, rows: list[dict], secs: float, retries: int):
        self.hosts, self.src, self.dst, self.tool, self.gso = hosts, src, dst, tool, gso
        self.label, self.rows, self.secs, self.retries = label, rows, secs, retries
        self.sender_bound = False   # a failed rate where the sender, not the network, fell short
        self.nothing = False        # a trial where no packet arrived: the search stops there

    def ok(self, pps: int) -> bool:
        """Does the data plane carry pps with < 0.1 % loss (one retry of a failure)?"""
        for attempt in range(self.retries + 1):
            r = udp_trial(self.hosts, self.src, self.dst, self.tool, self.label["payload_bytes"], pps,
                          self.secs, self.gso)
            loss = 100.0 * max(0, r["sent_pkts"] - r["received_pkts"]) / r["sent_pkts"] if r["sent_pkts"] else 100.0
            err = 100.0 * abs(r["sent_pps"] - pps) / pps
            good = loss < LOSS_MAX_PCT and err < RATE_ERR_MAX_PCT
            self.rows.append({**self.label, "requested_pps": pps, **r, "loss_pct": round(loss, 4),
                              "rate_error_pct": round(err, 3), "ok": good, "attempt": attempt + 1,
                              "load1": load1()})
            print(f"  {pps:>9} pps: sent {r['sent_pps']:>10} loss {loss:8.4f} % err {err:6.2f} %"
                  f" {'ok' if good else 'FAIL'}", flush=True)
            if good:
                return True
            if r["received_pkts"] == 0:
                self.nothing = True
                return False
            if err >= RATE_ERR_MAX_PCT and loss < LOSS_MAX_PCT:
                self.sender_bound = True
        return False

    def search(self, bisect: int) -> int:
        """Highest rate that passes: doubling/halving from 10k pps, then geometric bisection."""
        good, bad, rate = None, None, 10_000
        while good is None or bad is None:
            if self.ok(rate):
                good = rate
                if bad is None and rate < 2_000_000:
                    rate *= 2
                    continue
            else:
                bad = rate
                if good is None and rate > 100 and not self.nothing:
                    rate //= 2
                    continue
            break
        if good is None or bad is None:
            return good or 0
        for _ in range(bisect):
            mid = int((good * bad) ** 0.5)
            if self.ok(mid):
                good = mid
            else:
                bad = mid
        return good


def csum_errors(host) -> int:
    """UDP datagrams the host's kernel dropped for a bad checksum (InCsumErrors in /proc/net/snmp)."""
    out = host.popen(["cat", "/proc/net/snmp"], stdout=subprocess.PIPE, text=True).communicate()[0]
    udp = [line.split() for line in out.splitlines() if line.startswith("Udp:")]
    return int(dict(zip(udp[0], udp[1])).get("InCsumErrors", 0)) if len(udp) == 2 else -1


def ping(hosts, src, dst) -> None:
    """Teach every switch both hosts' MACs before measuring (standalone learning switches)."""
    for a, b in ((src, dst), (dst, src)):
        hosts[a].popen(["ping", "-c2", "-i0.2", "-W1", "-q", hosts[b].IP()], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL).wait()


def run_variant(variant, topo, sizes, args, tool, rows, summary, tcp) -> None:
    """Build one network, search each payload's zero-loss rate, and TCP through linear-7."""
    graph = build_topology(TOPOLOGIES[topo])
    src, dst = graph.hosts[0].name, graph.hosts[-1].name
    with network(variant, graph) as (hosts, desc):
        print(f"{variant} {topo}: {desc}", flush=True)
        for size in sizes:
            ping(hosts, src, dst)
            print(f"{variant} {topo} {size} B", flush=True)
            label = {"variant": variant, "topology": topo, "payload_bytes": size}
            cell = Cell(hosts, src, dst, tool, desc.get("offloads") != "on", label, rows, args.seconds,
                        args.retries)
            load, csum = load1(), csum_errors(hosts[dst])
            best = cell.search(args.bisect)
            summary.append({**label, "zero_loss_pps": best, "sender_bound": cell.sender_bound,
                            "gso_sender": cell.gso, "udp_csum_errors": csum_errors(hosts[dst]) - csum,
                            "load1_start": load, "load1_end": load1(),
                            "dataplane": "; ".join(f"{k}={v}" for k, v in desc.items() if k != "variant")})
        if topo == TCP_TOPOLOGY:
            ping(hosts, src, dst)
            r = tcp_trial(hosts, src, dst, tool, TCP_SECONDS)
            print(f"{variant} {topo} TCP: {r}", flush=True)
            tcp.append({"variant": variant, "topology": topo, **r, "load1": load1()})


def _ratio(a, b) -> str:
    return f"{a / b:.1f}×" if a and b else "–"


def kept(name: str, fresh: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """Rows of an earlier results/<name> whose cell this run did not measure, then this run's."""
    path = HERE / "results" / name
    if not path.exists():
        return fresh
    done = {tuple(str(r[k]) for k in keys) for r in fresh}
    with open(path, newline="") as fh:
        old = [r for r in csv.DictReader(fh) if tuple(r[k] for k in keys) not in done]
    for r in old:   # numbers back from text, so the summary can compute ratios
        for k in ("zero_loss_pps", "payload_bytes"):
            if k in r:
                r[k] = int(r[k])
        r["sender_bound"] = r.get("sender_bound") in ("True", True)
    return old + fresh


def write(rows, summary, tcp, started_load, seconds) -> None:
    """trials.csv, summary.csv (zero-loss rates and TCP) and summary.md with ratios."""
    res = HERE / "results"
    res.mkdir(exist_ok=True)
    for name, data in (("trials.csv", rows), ("summary.csv", summary), ("tcp.csv", tcp)):
        if data:
            with open(res / name, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for d in data for k in d)))
                w.writeheader()
                w.writerows(data)
    best = {(s["variant"], s["topology"], s["payload_bytes"]): s["zero_loss_pps"] for s in summary}
    bound = {(s["variant"], s["topology"], s["payload_bytes"]) for s in summary if s["sender_bound"]}
    md = ["# Zero-loss packet rate through four data planes (UDP, first host to last, no controller)", "",
          f"Loss < {LOSS_MAX_PCT} % with the sender within {RATE_ERR_MAX_PCT} % of the rate; {seconds:g} s per "
          f"trial. Load average (1 min) at the start: {started_load:.2f}, at the end: {load1():.2f}; per cell "
          "in summary.csv. ¹ = the sender could not keep up at the next rate up (the generator, not the "
          "data plane, set the limit).", "",
          "| topology | payload | Linux bridge (ceiling) | Mininet default | Mininet, offloads off "
          "| sdnbench `ovs` (today) | sdnbench `ovs_fast` | fast / today | fast / Mininet (offloads off) "
          "| % of ceiling: Mininet off / today / fast |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for topo in TOPOLOGIES:
        for size in sorted({s["payload_bytes"] for s in summary}):
            v = {var: best.get((var, topo, size)) for var in VARIANTS}
            if not any(v.values()):
                continue
            cells = [f"{v[var]:,}" + ("¹" if (var, topo, size) in bound else "") if v[var] is not None else "–"
                     for var in VARIANTS]
            ceiling = v["bridge"]
            pct = " / ".join(f"{100 * v[var] / ceiling:.1f} %" if ceiling and v[var] is not None else "–"
                             for var in ("mininet-nooffload", "today", "fast"))
            md.append(f"| {topo} | {size} B | {' | '.join(cells)} | {_ratio(v['fast'], v['today'])} | "
                      f"{_ratio(v['fast'], v['mininet-nooffload'])} | {pct} |")
    if tcp:
        md += ["", f"TCP through {TCP_TOPOLOGY} ({TCP_SECONDS} s bulk transfer, goodput):", "",
               "| data plane | Mbit/s | note |", "|---|---|---|"]
        md += [f"| {t['variant']} | {t['tcp_mbps']} | {t.get('note', '')} |" for t in tcp]
    (res / "summary.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="length of each trial, s")
    ap.add_argument("--bisect", type=int, default=5, help="bisection steps after bracketing the limit")
    ap.add_argument("--retries", type=int, default=1, help="repeats of a failed trial before it counts")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--topologies", default=",".join(TOPOLOGIES))
    ap.add_argument("--sizes", default="64,1024")
    ap.add_argument("--keep", action="store_true", help="add to the cells already in results/")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("run.py: needs root (network namespaces, Open vSwitch)", file=sys.stderr)
        return 2
    tool = native_tool("sdnbench-tgen")
    if not tool:
        print("run.py: sdnbench-tgen not built (cargo build --release)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    rows, summary, tcp = [], [], []
    started = load1()
    sizes = [int(s) for s in args.sizes.split(",")]
    try:
        for topo in args.topologies.split(","):
            for variant in args.variants.split(","):
                run_variant(variant, topo, sizes, args, str(tool), rows, summary, tcp)
                time.sleep(1)
    finally:
        if rows and args.keep:
            cell = ("variant", "topology", "payload_bytes")
            rows, summary = kept("trials.csv", rows, cell), kept("summary.csv", summary, cell)
            tcp = kept("tcp.csv", tcp, ("variant", "topology"))
        if rows:
            write(rows, summary, tcp, started, args.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
