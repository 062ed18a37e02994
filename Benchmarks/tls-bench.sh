#!/usr/bin/env bash
# HTTPS benchmark: wrk over TLS (HTTP/1.1) and h2load (HTTP/2) against folio-edge, nginx (one
# worker, ssl http2, gzip_static, etag) and Caddy (file_server, precompressed gzip), all with the
# same certificate (P-256, made here by openssl) and the same published directory. Before timing,
# each server must answer the manifest and a gzip object with 200 and the bytes on disk, over
# HTTP/2 too.
# Usage: Benchmarks/tls-bench.sh PUBLIC_DIR EDGE_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup tls-bench "$@"
scheme=https

bench_certificate "$work"
ciphers="ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

nginx_port=$(free_port)
mkdir -p "$work/nginx"
{ nginx_main_conf "$work"; cat <<CONF; } > "$work/nginx.conf"
http {
$(nginx_static_http "$work")
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers $ciphers;
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

caddy_port=$(free_port)
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

"${server_cpu[@]}" "$edge" --root "$root" --port 0 --threads 1 --no-access-log --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
    > "$work/edge.out" 2> "$work/edge.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.out" 2>/dev/null && break; sleep 0.1; done
edge_port=$(sed -n 's/^listening on https:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$work/edge.out")
[ -n "$edge_port" ] || { echo "tls-bench: folio-edge did not start: $(cat "$work/edge.err")" >&2; exit 1; }

sha=$(python3 -c "import plistlib; m=plistlib.load(open('$root/manifest.plist','rb')); print(next(e['sha256'] for e in m['entries'] if e['path']=='sonnets/018.plist'))")
obj="/objects/$sha.plist"
# The same work: each server answers 200 with the bytes on disk, the object gzipped.
for port in "$edge_port" "$nginx_port" "$caddy_port"; do
    for _ in $(seq 1 50); do curl -s --cacert "$work/ca.pem" -o /dev/null "https://127.0.0.1:$port/manifest.plist" && break; sleep 0.1; done
    for check in "/manifest.plist|$root/manifest.plist|" "$obj|$root$obj.gz|gzip"; do
        IFS='|' read -r path file enc <<< "$check"
        for version in --http1.1 --http2; do
            code=$(curl -s $version --cacert "$work/ca.pem" ${enc:+-H "Accept-Encoding: $enc"} -o "$work/got" -w '%{http_code} %{http_version}' "https://127.0.0.1:$port$path")
            if [ "$code" != "200 ${version#--http}" ] || ! cmp -s "$work/got" "$file"; then
                echo "tls-bench: port $port answered $code ($version) for $path, not the bytes of $file" >&2; exit 1
            fi
        done
    done
done
etag_of() { curl -s --cacert "$work/ca.pem" -D - -o /dev/null -H 'Accept-Encoding: gzip' "$1" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }

echo "wrk -t1 -c$conns -d$duration over TLS (wrk's OpenSSL picks TLS 1.3), folio-edge --threads 1 vs nginx (1 worker) vs Caddy (GOMAXPROCS=1), same certificate and files${server_cpu:+; servers on core 0, wrk on core 1}"
printf "%-30s %11s %11s %11s %9s %9s\n" scenario "edge req/s" "nginx req/s" "caddy req/s" "vs nginx" "vs caddy"
median_row() { # label, then edge nginx caddy req/s per round: the medians and the ratios
    python3 - "$@" <<'PY'
import statistics, sys
label, v = sys.argv[1], [float(x) for x in sys.argv[2:]]
e, n, c = (statistics.median(v[i::3]) for i in range(3))
print(f"{label:<30} {e:>11.0f} {n:>11.0f} {c:>11.0f} {e/n:>8.2f}x {e/c:>8.2f}x")
PY
}
scenario() { # label path mode: gzip, inm (If-None-Match with each server's own ETag), close (a new TLS connection per request)
    local label=$1 path=$2 mode=$3 name port
    local -A headers=()
    for name in edge nginx caddy; do
        port=${name}_port; port=${!port}
        case $mode in
            gzip) headers[$name]="Accept-Encoding: gzip" ;;
            inm) headers[$name]="If-None-Match: $(etag_of "https://127.0.0.1:$port$path")" ;;
            close) headers[$name]="Connection: close" ;;
        esac
        WARM=1 run "$name" "$port" "$path" "Accept-Encoding: gzip" "${headers[$name]}" > /dev/null
    done
    local results=() r
    for r in $(seq 1 "$rounds"); do
        local order=(edge nginx caddy)
        (( r % 2 )) || order=(caddy nginx edge)
        local -A rps=()
        for name in "${order[@]}"; do
            port=${name}_port; port=${!port}
            read -r _ rps[$name] _ < <(run "$name" "$port" "$path" "Accept-Encoding: gzip" "${headers[$name]}")
        done
        results+=("${rps[edge]}" "${rps[nginx]}" "${rps[caddy]}")
    done
    median_row "$label" "${results[@]}"
}
scenario "(a) 200 gzip object" "$obj" gzip
scenario "(b) 304 If-None-Match" "$obj" inm
scenario "(c) new TLS connection each" "$obj" close

# HTTP/2: h2load, 64 connections with 10 streams each, the gzip object (all three servers speak h2).
h2run() { # port path duration: requests per second
    "${client_cpu[@]}" h2load -c "$conns" -m 10 -D "$3" --warm-up-time 1 -H "accept-encoding: gzip" "https://127.0.0.1:$1$2" 2>&1 \
        | awk '/^finished in/ {gsub(",", "", $4); print $4} /^requests:/ && $10 != 0 {print "h2load: " $10 " requests failed" > "/dev/stderr"; exit 1}'
}
echo
echo "h2load -c$conns -m10 -D${duration%s} (HTTP/2 over TLS), the gzip object; same servers"
printf "%-30s %11s %11s %11s %9s %9s\n" scenario "edge req/s" "nginx req/s" "caddy req/s" "vs nginx" "vs caddy"
h2results=()
for r in $(seq 1 "$rounds"); do
    order=(edge nginx caddy)
    (( r % 2 )) || order=(caddy nginx edge)
    declare -A h2rps=()
    for name in "${order[@]}"; do
        port=${name}_port; port=${!port}
        h2rps[$name]=$(h2run "$port" "$obj" "${duration%s}")
    done
    h2results+=("${h2rps[edge]}" "${h2rps[nginx]}" "${h2rps[caddy]}")
done
median_row "(d) HTTP/2 200 gzip object" "${h2results[@]}"
