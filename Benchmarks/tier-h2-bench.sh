#!/usr/bin/env bash
# The cache tier's HTTP/2 on its two frame layers: h2load -c64 -m10 on a cached 1 KB gzip
# object through `folio-edge --origin` over TLS, libnghttp2 (`ng`, the default) against
# swift-nio-http2 (`nio`, FOLIO_EDGE_H2=swift-nio-http2). Both tiers run on core 0 with one
# thread, h2load on core 1, the origin (a cleartext folio-edge, asked once per tier to fill its
# cache) unpinned. Each row has h2load's requests per second and the tier's user + system CPU
# time per request (from /proc before and after each run), which another process on the same
# cores changes far less than the wall-clock rate.
# Usage: Benchmarks/tier-h2-bench.sh PUBLIC_DIR EDGE_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup tier-h2-bench "$1" "$2"
layers=(ng nio)

bench_certificate "$work"
"$edge" --root "$root" --port 0 --threads 1 --no-access-log > "$work/origin.out" 2> "$work/origin.err" &
pids+=($!)
wait_port() { # out_file scheme: the port an edge printed
    for _ in $(seq 1 100); do grep -q "listening on" "$1" 2>/dev/null && break; sleep 0.1; done
    sed -n "s/^listening on $2:\/\/127.0.0.1:\([0-9]*\)$/\1/p" "$1" | head -1
}
origin_port=$(wait_port "$work/origin.out" http)
[ -n "$origin_port" ] || { echo "tier-h2-bench: the origin did not start: $(cat "$work/origin.err")" >&2; exit 1; }
for name in "${layers[@]}"; do
    layer=; [ "$name" = nio ] && layer=swift-nio-http2
    FOLIO_EDGE_H2=$layer "${server_cpu[@]}" "$edge" --origin "http://127.0.0.1:$origin_port" --port 0 --threads 1 --no-access-log \
        --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" > "$work/$name.out" 2> "$work/$name.err" &
    pids+=($!)
    printf -v "${name}_pid" %s $!
    port=$(wait_port "$work/$name.out" https)
    [ -n "$port" ] || { echo "tier-h2-bench: the $name tier did not start: $(cat "$work/$name.err")" >&2; exit 1; }
    printf -v "${name}_port" %s "$port"
done

sha=$(python3 -c "import plistlib; m=plistlib.load(open('$root/manifest.plist','rb')); print(next(e['sha256'] for e in m['entries'] if e['path']=='sonnets/018.plist'))")
obj="/objects/$sha.plist"
for name in "${layers[@]}"; do
    port=${name}_port; port=${!port}
    for _ in 1 2; do
        head=$(curl -s --http2 --cacert "$work/ca.pem" -H "Accept-Encoding: gzip" -D - -o "$work/got" -w '%{http_code} %{http_version}' \
            "https://127.0.0.1:$port$obj" | tr -d '\r')
    done
    if [[ "$head" != *"200 2" ]] || [[ "$head" != *"cache-status: folio-edge; hit"* ]] || ! cmp -s "$work/got" "$root$obj.gz"; then
        echo "tier-h2-bench: the $name tier did not answer $obj from its cache with the bytes of $root$obj.gz: $head" >&2; exit 1
    fi
done

echo "h2load -c$conns -m10 -D${duration%s} through the tier (HTTP/2 over TLS, a cached $(stat -c %s "$root$obj.gz")-byte gzip object)," \
    "tiers on one core${server_cpu:+ (core 0, h2load on core 1)}; $rounds rounds"
echo "us/req: the tier's user+system CPU time per request over the whole run (its warm-up second included)"
servers=("${layers[@]}")
h2_scenario "200 gzip object, cached" "$obj" gzip
