#!/usr/bin/env python3
"""Turn the benchmark CSV (one row per run) into a Markdown table with ofload/cbench ratios."""

import csv
import statistics
import sys

KEY = ("controller", "mode", "tool", "openflow", "switches", "threads")


def num(rows: list[dict], col: str) -> list[float]:
    """The column's numeric values across rows (blanks skipped)."""
    return [float(r[col]) for r in rows if r.get(col)]


def fmt(xs: list[float], digits: int = 0) -> str:
    """Mean of xs, or a dash."""
    return f"{statistics.fmean(xs):,.{digits}f}" if xs else "–"


def main() -> None:
    """Print the Markdown summary of one benchmark CSV."""
    path, note = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    groups: dict[tuple, list[dict]] = {}
    for r in csv.DictReader(open(path)):
        groups.setdefault(tuple(r[k] for k in KEY), []).append(r)
    means = {k: num(rows, "mean_rps") for k, rows in groups.items()}
    out = ["# sdnbench-ofload vs cbench", "", f"Source: `{path}`. {note}", "",
           "responses/s: mean over repetitions of each run's mean over its measured loops; "
           "sd: across repetitions (within the run when there is one).", "",
           "| controller | mode | tool | OpenFlow | switches | threads | runs | responses/s | sd | p50 µs | p99 µs | gen. cores | gen. CPU ns/response | ctl. cores | all valid | vs cbench |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, rows in groups.items():
        ctl, mode, tool, ver, sw, thr = key
        m = means[key]
        sd = statistics.stdev(m) if len(m) > 1 else (num(rows, "sd_rps") or [None])[0]
        base = next((means[k] for k in groups if k[:3] == (ctl, mode, "cbench")), [])
        ratio = f"{statistics.fmean(m) / statistics.fmean(base):.2f}×" if tool != "cbench" and m and base else ""
        if tool != "cbench" and not any(k[:3] == (ctl, mode, "cbench") for k in groups):
            ratio = "no cbench run"
        valid = "yes" if all(r["valid"] == "yes" for r in rows) else "no"
        out.append(f"| {ctl} | {mode} | {tool} | {ver} | {sw} | {thr} | {len(m)}/{len(rows)} | {fmt(m)} | "
                   f"{'–' if sd is None else f'{sd:,.0f}'} | {fmt(num(rows, 'latency_p50_us'), 1)} | "
                   f"{fmt(num(rows, 'latency_p99_us'), 1)} | {fmt(num(rows, 'generator_cores'), 2)} | "
                   f"{fmt(num(rows, 'cpu_ns_per_response'))} | {fmt(num(rows, 'controller_cores'), 2)} | "
                   f"{valid} | {ratio} |")
    out += ["", "cbench counts FLOW_MOD/PACKET_OUT messages; sdnbench-ofload's responses/s counts the same messages "
            "(and matches each to its PACKET_IN; unmatched answers are in the CSV). "
            "gen. CPU ns/response = generator CPU time per answer: cbench's over its whole run (/usr/bin/time), "
            "sdnbench-ofload's over the measured loops (getrusage); it compares the tools' efficiency when the "
            "machine's cores are shared with the controller and other load. ctl. cores = the controller's CPU "
            "use while the tool ran (about 1.0 for a single-threaded controller means the controller, not the "
            "generator, is the limit). runs = runs with a result / runs. cbench speaks only OpenFlow 1.0, "
            "so controllers that speak only 1.3 (Faucet) have no cbench row."]
    print("\n".join(out))


if __name__ == "__main__":
    main()
