#!/usr/bin/env bash
# Side-by-side southbound benchmark: sdnbench-ofload vs cbench against the same
# controllers (the minimal fast responder and ovs-testcontroller), OpenFlow 1.0,
# same switch and MAC counts; plus sdnbench-ofload under OpenFlow 1.3.
#
#   CBENCH=/path/to/cbench benchmarks/ofload/run.sh
#
# Environment (all optional):
#   CBENCH          cbench binary (built from an oflops checkout); skipped when unset
#   LOOPS=6 MS=1000 WARMUP=1 MACS=1000    cbench-style -l -m -w -M
#   SWITCHES_RESPONDER=16 SWITCHES_TESTCONTROLLER=8   (ovs-testcontroller's
#                   handshake with cbench times out at 16 switches)
#   OFLOAD_THREADS="1 2"   generator worker-thread counts to run
#   MODES="throughput latency"
#   REPS=2          repetitions; the tools alternate within each repetition so
#                   that drifting background load affects them alike
# Writes benchmarks/ofload/results/ofload-<time>.csv and .md (and the raw outputs).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${SDNBENCH_BIN_DIR:-$ROOT/target/release}"
OFLOAD="$BIN/sdnbench-ofload"
RESPONDER="$BIN/ofload-responder"
LOOPS="${LOOPS:-6}" MS="${MS:-1000}" WARMUP="${WARMUP:-1}" MACS="${MACS:-1000}"
SW_RESPONDER="${SWITCHES_RESPONDER:-16}" SW_TESTCTL="${SWITCHES_TESTCONTROLLER:-8}"
THREADS="${OFLOAD_THREADS:-1 2}" MODES="${MODES:-throughput latency}" REPS="${REPS:-2}"

for b in "$OFLOAD" "$RESPONDER"; do
  [[ -x "$b" ]] || { echo "missing $b: cargo build --release -p sdnbench-ofload -p ofload-responder" >&2; exit 2; }
done
if [[ -n "${CBENCH:-}" && -x "${CBENCH}" ]]; then
  echo "cbench: $CBENCH"
else
  echo "cbench: not given (set CBENCH=/path/to/cbench to compare with it); running sdnbench-ofload only"
  CBENCH=""
fi

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="$HERE/results"
RAW="$OUT/raw-$STAMP"
mkdir -p "$RAW"
CSV="$OUT/ofload-$STAMP.csv"
echo "rep,controller,mode,tool,openflow,switches,macs,loops,warmup,ms_per_loop,threads,mean_rps,sd_rps,min_rps,max_rps,latency_p50_us,latency_p99_us,generator_cores,cpu_ns_per_response,valid,unmatched,raw" > "$CSV"

CTL_PID=""
stop_controller() {
  if [[ -n "$CTL_PID" ]]; then
    kill "$CTL_PID" 2>/dev/null || true
    wait "$CTL_PID" 2>/dev/null || true
    CTL_PID=""
  fi
}
trap stop_controller EXIT INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_controller NAME PORT: starts a fresh controller (no learned state) and waits for it to listen.
start_controller() {
  local name="$1" port="$2"
  case "$name" in
    responder) "$RESPONDER" -p "$port" >"$RAW/$name-$port.log" 2>&1 & ;;
    ovs-testcontroller) ovs-testcontroller "ptcp:$port:127.0.0.1" >"$RAW/$name-$port.log" 2>&1 & ;;
  esac
  CTL_PID=$!
  for _ in $(seq 100); do
    python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$port)))" && return 0
    sleep 0.1
  done
  echo "$name did not listen on $port" >&2
  return 1
}

row() { echo "$*" >> "$CSV"; }

