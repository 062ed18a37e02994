#!/usr/bin/env bash
# Reloads under load: folio-edge's SIGHUP (its config file read again, certificates reloaded)
# against nginx's `nginx -s reload` (a new worker, the old one draining), each once a second
# through a wrk run (HTTP/1.1 over TLS) and an h2load run (HTTP/2), and the same runs without
# reloads. Reports requests/s, failed requests and the p99 latency. Both servers serve the same
# published directory with the same certificate, one worker each; both are checked to answer
# 200 with the object's bytes first.
# Usage: Benchmarks/reload-bench.sh PUBLIC_DIR EDGE_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup reload-bench "$@"
bench_certificate "$work"

nginx_port=$(free_port)
mkdir -p "$work/nginx"
{ nginx_main_conf "$work"; cat <<CONF; } > "$work/nginx.conf"
http {
$(nginx_static_http "$work")
    server {
        listen 127.0.0.1:$nginx_port ssl http2;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        root $root;
    }
}
CONF
"${server_cpu[@]}" nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)

cat > "$work/edge.toml" <<CONF
root = "$root"
port = 0
threads = 1
access-log = false
tls-cert = "$work/cert.pem"
tls-key = "$work/key.pem"
CONF
"${server_cpu[@]}" "$edge" --config "$work/edge.toml" > "$work/edge.out" 2> "$work/edge.err" &
edge_pid=$!
pids+=($edge_pid)
for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.out" 2>/dev/null && break; sleep 0.1; done
edge_port=$(sed -n 's/^listening on https:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$work/edge.out")
[ -n "$edge_port" ] || { echo "reload-bench: folio-edge did not start: $(cat "$work/edge.err")" >&2; exit 1; }

sha=$(python3 -c "import plistlib; m=plistlib.load(open('$root/manifest.plist','rb')); print(next(e['sha256'] for e in m['entries'] if e['path']=='sonnets/018.plist'))")
obj="/objects/$sha.plist"
for port in "$edge_port" "$nginx_port"; do
    for _ in $(seq 1 50); do curl -s --cacert "$work/ca.pem" -o /dev/null "https://127.0.0.1:$port$obj" && break; sleep 0.1; done
    for version in --http1.1 --http2; do
        code=$(curl -s $version --cacert "$work/ca.pem" -o "$work/got" -w '%{http_code}' "https://127.0.0.1:$port$obj")
        if [ "$code" != 200 ] || ! cmp -s "$work/got" "$root$obj"; then
            echo "reload-bench: port $port answered $code ($version) for $obj, not the bytes on disk" >&2; exit 1
        fi
    done
done

reload() { # server: one reload
    case $1 in
        edge) kill -HUP "$edge_pid" ;;
        nginx) nginx -s reload -c "$work/nginx.conf" -p "$work" 2>/dev/null ;;
    esac
}
reloading() { # server seconds: a reload each second, in the background (its pid in $reloader)
    ( for _ in $(seq 1 "$2"); do sleep 1; reload "$1"; done ) > /dev/null 2>&1 &
    reloader=$!
}
secs=${duration%s}

wrk_row() { # server port reloads(yes/no): "req/s failed p99"
    local out
    reloader=""
    if [ "$3" = yes ]; then reloading "$1" $((secs - 1)); fi
    out=$("${client_cpu[@]}" wrk -t1 -c"$conns" -d"$duration" --latency "https://127.0.0.1:$2$obj")
    if [ -n "$reloader" ]; then wait "$reloader"; fi
    python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
rps = re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)
errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)
print(f"{float(rps):.0f} {errors + (int(non2xx.group(1)) if non2xx else 0)} {p99}")
PY
}

h2_row() { # server port reloads(yes/no): "req/s failed p99"
    local out
    reloader=""
    if [ "$3" = yes ]; then reloading "$1" $((secs - 1)); fi
    rm -f "$work/h2.log"
    out=$("${client_cpu[@]}" h2load -c "$conns" -m 10 -D "$secs" --log-file="$work/h2.log" "https://127.0.0.1:$2$obj" 2>&1)
    if [ -n "$reloader" ]; then wait "$reloader"; fi
    python3 - "$out" "$work/h2.log" <<'PY'
import re, sys
out, log = sys.argv[1], sys.argv[2]
rps = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1)
m = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", out)
failed = int(m.group(3)) + int(m.group(4))
times = sorted(int(line.split()[2]) for line in open(log) if line.strip())
non200 = sum(1 for line in open(log) if line.split()[1] != "200")
p99 = times[int(len(times) * 0.99) - 1] / 1000 if times else 0
print(f"{float(rps):.0f} {failed + non200} {p99:.2f}ms")
PY
}

echo "wrk -t1 -c$conns -d$duration and h2load -c$conns -m10 -D$secs over TLS; a reload each second in the 'reloads' rows${server_cpu:+; servers on core 0, clients on core 1}"
printf "%-34s %10s %8s %10s\n" run "req/s" "failed" "p99"
for proto in wrk h2; do
    for server in edge nginx; do
        port=${server}_port; port=${!port}
        for reloads in no yes; do
            read -r rps failed p99 < <(${proto}_row "$server" "$port" "$reloads")
            label="HTTP/1.1"; [ "$proto" = wrk ] || label="HTTP/2"
            if [ "$server" = edge ]; then label+=" folio-edge"; else label+=" nginx"; fi
            if [ "$reloads" = yes ]; then label+=", reloads"; fi
            printf "%-34s %10s %8s %10s\n" "$label" "$rps" "$failed" "$p99"
        done
    done
done
