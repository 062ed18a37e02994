# Shared by the wrk benchmarks (edge-bench.sh, cache-bench.sh, tls-bench.sh); sourced first,
# then `bench_setup NAME "$@"` sets root, edge, duration, conns, rounds and work (`scheme`,
# default http, is the caller's).

# On a machine with two or more cores, each server runs on core 0 and wrk on core 1, the
# same for both servers, so neither shares its core with the load generator.
server_cpu=() client_cpu=()
if [ "$(nproc)" -ge 2 ] && command -v taskset > /dev/null; then
    server_cpu=(taskset -c 0) client_cpu=(taskset -c 1)
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

run() { # name port path [header...]
    local name=$1 port=$2 path=$3; shift 3
    local args=()
    for h in "$@"; do args+=(-H "$h"); done
    local out
    local d=$duration
    if [ -n "${WARM:-}" ]; then d=1s; fi
    out=$("${client_cpu[@]}" wrk -t1 -c"$conns" -d"$d" --latency "${args[@]}" "${scheme:-http}://127.0.0.1:$port$path")
    local rps p99
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p99=$(echo "$out" | awk '$1=="99%" {print $2}')
    echo "$name $rps $p99"
}

to_ms() { # wrk latency like 1.23ms / 850.00us / 1.02s
    python3 -c "import sys; v=sys.argv[1]; print(float(v[:-2])/1000 if v.endswith('us') else float(v[:-2]) if v.endswith('ms') else float(v[:-1])*1000)" "$1"
}


nginx_main_conf() { # work_dir: the top of an nginx.conf (one worker, foreground, files in work_dir)
    cat <<CONF
worker_processes 1;
daemon off;
pid $1/nginx.pid;
error_log $1/nginx-error.log;
events { worker_connections 4096; }
CONF
}

nginx_proxy_cache_http() { # work_dir: nginx's http-level settings for a proxy_cache in work_dir/ncache
    # nginx's worker runs as another user: it must be able to write its cache and temp files.
    mkdir -p "$1/nginx" "$1/ncache"
    chmod 755 "$1"
    chmod 777 "$1/nginx" "$1/ncache"
    cat <<CONF
    access_log off;
    keepalive_requests 1000000;
    proxy_cache_path $1/ncache levels=1:2 keys_zone=folio:10m max_size=1g inactive=60m use_temp_path=off;
    client_body_temp_path $1/nginx; proxy_temp_path $1/nginx; fastcgi_temp_path $1/nginx;
    uwsgi_temp_path $1/nginx; scgi_temp_path $1/nginx;
CONF
}

nginx_static_http() { # work_dir: nginx's http-level settings for serving a published directory as files
    cat <<CONF
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max=10000 inactive=60s;
    open_file_cache_valid 60s;
    etag on;
    gzip_static on;
    types { application/x-plist plist; application/json json; }
    client_body_temp_path $1/nginx; proxy_temp_path $1/nginx; fastcgi_temp_path $1/nginx;
    uwsgi_temp_path $1/nginx; scgi_temp_path $1/nginx;
CONF
}

bench_setup() { # name public_dir edge_binary: the wrk benchmarks' common arguments, work dir and cleanup
    local name=$1
    root=$(cd "${2:-public}" && pwd)
    edge=${3:-.build/release/folio-edge}
    duration=${WRK_DURATION:-10s}
    conns=${WRK_CONNECTIONS:-64}
    rounds=${WRK_ROUNDS:-3}
    [[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$name: WRK_ROUNDS must be a positive whole number, not '$rounds'" >&2; exit 2; }
    work=$(mktemp -d "/tmp/folio-$name.XXXXXX")
    pids=()
    trap bench_cleanup EXIT
}

bench_cleanup() { # stops every server the benchmark started (pids), then removes its work dir
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}

bench_certificate() { # work_dir: a CA (ca.pem) and a P-256 certificate for 127.0.0.1 (cert.pem, key.pem) signed by it
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1/ca.key" -out "$1/ca.pem" -days 2 \
        -subj "/CN=Folio Bench CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1/key.pem" -out "$1/csr.pem" -subj "/CN=127.0.0.1" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$1/ext"
    openssl x509 -req -in "$1/csr.pem" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial -out "$1/cert.pem" -days 2 \
        -extfile "$1/ext" 2>/dev/null
    chmod 600 "$1/key.pem"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

h2run() { # name port path header: "req/s requests cpu-ticks" of h2load -c$conns -m10 against the server ${name}_pid
    local pid=${1}_pid before after out
    pid=${!pid}
    before=$(cpu_ticks "$pid")
    out=$("${client_cpu[@]}" h2load -c "$conns" -m 10 -D "${duration%s}" --warm-up-time 1 -H "accept-encoding: gzip" ${4:+-H "$4"} "https://127.0.0.1:$2$3" 2>&1)
    after=$(cpu_ticks "$pid")
    echo "$out" | awk -v cpu=$((after - before)) '
        /^finished in/ {gsub(",", "", $4); rps = $4}
        /^requests:/ {done = $8; if ($10 != 0) {print "h2load: " $10 " requests failed" > "/dev/stderr"; exit 1}}
        END {print rps, done, cpu}'
}

etag_of() { curl -s --http2 --cacert "$work/ca.pem" -D - -o /dev/null -H 'Accept-Encoding: gzip' "$1" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }

h2_scenario() { # label path mode(gzip|inm): $rounds rounds of h2run on each of ${servers[@]} (${name}_port, ${name}_pid), one line a round
    local label=$1 path=$2 mode=$3 name port header r hz
    hz=$(getconf CLK_TCK)
    local -A hdr=()
    for name in "${servers[@]}"; do
        port=${name}_port; port=${!port}
        [ "$mode" = inm ] && hdr[$name]="if-none-match: $(etag_of "https://127.0.0.1:$port$path")" || hdr[$name]=""
    done
    for r in $(seq 1 "$rounds"); do
        local order=("${servers[@]}") line="$label, round $r:"
        (( r % 2 )) || order=($(printf '%s\n' "${servers[@]}" | tac))
        local -A res=()
        for name in "${order[@]}"; do
            port=${name}_port; port=${!port}
            res[$name]=$(h2run "$name" "$port" "$path" "${hdr[$name]}")
        done
        for name in "${servers[@]}"; do
            read -r rps n ticks <<< "${res[$name]}"
            line+=$(python3 -c "import sys; rps,n,t,hz=map(float,sys.argv[1:5]); print(f'  {sys.argv[5]} {rps:,.0f} req/s {t/hz*1e6/max(n,1):.1f} us/req', end='')" "$rps" "$n" "$ticks" "$hz" "$name")
        done
        echo "$line"
    done
}