run_cbench() {  # rep controller mode switches
  local rep="$1" ctl="$2" mode="$3" sw="$4" port raw flag="" try
  [[ "$mode" == throughput ]] && flag="-t"
  raw="$RAW/cbench-$ctl-$mode-rep$rep.txt"
  # cbench now and then hangs in its handshake; one retry, then "no result".
  for try in 1 2; do
    port="$(free_port)"; start_controller "$ctl" "$port"
    # cbench reports no CPU use; /usr/bin/time measures it over the whole run.
    /usr/bin/time -f "%U %S %e" -o "$raw.time" timeout $(( LOOPS * MS / 1000 + 20 )) "$CBENCH" -c 127.0.0.1 -p "$port" -s "$sw" -M "$MACS" -l "$LOOPS" -m "$MS" -w "$WARMUP" $flag >"$raw" 2>&1 || true
    stop_controller
    grep -q "^RESULT" "$raw" && break
    echo "cbench gave no result ($ctl, $mode), try $try" >&2
  done
  python3 - "$raw" "$ctl" "$mode" "$sw" "$rep" >> "$CSV" <<PY
import re, sys
raw, ctl, mode, sw, rep = sys.argv[1:]
m = re.search(r"min/max/avg/stdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+)", open(raw, errors="replace").read())
mn, mx, avg, sd = m.groups() if m else ("", "", "", "")
cores = ns = ""
try:
    u, s_, wall = (float(x) for x in open(raw + ".time").read().split()[-3:])
    cores = f"{(u + s_) / wall:.2f}"
    ns = f"{(u + s_) / wall * 1e9 / float(avg):.0f}" if avg and float(avg) > 0 else ""
except (OSError, ValueError):
    pass
print(f"{rep},{ctl},{mode},cbench,1.0,{sw},$MACS,$LOOPS,$WARMUP,$MS,1,{avg},{sd},{mn},{mx},,,{cores},{ns},{'yes' if m else 'no result'},,{raw}")
PY
}

run_ofload() {  # rep controller mode switches version threads
  local rep="$1" ctl="$2" mode="$3" sw="$4" ver="$5" thr="$6" port raw flag=""
  [[ "$mode" == throughput ]] && flag="-t"
  port="$(free_port)"; start_controller "$ctl" "$port"
  raw="$RAW/ofload-$ctl-$mode-of$ver-T$thr-rep$rep.jsonl"
  "$OFLOAD" -c 127.0.0.1 -p "$port" -V "$ver" -s "$sw" -M "$MACS" -l "$LOOPS" -m "$MS" -w "$WARMUP" -T "$thr" $flag >"$raw" 2>"$raw.err" || true
  stop_controller
  python3 - "$raw" "$ctl" "$mode" "$sw" "$ver" "$thr" "$rep" >> "$CSV" <<'PY'
import json, sys
raw, ctl, mode, sw, ver, thr, rep = sys.argv[1:]
s = None
for line in open(raw):
    rec = json.loads(line)
    if rec["type"] == "summary":
        s = rec["data"]
if s is None:
    print(f"{rep},{ctl},{mode},sdnbench-ofload,{ver},{sw},,,,,{thr},,,,,,,,,error,,{raw}")
    sys.exit()
r, lat = s["responses_per_s"], s["latency_us"] or {}
f = lambda v: "" if v is None else f"{v:.1f}"
print(",".join([rep, ctl, mode, "sdnbench-ofload", ver, sw, str(s["macs_per_switch"]), str(s["loops"]), str(s["warmup_loops"]),
                str(s["ms_per_loop"]), thr, f(r["mean"]), f(r["sd"]), f(r["min"]), f(r["max"]), f(lat.get("p50")), f(lat.get("p99")),
                f"{s['generator_cpu']['cores_used']:.2f}",
                f"{s['generator_cpu']['cores_used'] * 1e9 / r['mean']:.0f}" if r["mean"] else "",
                "yes" if s["valid"] else "no: " + "; ".join(s["invalid_reasons"]).replace(",", ";"),
                str(s["totals"]["unmatched"]), raw]))
PY
}

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for ctl in responder ovs-testcontroller; do
  sw="$SW_RESPONDER"; [[ "$ctl" == ovs-testcontroller ]] && sw="$SW_TESTCTL"
  if [[ "$ctl" == ovs-testcontroller ]] && ! command -v ovs-testcontroller >/dev/null; then
    echo "ovs-testcontroller missing (apt-get install openvswitch-testcontroller): skipped"; continue
  fi
  for mode in $MODES; do
    for rep in $(seq "$REPS"); do
      echo "== $ctl, $mode, $sw switches, repetition $rep"
      if [[ -n "$CBENCH" ]]; then run_cbench "$rep" "$ctl" "$mode" "$sw"; fi
      for thr in $THREADS; do
        run_ofload "$rep" "$ctl" "$mode" "$sw" 1.0 "$thr"
        run_ofload "$rep" "$ctl" "$mode" "$sw" 1.3 "$thr"
      done
    done
  done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

python3 "$HERE/summarize.py" "$CSV" "load average before: $LOAD_BEFORE, after: $LOAD_AFTER; $(nproc) CPUs" > "${CSV%.csv}.md"
cat "${CSV%.csv}.md"
echo "results: $CSV ${CSV%.csv}.md"
