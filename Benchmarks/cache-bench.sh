#!/usr/bin/env bash
# Cache-tier benchmark: wrk against three caches in front of the same origin (a folio-edge
# serving PUBLIC_DIR), each answering hits: folio-edge --origin, nginx (proxy_cache, one
# worker) and Varnish (malloc storage, one thread pool). Each cache runs on core 0, wrk on core
# 1; the origin is asked once per URL and then idles.
# Usage: Benchmarks/cache-bench.sh PUBLIC_DIR EDGE_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup cache-bench "$@"
command -v varnishd > /dev/null || { echo "cache-bench: varnishd not found (Debian package varnish; make bench-deps)" >&2; exit 2; }

wait_listening() { # file -> port
    for _ in $(seq 1 100); do grep -q "^listening on" "$1" 2>/dev/null && break; sleep 0.1; done
    sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$1"
}

"$edge" --root "$root" --port 0 --threads 1 --no-access-log > "$work/origin.out" 2> "$work/origin.err" &
pids+=($!)
origin_port=$(wait_listening "$work/origin.out")

"${server_cpu[@]}" "$edge" --origin "http://127.0.0.1:$origin_port" --port 0 --threads 1 --no-access-log > "$work/tier.out" 2> "$work/tier.err" &
pids+=($!)
tier_port=$(wait_listening "$work/tier.out")

nginx_port=$(free_port)
{ nginx_main_conf "$work"; echo "http {"; nginx_proxy_cache_http "$work"; cat <<CONF; } > "$work/nginx.conf"
    upstream origin { server 127.0.0.1:$origin_port; keepalive 16; }
    server {
        listen 127.0.0.1:$nginx_port;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache folio;
            add_header Cache-Status \$upstream_cache_status;
        }
    }
}
CONF
"${server_cpu[@]}" nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)

varnish_port=$(free_port)
cat > "$work/default.vcl" <<VCL
vcl 4.1;
backend origin { .host = "127.0.0.1"; .port = "$origin_port"; }
VCL
"${server_cpu[@]}" varnishd -F -j none -n "$work/varnish" -a "127.0.0.1:$varnish_port" -f "$work/default.vcl" \
    -s malloc,256m -p thread_pools=1 -p thread_pool_min=64 > "$work/varnish.log" 2>&1 &
pids+=($!)
for port in "$nginx_port" "$varnish_port"; do
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/manifest.plist" && break; sleep 0.1; done
done

sha=$(python3 -c "import plistlib; m=plistlib.load(open('$root/manifest.plist','rb')); print(next(e['sha256'] for e in m['entries'] if e['path']=='sonnets/018.plist'))")
obj="/objects/$sha.plist"
etag_of() { curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "$1" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }

echo "wrk -t1 -c$conns -d$duration; folio-edge --origin --threads 1, nginx proxy_cache (1 worker), Varnish (1 thread pool)${server_cpu:+; caches on core 0, wrk on core 1}"
echo "each scenario: $rounds rounds, the order rotating; medians, then folio-edge's req/s over each other's"
printf "%-24s %12s %9s %12s %9s %12s %9s %9s %9s\n" scenario "folio req/s" "p99" "nginx req/s" "p99" "varnish r/s" "p99" "vs nginx" "vs varnish"
scenario() { # label path [mode]: gzip, or inm (If-None-Match)
    local label=$1 path=$2 mode=${3:-}
    local h=()
    case $mode in
        gzip) h=("Accept-Encoding: gzip") ;;
        inm) h=("Accept-Encoding: gzip" "If-None-Match: $(etag_of "http://127.0.0.1:$origin_port$path")") ;;
    esac
    local names=(folio nginx varnish) ports=("$tier_port" "$nginx_port" "$varnish_port")
    # Fill each cache, then one second of the same load, discarded.
    for i in 0 1 2; do
        curl -s -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:${ports[$i]}$path"
        WARM=1 run "${names[$i]}" "${ports[$i]}" "$path" "${h[@]}" > /dev/null
    done
    local results=() r k i rps p99 non2xx
    declare -A got
    for r in $(seq 1 "$rounds"); do
        for k in 0 1 2; do
            i=$(( (k + r) % 3 ))
            read -r _ rps p99 < <(run "${names[$i]}" "${ports[$i]}" "$path" "${h[@]}")
            [ -n "$rps" ] && [ -n "$p99" ] || { echo "cache-bench: wrk measured nothing for ${names[$i]} on $label" >&2; exit 1; }
            got[$i]="$rps $(to_ms "$p99")"
        done
        results+=(${got[0]} ${got[1]} ${got[2]})
    done
    python3 - "$label" "${results[@]}" <<'PY'
import statistics, sys
label, v = sys.argv[1], [float(x) for x in sys.argv[2:]]
rounds = [v[i:i + 6] for i in range(0, len(v), 6)]
med = lambda k: statistics.median(r[k] for r in rounds)
f, fp, n, np_, w, wp = (med(k) for k in range(6))
print(f"{label:<24} {f:>12.0f} {fp:>7.2f}ms {n:>12.0f} {np_:>7.2f}ms {w:>12.0f} {wp:>7.2f}ms {f/n:>8.2f}x {f/w:>8.2f}x")
PY
}
# Each cache must answer from its cache, or this measures the origin (or its errors).
for port in "$tier_port" "$nginx_port" "$varnish_port"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port$obj")
    [ "$code" = 200 ] || { echo "cache-bench: the cache on port $port answered $code" >&2; exit 1; }
done
for port in "$tier_port" "$nginx_port" "$varnish_port"; do
    curl -s -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port$obj"
done
echo "cache status after one request: folio '$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$tier_port$obj" | tr -d '\r' | sed -n 's/^[Cc]ache-[Ss]tatus: //p')'," \
     "nginx '$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$nginx_port$obj" | tr -d '\r' | sed -n 's/^[Cc]ache-[Ss]tatus: //p')'," \
     "varnish hits '$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$varnish_port$obj" | tr -d '\r' | sed -n 's/^[Xx]-[Vv]arnish: //p')'"
scenario "(a) hit: gzip object" "$obj" gzip
scenario "(b) hit: 304" "$obj" inm
scenario "(c) hit: manifest.plist" "/manifest.plist"
