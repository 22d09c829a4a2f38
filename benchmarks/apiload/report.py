"""Turns the raw outputs of benchmarks/apiload/run.sh into results.csv and results.md."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
FIELDS = ["endpoint", "tool", "target_rps", "throughput_rps", "held", "p50_ms", "p99_ms", "errors", "latency_from"]


def to_ms(text: str) -> float:
    """Converts wrk's '123.45us' / '1.20ms' / '2.00s' to milliseconds."""
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text.strip())
    if not m:
        raise ValueError(f"unreadable latency {text!r}")
    return float(m.group(1)) * UNITS_MS[m.group(2)]


def apiload(path: Path) -> dict | None:
    """Summary numbers of one sdnbench-apiload run."""
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    s = next((r["data"] for r in lines if r["type"] == "summary"), None)
    if s is None:
        return None
    return {"throughput_rps": s["throughput_rps"], "p50_ms": s["latency_ms"]["p50"], "p99_ms": s["latency_ms"]["p99"],
            "errors": s["failed"] + s["dropped"] + s["unsent"], "latency_from": "intended send time"}


def wrk_text(path: Path, corrected: bool) -> dict | None:
    """Requests/s and latency percentiles from wrk or wrk2 text output."""
    text = path.read_text()
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not rps:
        return None
    pct = {}
    for p, v in re.findall(r"^\s+(50|99)(?:\.000)?%\s+(\S+)", text, re.M):
        pct.setdefault(p, to_ms(v))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    errors = int(non2xx.group(1)) if non2xx else 0
    errors += sum(int(x) for x in sock.groups()) if sock else 0
    return {"throughput_rps": float(rps.group(1)), "p50_ms": pct.get("50"), "p99_ms": pct.get("99"),
            "errors": errors, "latency_from": "intended send time" if corrected else "actual send (closed loop)"}


def vegeta(path: Path) -> dict | None:
    """Throughput and latency from `vegeta report -type=json`."""
    try:
        r = json.loads(path.read_text())
    except (json.JSONDecodeError, FileNotFoundError):
        return None
    lat = r["latencies"]
    errors = sum(n for code, n in r.get("status_codes", {}).items() if not code.startswith("2"))
    return {"throughput_rps": r["throughput"], "p50_ms": lat["50th"] / 1e6, "p99_ms": lat["99th"] / 1e6,
            "errors": errors, "latency_from": "actual send"}


READERS = {"apiload": apiload, "wrk2": lambda p: wrk_text(p, True), "vegeta": vegeta}
RAW_NAME = re.compile(r"^(apiload(?:_q\w+)?|wrk2|vegeta)-(?:delay(\d+)-)?(\d+)\.(?:jsonl|txt|json)$")


def collect(raw: Path, duration_s: float) -> list[dict]:
    """One row per tool, endpoint and rate, static file first, then the delayed endpoint."""
    rows = []
    for f in raw.iterdir():
        m = RAW_NAME.match(f.name)
        if not m:
            continue
        tool, delay, rate = m.group(1), m.group(2), int(m.group(3))
        got = READERS["apiload" if tool.startswith("apiload") else tool](f)
        if got is None:
            continue
        held = got["throughput_rps"] >= 0.99 * rate and got["errors"] <= 0.01 * rate * duration_s
        endpoint = f"delay {delay} ms" if delay else "static file"
        rows.append({"endpoint": endpoint, "tool": tool, "target_rps": rate, **got, "held": held})
    order = {"wrk2": 2, "vegeta": 3}
    rows.sort(key=lambda r: (r["endpoint"] != "static file", r["endpoint"], r["target_rps"],
                             order.get(r["tool"], 1 if "_q" in r["tool"] else 0)))
    wrk_max = raw / "wrk-max.txt"
    if wrk_max.exists() and (got := wrk_text(wrk_max, False)):
        rows.append({"endpoint": "static file", "tool": "wrk (closed loop)", "target_rps": "", **got, "held": ""})
    return rows


def fmt(v) -> str:
    """A table cell."""
    if isinstance(v, float):
        return f"{v:.3f}" if v < 100 else f"{v:.0f}"
    return "" if v is None else str(v)


def main() -> None:
    """Writes results.csv and results.md and prints the Markdown."""
    raw, out, duration, machine = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    delay_ms = float(sys.argv[5]) if len(sys.argv) > 5 else None
    rows = collect(raw, float(duration))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in FIELDS})
    md = [f"# sdnbench-apiload vs peers — nginx on loopback, {duration} s per rate ({machine})", "",
          "| endpoint | tool | target rps | successful rps | held | p50 ms | p99 ms | errors | latency measured from |",
          "|---|---|---|---|---|---|---|---|---|"]
    md += ["| " + " | ".join(fmt(r.get(k)) for k in FIELDS) + " |" for r in rows]
    best: dict[str, int] = {}
    for r in rows:
        if r["held"] is True and r["endpoint"] == "static file":
            best[r["tool"]] = max(best.get(r["tool"], 0), r["target_rps"])
    tools = list(dict.fromkeys(r["tool"] for r in rows if r["held"] != ""))
    md += ["", "Highest rate held within 1% of target (static file): "
           + ", ".join(f"{t} {best.get(t, 0)} rps" for t in tools)]
    by = {(r["endpoint"], r["tool"], r["target_rps"]): r for r in rows}
    ratios = []
    for (endpoint, tool, rate), r in by.items():
        w2 = by.get((endpoint, "wrk2", rate))
        if tool.startswith("apiload") and w2 and r["held"] and w2["held"] and w2["p50_ms"]:
            ratios.append(f"{tool} {endpoint} {rate} rps: {r['p50_ms'] / w2['p50_ms']:.2f}")
    if ratios:
        md += ["", "Median latency apiload / wrk2 where both held: " + "; ".join(sorted(ratios))]
    if delay_ms:
        truth = [f"{r['tool']} {r['target_rps']} rps {r['p50_ms'] / delay_ms:.3f}"
                 for r in rows if r["endpoint"].startswith("delay") and r["p50_ms"]]
        if truth:
            md += ["", f"Median / true service time ({delay_ms:g} ms echo_sleep): " + "; ".join(truth)]
    (out / "results.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
