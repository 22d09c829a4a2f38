#!/usr/bin/env python3
"""Side-by-side generator benchmark: sdnbench-tgen vs D-ITG vs iperf3 on one veth pair.

Two network namespaces joined by one veth pair (no switch), UDP with 64 B and
1,024 B payloads. For each tool and size it measures
  * the achieved/requested send ratio and loss at 10k, 50k and 100k packets/s;
  * the highest rate sustained with < 0.1 % loss and < 1 % rate error
    (rate error = |sent rate - requested| / requested), found by doubling
    from 10k packets/s (halving down to ~20 when 10k already fails), then bisecting.
Writes results/trials.csv, results/summary.csv and results/summary.md.
Needs root. Everything it creates (namespaces sbtgb*, processes) is removed on exit.

tgen-gso is sdnbench-tgen with --gso (one UDP GSO sendmsg per batch); the sending veth
has generic segmentation off, so its datagrams still cross the veth one by one.

Usage: sudo benchmarks/tgen/run.py [--seconds 2] [--bisect 4] [--tools tgen,tgen-gso,ditg,iperf3]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from sdnbench.paths import native_tool  # noqa: E402

LOSS_MAX_PCT, RATE_ERR_MAX_PCT = 0.1, 1.0
POINTS = (10_000, 50_000, 100_000)
SIZES = (64, 1024)
TAG = f"sbtgb{os.getpid() % 100000}"
NS_A, NS_B = f"{TAG}a", f"{TAG}b"
IP_A, IP_B = "10.199.0.1", "10.199.0.2"
OWNED: list[subprocess.Popen] = []


def sh(*argv: str) -> None:
    """Runs a setup command, failing loudly."""
    subprocess.run(argv, check=True, capture_output=True)


def netns_up() -> None:
    """Creates the two namespaces and the veth pair between them."""
    sh("ip", "netns", "add", NS_A)
    sh("ip", "netns", "add", NS_B)
    sh("ip", "link", "add", f"{TAG}a", "netns", NS_A, "type", "veth", "peer", "name", f"{TAG}b", "netns", NS_B)
    for ns, dev, ip in ((NS_A, f"{TAG}a", IP_A), (NS_B, f"{TAG}b", IP_B)):
        sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    # No generic segmentation on the sending veth: every datagram, GSO-built or not,
    # crosses the veth as its own packet (as on an Open vSwitch port with offloads off).
    sh("ip", "netns", "exec", NS_A, "ethtool", "-K", f"{TAG}a", "gso", "off", "tx-udp-segmentation", "off")


def cleanup() -> None:
    """Stops every process this script started (by PID) and deletes its namespaces."""
    for p in OWNED:
        if p.poll() is None:
            p.kill()
            p.wait()
    for ns in (NS_A, NS_B):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def in_ns(ns: str, argv: list[str]) -> list[str]:
    """argv run inside namespace ns."""
    return ["ip", "netns", "exec", ns, *argv]


def start(ns: str, argv: list[str], **kw) -> subprocess.Popen:
    """Starts a process inside ns and records it for cleanup."""
    p = subprocess.Popen(in_ns(ns, argv), **kw)
    OWNED.append(p)
    return p


def free_port() -> int:
    """A port number free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def trial_tgen(tool: str, size: int, pps: int, secs: float, tmp: Path, extra: tuple[str, ...] = ()) -> dict:
    """One sdnbench-tgen run (extra: sender flags such as --gso): its own sender and receiver summaries."""
    port = free_port()
    rx = start(NS_B, [tool, "recv", "--bind", f"{IP_B}:{port}", "--interval", "0s", "--duration", f"{secs + 15}s"],
               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rx.stderr.readline()
    tx = subprocess.run(in_ns(NS_A, [tool, "send", "--to", f"{IP_B}:{port}", "--rate", f"{pps}pps",
                                     "--payload", f"{size}B", "--duration", f"{secs}s", *extra]),
                        capture_output=True, text=True, timeout=secs + 30)
    out, _ = rx.communicate(timeout=secs + 30)
    s = [json.loads(x)["data"] for x in tx.stdout.splitlines() if '"sender"' in x][0]
    r = [json.loads(x)["data"] for x in out.splitlines() if '"role":"receiver"' in x][0]
    return {"sent": s["tx_pkts"], "sent_pps": s["tx_rate_pps"], "received": r["rx_pkts"]}


def _itgdec(log: Path, field: str) -> float:
    out = subprocess.run(["ITGDec", str(log)], capture_output=True, text=True).stdout
    total = out.split("TOTAL RESULTS")[-1]
    m = re.search(rf"{field}\s*=\s*([0-9.]+)", total)
    return float(m.group(1)) if m else 0.0


def trial_ditg(size: int, pps: int, secs: float, tmp: Path) -> dict:
    """One D-ITG run (ITGRecv is kept running across trials); counts from ITGDec's totals."""
    slog, rlog = tmp / "ditg-send.log", tmp / "ditg-recv.log"
    for f in (slog, rlog):
        f.unlink(missing_ok=True)
    subprocess.run(in_ns(NS_A, ["ITGSend", "-a", IP_B, "-T", "UDP", "-c", str(size), "-C", str(pps),
                                "-t", str(int(secs * 1000)), "-l", str(slog), "-x", str(rlog)]),
                   capture_output=True, timeout=secs + 60, cwd=tmp)
    time.sleep(0.5)
    sent = _itgdec(slog, "Total packets")
    return {"sent": int(sent), "sent_pps": sent / secs, "received": int(_itgdec(rlog, "Total packets"))}


def trial_iperf3(size: int, pps: int, secs: float, tmp: Path) -> dict:
    """One iperf3 UDP run; -b is payload bit/s, so it is pps * size * 8."""
    port = free_port()
    srv = start(NS_B, ["iperf3", "-s", "-p", str(port), "-1", "-J"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    cli = subprocess.run(in_ns(NS_A, ["iperf3", "-c", IP_B, "-p", str(port), "-u", "-l", str(size),
                                      "-b", str(pps * size * 8), "-t", str(secs), "-J"]),
                         capture_output=True, text=True, timeout=secs + 30)
    try:
        srv.wait(10)
    except subprocess.TimeoutExpired:
        srv.kill()
    end = json.loads(cli.stdout)["end"]
    sent = end["sum_sent"]["packets"]
    recv = end["sum_received"]["packets"] - end["sum_received"]["lost_packets"]
    return {"sent": sent, "sent_pps": sent / end["sum_sent"]["seconds"], "received": recv}


def measure(runner, tool: str, size: int, pps: int, secs: float, tmp: Path, rows: list[dict]) -> dict:
    """Runs one trial, judges it against the criteria and records a CSV row."""
    r = runner(size, pps, secs, tmp)
    loss = 100.0 * max(0, r["sent"] - r["received"]) / r["sent"] if r["sent"] else 100.0
    err = 100.0 * abs(r["sent_pps"] - pps) / pps
    row = {"tool": tool, "payload_bytes": size, "requested_pps": pps, "sent_pkts": r["sent"],
           "sent_pps": round(r["sent_pps"], 1), "achieved_ratio": round(r["sent_pps"] / pps, 4),
           "received_pkts": r["received"], "loss_pct": round(loss, 4), "rate_error_pct": round(err, 3),
           "ok": loss < LOSS_MAX_PCT and err < RATE_ERR_MAX_PCT}
    rows.append(row)
    print(f"  {tool:7} {size:5} B {pps:>9} pps: sent {row['sent_pps']:>11} pps  loss {row['loss_pct']:>7} %"
          f"  err {row['rate_error_pct']:>6} %  {'ok' if row['ok'] else 'FAIL'}", flush=True)
    return row


def search(runner, tool, size, secs, tmp, rows, bisect) -> int:
    """Highest rate meeting the criteria: doubling/halving from 10k pps, then geometric bisection."""
    ok, bad, rate = None, None, 10_000
    while ok is None or bad is None:
        if measure(runner, tool, size, rate, secs, tmp, rows)["ok"]:
            ok = rate
            if bad is None and rate < 4_000_000:
                rate *= 2
                continue
        else:
            bad = rate
            if ok is None and rate > 20:
                rate //= 2
                continue
        break
    if ok is None or bad is None:
        return ok or 0
    for _ in range(bisect):
        mid = int((ok * bad) ** 0.5)
        if measure(runner, tool, size, mid, secs, tmp, rows)["ok"]:
            ok = mid
        else:
            bad = mid
    return ok


def write(rows: list[dict], summary: list[dict], load: tuple[str, str], secs: float) -> None:
    """CSV of every trial, CSV summary and a Markdown table with ratios."""
    res = HERE / "results"
    res.mkdir(exist_ok=True)
    for name, data in (("trials.csv", rows), ("summary.csv", summary)):
        with open(res / name, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(data[0]))
            w.writeheader()
            w.writerows(data)
    md = ["# sdnbench-tgen vs D-ITG vs iperf3 (two namespaces, one veth pair, UDP)", "",
          f"Criteria: loss < {LOSS_MAX_PCT} %, |sent rate - requested| / requested < {RATE_ERR_MAX_PCT} %; "
          f"{secs:g} s per trial. Load average before: {load[0]}; after: {load[1]}.", "",
          "| tool | payload B | max sustained pps | ratio @10k | ratio @50k | ratio @100k | loss % @100k |",
          "|---|---|---|---|---|---|---|"]
    for s in summary:
        md.append(f"| {s['tool']} | {s['payload_bytes']} | {s['max_sustained_pps']} | {s['ratio_10k']} | "
                  f"{s['ratio_50k']} | {s['ratio_100k']} | {s['loss_pct_100k']} |")
    md += ["", "Sustained-rate ratios (sdnbench-tgen / other):", ""]
    best = {(s["tool"], s["payload_bytes"]): s["max_sustained_pps"] for s in summary}
    for size in SIZES:
        for mine in ("tgen", "tgen-gso"):
            t = best.get((mine, size))
            for other in ("ditg", "iperf3"):
                o = best.get((other, size))
                if t is None or other not in {k[0] for k in best}:
                    continue
                md.append(f"- {size} B: {mine} / {other} = " + (f"{t / o:.1f}x" if o else f"{t} pps vs none sustained"))
    (res / "summary.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="length of each trial, s")
    ap.add_argument("--bisect", type=int, default=4, help="bisection steps after bracketing the limit")
    ap.add_argument("--tools", default="tgen,tgen-gso,ditg,iperf3", help="comma-separated subset")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("run.py: needs root (network namespaces)", file=sys.stderr)
        return 2
    tool = native_tool("sdnbench-tgen")
    runners = {}
    for name in a.tools.split(","):
        if name == "tgen" and tool:
            runners["tgen"] = lambda s, p, t, d: trial_tgen(str(tool), s, p, t, d)
        elif name == "tgen-gso" and tool:
            runners["tgen-gso"] = lambda s, p, t, d: trial_tgen(str(tool), s, p, t, d, ("--gso",))
        elif name == "ditg" and shutil.which("ITGSend"):
            runners["ditg"] = trial_ditg
        elif name == "iperf3" and shutil.which("iperf3"):
            runners["iperf3"] = trial_iperf3
        else:
            print(f"run.py: skipping {name}: not installed/built", file=sys.stderr)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    load_before = open("/proc/loadavg").read().split()[0:3]
    rows, summary = [], []
    tmp = Path(tempfile.mkdtemp(prefix="sbtg-bench-"))
    try:
        netns_up()
        if "ditg" in runners:
            start(NS_B, ["ITGRecv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
            time.sleep(1)
        for name, runner in runners.items():
            for size in SIZES:
                print(f"{name} {size} B", flush=True)
                pts = {p: measure(runner, name, size, p, a.seconds, tmp, rows) for p in POINTS}
                best = search(runner, name, size, a.seconds, tmp, rows, a.bisect)
                summary.append({"tool": name, "payload_bytes": size, "max_sustained_pps": best,
                                "ratio_10k": pts[10_000]["achieved_ratio"], "ratio_50k": pts[50_000]["achieved_ratio"],
                                "ratio_100k": pts[100_000]["achieved_ratio"], "loss_pct_100k": pts[100_000]["loss_pct"]})
    finally:
        cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = open("/proc/loadavg").read().split()[0:3]
    if rows:
        write(rows, summary, (" ".join(load_before), " ".join(load_after)), a.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
