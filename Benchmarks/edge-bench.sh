#!/usr/bin/env bash
# Edge benchmark: wrk against folio-edge and nginx (one worker, gzip_static, etag,
# open_file_cache, no access log) serving the same published directory, same settings.
# Usage: Benchmarks/edge-bench.sh PUBLIC_DIR EDGE_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup edge-bench "$@"
threads=${EDGE_THREADS:-1}

nginx_port=$(free_port)
mkdir -p "$work/nginx"
{ nginx_main_conf "$work"; cat <<CONF; } > "$work/nginx.conf"
http {
$(nginx_static_http "$work")
    server {
        listen 127.0.0.1:$nginx_port;
        root $root;
        location /objects/ { add_header Cache-Control "public, max-age=31536000, immutable"; }
        location = /manifest.plist { add_header Cache-Control "public, max-age=60, stale-while-revalidate=300"; }
    }
}
CONF
"${server_cpu[@]}" nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)

"${server_cpu[@]}" "$edge" --root "$root" --port 0 --threads "$threads" --no-access-log > "$work/edge.out" 2> "$work/edge.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.out" 2>/dev/null && break; sleep 0.1; done
edge_port=$(sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$work/edge.out")
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$nginx_port/manifest.plist" && break; sleep 0.1; done

sha=$(python3 -c "import plistlib; m=plistlib.load(open('$root/manifest.plist','rb')); print(next(e['sha256'] for e in m['entries'] if e['path']=='sonnets/018.plist'))")
obj="/objects/$sha.plist"
etag_of() { curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "$1" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }

echo "wrk -t1 -c$conns -d$duration, folio-edge --threads $threads vs nginx (1 worker), same files${server_cpu:+; servers on core 0, wrk on core 1}"
echo "each scenario: $rounds rounds, alternating which server goes first; medians, then each round's req/s and p99 ratios"
printf "%-26s %12s %10s %12s %10s %8s %8s  %s\n" scenario "edge req/s" "edge p99" "nginx req/s" "nginx p99" "req/s x" "p99 x" "per round (req/s x, p99 x)"
scenario() { # label path [mode]: gzip, or inm (If-None-Match with each server's own ETag)
    local label=$1 path=$2 mode=${3:-}
    local eh=() nh=()
    case $mode in
        gzip) eh=("Accept-Encoding: gzip"); nh=("Accept-Encoding: gzip") ;;
        inm) eh=("Accept-Encoding: gzip" "If-None-Match: $(etag_of "http://127.0.0.1:$edge_port$path")")
             nh=("Accept-Encoding: gzip" "If-None-Match: $(etag_of "http://127.0.0.1:$nginx_port$path")") ;;
    esac
    # One second of the same load first, discarded, so neither server is measured cold.
    WARM=1 run edge "$edge_port" "$path" "${eh[@]}" > /dev/null
    WARM=1 run nginx "$nginx_port" "$path" "${nh[@]}" > /dev/null
    # Rounds alternate the order, so a drift over the run or a cost to going second (the VM's
    # stalls come and go over tens of seconds) does not fall on one server.
    local results=() r erps ep99 nrps np99
    for r in $(seq 1 "$rounds"); do
        if (( r % 2 )); then
            read -r _ erps ep99 < <(run edge "$edge_port" "$path" "${eh[@]}")
            read -r _ nrps np99 < <(run nginx "$nginx_port" "$path" "${nh[@]}")
        else
            read -r _ nrps np99 < <(run nginx "$nginx_port" "$path" "${nh[@]}")
            read -r _ erps ep99 < <(run edge "$edge_port" "$path" "${eh[@]}")
        fi
        results+=("$erps" "$(to_ms "$ep99")" "$nrps" "$(to_ms "$np99")")
    done
    python3 - "$label" "${results[@]}" <<'PY'
import statistics, sys
label, v = sys.argv[1], [float(x) for x in sys.argv[2:]]
rounds = [v[i:i + 4] for i in range(0, len(v), 4)]
med = lambda k: statistics.median(r[k] for r in rounds)
erps, ep, nrps, nm = med(0), med(1), med(2), med(3)
each = " ".join(f"{r[0] / r[2]:.2f}/{r[1] / r[3]:.2f}" for r in rounds)
print(f"{label:<26} {erps:>12.0f} {ep:>8.2f}ms {nrps:>12.0f} {nm:>8.2f}ms {erps/nrps:>7.2f}x {ep/nm:>7.2f}x  {each}")
PY
}
scenario "(a) 200 gzip object" "$obj" gzip
scenario "(b) 304 If-None-Match" "$obj" inm
scenario "(c) 200 manifest.plist" "/manifest.plist"
