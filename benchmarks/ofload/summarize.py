#!/usr/bin/env python3
"""Turn the benchmark CSV into a Markdown table with ofload/cbench ratios."""

import csv
import sys


def main() -> None:
    """Print the Markdown summary of one benchmark CSV."""
    path, note = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    rows = list(csv.DictReader(open(path)))
    out = ["# sdnbench-ofload vs cbench", "", f"Source: `{path}`. {note}", "",
           "| controller | mode | tool | OpenFlow | switches | threads | responses/s mean | sd | p50 µs | p99 µs | gen. cores | gen. CPU ns/response | valid | vs cbench |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {(r["controller"], r["mode"]): r for r in rows if r["tool"] == "cbench" and r["mean_rps"]}
    for r in rows:
        ratio = ""
        b = base.get((r["controller"], r["mode"]))
        if b and r["tool"] != "cbench" and r["mean_rps"] and float(b["mean_rps"]) > 0:
            ratio = f"{float(r['mean_rps']) / float(b['mean_rps']):.2f}×"
        mean = f"{float(r['mean_rps']):,.0f}" if r["mean_rps"] else "–"
        sd = f"{float(r['sd_rps']):,.0f}" if r["sd_rps"] else "–"
        out.append(f"| {r['controller']} | {r['mode']} | {r['tool']} | {r['openflow']} | {r['switches']} | {r['threads']} | "
                   f"{mean} | {sd} | {r['latency_p50_us'] or '–'} | {r['latency_p99_us'] or '–'} | {r['generator_cores'] or '–'} | "
                   f"{r['cpu_ns_per_response'] or '–'} | {r['valid']} | {ratio} |")
    out += ["", "cbench counts FLOW_MOD/PACKET_OUT messages; sdnbench-ofload's responses/s counts the same messages "
            "(and matches each to its PACKET_IN; unmatched answers are in the CSV). "
            "gen. CPU ns/response = generator CPU time per answer: cbench's over its whole run (/usr/bin/time), "
            "sdnbench-ofload's over the measured loops (getrusage); it compares the tools' efficiency when the "
            "machine's cores are shared with the controller and other load."]
    print("\n".join(out))


if __name__ == "__main__":
    main()
