#!/usr/bin/env bash
# HTTP/2 only, the edge against nginx (one worker, ssl http2, gzip_static) and Caddy: h2load
# -c64 -m10 on the 1 KB gzip object and on a 304 (If-None-Match with each server's own ETag),
# servers on core 0 and h2load on core 1. Besides h2load's requests per second, each row has
# the server's CPU time per request (user + system, read from /proc before and after each
# run), which another process on the same cores changes far less than the wall-clock rate.
# Usage: Benchmarks/h2-bench.sh PUBLIC_DIR EDGE_BINARY [EDGE_ARGS...]
# (H2_SERVERS="edge nginx" leaves Caddy out.)
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup h2-bench "$1" "$2"
shift 2
edge_args=("$@")
servers=(${H2_SERVERS:-edge nginx caddy})

bench_certificate "$work"
nginx_port=$(free_port)
mkdir -p "$work/nginx"
{ nginx_main_conf "$work"; cat <<CONF; } > "$work/nginx.conf"
http {
$(nginx_static_http "$work")
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:10m;
    server {
        listen 127.0.0.1:$nginx_port ssl http2;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        root $root;
        location /objects/ { add_header Cache-Control "public, max-age=31536000, immutable"; }
    }
}
CONF
"${server_cpu[@]}" nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)
nginx_master=$!

caddy_port=$(free_port)
if [[ " ${servers[*]} " == *" caddy "* ]]; then
    cat > "$work/Caddyfile" <<CONF
{
    admin off
    auto_https disable_redirects
    skip_install_trust
    storage file_system $work/caddy
}
https://127.0.0.1:$caddy_port {
    tls $work/cert.pem $work/key.pem
    root * $root
    file_server {
        precompressed gzip
    }
}
CONF
    XDG_DATA_HOME=$work XDG_CONFIG_HOME=$work GOMAXPROCS=1 "${server_cpu[@]}" caddy run --config "$work/Caddyfile" --adapter caddyfile \
        > "$work/caddy.log" 2>&1 &
    pids+=($!)
    caddy_pid=$!
fi

"${server_cpu[@]}" "$edge" --root "$root" --port 0 --threads 1 --no-access-log --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
    "${edge_args[@]}" > "$work/edge.out" 2> "$work/edge.err" &
pids+=($!)
edge_pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.out" 2>/dev/null && break; sleep 0.1; done
edge_port=$(sed -n 's/^listening on https:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$work/edge.out")
[ -n "$edge_port" ] || { echo "h2-bench: folio-edge did not start: $(cat "$work/edge.err")" >&2; exit 1; }
for _ in $(seq 1 50); do [ -n "$(pgrep -P "$nginx_master" || true)" ] && break; sleep 0.1; done
nginx_pid=$(pgrep -P "$nginx_master" | head -1)

sha=$(python3 -c "import plistlib; m=plistlib.load(open('$root/manifest.plist','rb')); print(next(e['sha256'] for e in m['entries'] if e['path']=='sonnets/018.plist'))")
obj="/objects/$sha.plist"
for name in "${servers[@]}"; do
    port=${name}_port; port=${!port}
    for _ in $(seq 1 50); do curl -s --cacert "$work/ca.pem" -o /dev/null "https://127.0.0.1:$port/manifest.plist" && break; sleep 0.1; done
    code=$(curl -s --http2 --cacert "$work/ca.pem" -H "Accept-Encoding: gzip" -o "$work/got" -w '%{http_code} %{http_version}' "https://127.0.0.1:$port$obj")
    if [ "$code" != "200 2" ] || ! cmp -s "$work/got" "$root$obj.gz"; then
        echo "h2-bench: $name answered $code for $obj, not the bytes of $root$obj.gz" >&2; exit 1
    fi
done
echo "h2load -c$conns -m10 -D${duration%s} (HTTP/2 over TLS), servers on one core${server_cpu:+ (core 0, h2load on core 1)}; $rounds rounds"
echo "us/req: the server's user+system CPU time per request over the whole run (its warm-up second included)"
h2_scenario "(d) 200 gzip object" "$obj" gzip
h2_scenario "(e) 304 If-None-Match" "$obj" inm
