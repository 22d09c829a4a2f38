#!/usr/bin/env bash
# Compare sdnbench-apiload with wrk2 (or wrk) and vegeta against one nginx
# serving a small static file on a loopback port, in one run.
#
# For each tool and each target rate: the rate of successful responses and
# the median latency from the intended send time. A tool "holds" a rate when
# its successful responses reach 99% of the target and errors (failed,
# dropped or unsent requests) stay under 1% of the requests. sdnbench-apiload
# opens as many connections before its clock starts as wrk2 keeps
# (--preconnect = CONNECTIONS). Results: CSV + Markdown
# under benchmarks/apiload/results/.
#
# Peers (each skipped with a message when absent):
#   WRK2=/path/to/wrk2   (wrk2, constant-rate fork of wrk; build it outside the repo)
#   VEGETA=/path/to/vegeta  (default: vegeta on PATH)
#   wrk from Debian (apt-get install wrk): closed-loop reference, its own maximum rate
# A second pass asks for /delay, which nginx's echo module answers after a
# known DELAY_MS (non-blocking echo_sleep): its true median is DELAY_MS plus
# loopback time, so the tools' medians can be compared with ground truth
# rather than only with one another (wrk2 documents a ±1 ms granularity,
# which dominates a sub-millisecond static-file median).
# Settings: RATES="1000 5000 …" (rps), DURATION=20 (s), CONNECTIONS=50,
#   DELAY_MS=5, DELAY_RATES="1000 2000", NGINX=nginx,
#   QUANTUM=1ms: also run sdnbench-apiload with --pacing-quantum QUANTUM (one
#   wake-up per quantum, as coarse as wrk2's timers; "" to skip)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
RESULTS="$HERE/results"
RATES="${RATES:-1000 5000 10000 20000 30000}"
DURATION="${DURATION:-20}"
CONNECTIONS="${CONNECTIONS:-50}"
NGINX="${NGINX:-nginx}"
DELAY_MS="${DELAY_MS:-5}"
DELAY_RATES="${DELAY_RATES:-1000 2000}"
QUANTUM="${QUANTUM-1ms}"
ECHO_MODULE="${ECHO_MODULE:-/usr/lib/nginx/modules/ngx_http_echo_module.so}"
APILOAD="${APILOAD:-$REPO/target/release/sdnbench-apiload}"
WRK2="${WRK2:-}"
VEGETA="${VEGETA:-$(command -v vegeta || true)}"
WRK="${WRK:-$(command -v wrk || true)}"

mkdir -p "$RESULTS"
RAW="$RESULTS/raw"
rm -rf "$RAW" && mkdir -p "$RAW"
WORK="$(mktemp -d /tmp/sbap-bench.XXXXXX)"
NGINX_PID=""
cleanup() {
    if [[ -n "$NGINX_PID" ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

command -v "$NGINX" >/dev/null || { echo "nginx not found (apt-get install nginx-light)"; exit 2; }
if [[ ! -x "$APILOAD" ]]; then
    echo "building sdnbench-apiload"
    (cd "$REPO" && cargo build --release -p sdnbench-apiload)
fi

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
mkdir -p "$WORK/www" "$WORK/logs"
printf '{"dpid": 1, "ports": [1, 2, 3], "status": "ok"}\n' > "$WORK/www/switches.json"
DELAY_CONF=""
LOAD_ECHO=""
if [[ -f "$ECHO_MODULE" ]]; then
    LOAD_ECHO="load_module $ECHO_MODULE;"
    DELAY_CONF="location = /delay { default_type application/json; echo_sleep $(python3 -c "print($DELAY_MS/1000)"); echo '{\"ok\": true}'; }"
else
    echo "delay pass skipped: nginx echo module not found at $ECHO_MODULE (apt-get install libnginx-mod-http-echo)"
fi
cat > "$WORK/nginx.conf" <<CONF
$LOAD_ECHO
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log warn;
events { worker_connections 8192; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $WORK/tmp-body;
    proxy_temp_path $WORK/tmp-proxy;
    fastcgi_temp_path $WORK/tmp-fcgi;
    uwsgi_temp_path $WORK/tmp-uwsgi;
    scgi_temp_path $WORK/tmp-scgi;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
        $DELAY_CONF
    }
}
CONF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" &
NGINX_PID=$!
for _ in $(seq 50); do
    curl -fs "http://127.0.0.1:$PORT/switches.json" >/dev/null 2>&1 && break
    sleep 0.1
done
URL="http://127.0.0.1:$PORT/switches.json"
echo "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') pid $NGINX_PID on $URL; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rates: $RATES rps, $DURATION s each, $CONNECTIONS connections for wrk/wrk2"

# run_all PATH RATE TAG: every available tool at RATE against PATH; raw files named TOOL-TAG.
run_all() {
    local path="$1" rate="$2" tag="$3"
    echo "== $path at $rate rps"
    "$APILOAD" --url "http://127.0.0.1:$PORT" --request "GET $path" \
        --rate "${rate}rps" --duration "${DURATION}s" --min-achieved 0 --preconnect "$CONNECTIONS" \
        > "$RAW/apiload-$tag.jsonl" 2> "$RAW/apiload-$tag.err" || true
    if [[ -n "$QUANTUM" ]]; then
        "$APILOAD" --url "http://127.0.0.1:$PORT" --request "GET $path" --pacing-quantum "$QUANTUM" \
            --rate "${rate}rps" --duration "${DURATION}s" --min-achieved 0 --preconnect "$CONNECTIONS" \
            > "$RAW/apiload_q$QUANTUM-$tag.jsonl" 2> "$RAW/apiload_q$QUANTUM-$tag.err" || true
    fi
    if [[ -n "$WRK2" && -x "$WRK2" ]]; then
        "$WRK2" -t2 -c"$CONNECTIONS" -d"${DURATION}s" -R"$rate" --latency "http://127.0.0.1:$PORT$path" \
            > "$RAW/wrk2-$tag.txt" 2>&1 || true
    fi
    if [[ -n "$VEGETA" && -x "$VEGETA" ]]; then
        echo "GET http://127.0.0.1:$PORT$path" | "$VEGETA" attack -rate="${rate}/s" -duration="${DURATION}s" -max-workers=200 \
            | "$VEGETA" report -type=json > "$RAW/vegeta-$tag.json" 2> "$RAW/vegeta-$tag.err" || true
    fi
}
for rate in $RATES; do
    run_all /switches.json "$rate" "$rate"
done
if [[ -n "$DELAY_CONF" ]]; then
    for rate in $DELAY_RATES; do
        run_all /delay "$rate" "delay$DELAY_MS-$rate"
    done
fi
[[ -n "$WRK2" && -x "$WRK2" ]] || echo "wrk2 skipped: set WRK2=/path/to/wrk2 (a build of giltene/wrk2)"
[[ -n "$VEGETA" && -x "$VEGETA" ]] || echo "vegeta skipped: set VEGETA=/path/to/vegeta (go install github.com/tsenart/vegeta/v12)"
if [[ -n "$WRK" && -x "$WRK" ]]; then
    echo "== wrk (closed loop, its own maximum)"
    "$WRK" -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$URL" > "$RAW/wrk-max.txt" 2>&1 || true
else
    echo "wrk skipped: apt-get install wrk"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$HERE/report.py" "$RAW" "$RESULTS" "$DURATION" "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" "$DELAY_MS"
