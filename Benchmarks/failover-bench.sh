#!/usr/bin/env bash
# Failover benchmark: two folio-edge origins serving PUBLIC_DIR and a cache in front of both;
# wrk sends cache misses through it (one object, a query of its own on every request, so each
# reaches an origin), and halfway through the primary origin is killed (SIGKILL). Run for
# folio-edge (--origin A --origin B, health checks every second), then for nginx as the
# reference (an upstream with B as `backup`, proxy_next_upstream error timeout http_502
# http_503 http_504, proxy_cache), each with fresh origins. Reports the requests, non-2xx
# answers and socket errors (folio-edge's must be 0), the p99 latency, and which origin
# answered how many of folio-edge's.
# Usage: Benchmarks/failover-bench.sh PUBLIC_DIR EDGE_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup failover-bench "$@"

wait_listening() { # file -> port
    for _ in $(seq 1 100); do grep -q "^listening on" "$1" 2>/dev/null && break; sleep 0.1; done
    sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$1"
}

start_origins() { # label: two folio-edge origins on PUBLIC_DIR; sets primary_pid, primary_port, backup_port
    "$edge" --root "$root" --port 0 --threads 1 --no-access-log > "$work/$1-primary.out" 2>&1 &
    primary_pid=$!
    pids+=($!)
    "$edge" --root "$root" --port 0 --threads 1 --no-access-log > "$work/$1-backup.out" 2>&1 &
    pids+=($!)
    primary_port=$(wait_listening "$work/$1-primary.out")
    backup_port=$(wait_listening "$work/$1-backup.out")
}

start_folio() { # -> cache_port
    "${server_cpu[@]}" "$edge" --origin "http://127.0.0.1:$primary_port" --origin "http://127.0.0.1:$backup_port" \
        --port 0 --threads 1 --no-access-log > "$work/tier.out" 2> "$work/tier.err" &
    pids+=($!)
    cache_port=$(wait_listening "$work/tier.out")
}

start_nginx() { # -> cache_port
    cache_port=$(free_port)
    { nginx_main_conf "$work"; echo "http {"; nginx_proxy_cache_http "$work"; cat <<CONF; } > "$work/nginx.conf"
    upstream origins {
        server 127.0.0.1:$primary_port max_fails=1 fail_timeout=10s;
        server 127.0.0.1:$backup_port backup;
        keepalive 16;
    }
    server {
        listen 127.0.0.1:$cache_port;
        location / {
            proxy_pass http://origins;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream error timeout http_502 http_503 http_504;
            proxy_cache folio;
        }
    }
}
CONF
    "${server_cpu[@]}" nginx -c "$work/nginx.conf" -p "$work" &
    pids+=($!)
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$cache_port/manifest.plist" && break; sleep 0.1; done
}

# One uncompressed object (requests carry no Accept-Encoding), a new query each time.
for f in "$root"/objects/*; do
    case $f in *.gz | *.br) ;; *) object=objects/${f##*/} && break ;; esac
done
cat > "$work/miss.lua" <<LUA
local n = 0
request = function()
    n = n + 1
    return wrk.format("GET", "/$object?miss=" .. n)
end
LUA
half=$(python3 -c "import re,sys; d=sys.argv[1]; v=float(re.sub('[a-z]+$','',d)); print(v*60/2 if d.endswith('m') else v/2)" "$duration")

failed=0
scenario() { # name start_function
    start_origins "$1"
    "$2"
    (sleep "$half"; kill -9 "$primary_pid") &
    local out requests non2xx socket p99 rps
    out=$("${client_cpu[@]}" wrk -t1 -c"$conns" -d"$duration" --latency -s "$work/miss.lua" "http://127.0.0.1:$cache_port/")
    { wait "$primary_pid"; } 2>/dev/null || true
    requests=$(echo "$out" | awk '/requests in/ {print $1}')
    non2xx=$(echo "$out" | awk '/Non-2xx or 3xx responses/ {print $NF}')
    socket=$(echo "$out" | awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8 + $10}')
    p99=$(echo "$out" | awk '$1=="99%" {print $2}')
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    printf "%-12s %9s %10s %8s %14s %8s\n" "$1" "$requests" "$rps" "${non2xx:-0}" "${socket:-0}" "$p99"
    if [ "$1" = folio-edge ] && { [ "${non2xx:-0}" != 0 ] || [ "${socket:-0}" != 0 ]; }; then
        echo "$out" >&2
        failed=1
    fi
}

echo "wrk -t1 -c$conns -d$duration, every request a miss; the primary origin killed at ${half}s${server_cpu:+; caches on core 0, wrk on core 1}"
printf "%-12s %9s %10s %8s %14s %8s\n" cache requests "req/s" non-2xx "socket errors" p99
scenario folio-edge start_folio
metrics=$(curl -s "http://127.0.0.1:$cache_port/.folio/metrics")
count() { echo "$metrics" | awk -v s="folio_edge_origin_requests_total{origin=\"127.0.0.1:$1\"}" '$1==s {print $2}'; }
folio_primary=$(count "$primary_port") folio_backup=$(count "$backup_port")
scenario nginx start_nginx
echo "folio-edge's origin requests: primary $folio_primary, backup $folio_backup"
[ "$failed" = 0 ] || { echo "failover: FAILED: client requests through folio-edge failed" >&2; exit 1; }
