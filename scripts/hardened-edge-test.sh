#!/usr/bin/env bash
# Runs the real folio-edge under the restrictions dist/systemd/folio-edge.service asks systemd
# for, and checks that it serves:
#   - as a non-root user (nobody) with CAP_NET_BIND_SERVICE alone (bounding, ambient and
#     effective sets), and NoNewPrivileges (setpriv);
#   - under the unit's seccomp filters (scripts/seccomp-exec.py: @system-service ~@privileged,
#     unknown calls kill the process; MemoryDenyWriteExecute; RestrictAddressFamilies);
#   - in the unit's file system (scripts/fs-sandbox.sh in a mount namespace: ProtectSystem=strict
#     with the log and cache directories writable, PrivateTmp, PrivateDevices, ProtectHome,
#     ProtectKernelTunables), where `unshare -m` is allowed;
# in both modes: a published directory over HTTPS (HTTP/1.1 and HTTP/2), the plain redirect
# listener and the admin listener on privileged ports, with an access log file; and a cache
# tier with a disk cache in front of it. SIGHUP, SIGUSR1 and SIGTERM are sent too, and the
# edge must exit 0. Controls: the same launcher kills mount(2) and refuses W+X memory.
#
#   scripts/hardened-edge-test.sh BIN_DIR      (exit 0 pass, 1 fail, 77 skipped: a tool missing)
set -euo pipefail
bin=$(cd "${1:?usage: hardened-edge-test.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.err; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root, to start the edge as another user (nobody) with CAP_NET_BIND_SERVICE alone"
for tool in setpriv curl openssl systemd-analyze; do command -v "$tool" >/dev/null || skip "$tool is missing (Debian: util-linux, curl, openssl, systemd)"; done
/usr/bin/python3 -c 'import seccomp' 2>/dev/null || skip "Python's seccomp module is missing (Debian: python3-seccomp)"
curl --version | grep -q HTTP2 || skip "this curl has no HTTP/2"

work=$(mktemp -d /tmp/folio-hardened.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
chmod 755 "$work"
# The launcher and the edge are copied into WORK: the sandbox's private /tmp hides everything else
# under /tmp (a clone of the repository there included), as PrivateTmp= would.
install -m 755 "$here/seccomp-exec.py" "$work/seccomp-exec.py"
install -m 755 "$bin/folio-edge" "$work/folio-edge"

# The restricted launch: nobody, CAP_NET_BIND_SERVICE only, no new privileges, the filters.
sandbox=(setpriv --reuid=65534 --regid=65534 --clear-groups
  --inh-caps=-all,+net_bind_service --ambient-caps=-all,+net_bind_service --bounding-set=-all,+net_bind_service
  --no-new-privs /usr/bin/python3 "$work/seccomp-exec.py" --action kill --)

# Controls: the launcher's filters are live.
set +e
sh -c '"$@"; exit $?' sh "${sandbox[@]}" /bin/mount -t tmpfs none "$work" 2>/dev/null; status=$?
set -e
[ "$status" -eq 159 ] || fail "mount(2) under the filter should die of SIGSYS (exit 159), got $status"
"${sandbox[@]}" /usr/bin/python3 -c 'import mmap; mmap.mmap(-1, 4096, prot=7)' 2>/dev/null && fail "W+X memory was allowed"
echo "controls: mount(2) killed by SIGSYS, W+X mmap refused"

# The unit's file system, when this machine lets us make a mount namespace.
fs=()
if unshare -m --propagation private true 2>/dev/null; then
  fs=(unshare -m --propagation private "$here/fs-sandbox.sh" "$work" "$work/logs" "$work/cache" --)
else
  echo "note: unshare -m is not permitted here: the file system restrictions are not reproduced"
fi

# Content, a certificate, and directories the edge's user may write (logs, cache).
SOURCE_DATE_EPOCH=1700000000 "$bin/folio-build" --content "$repo/content" --output "$work/public" --quiet
chmod -R a+rX "$work/public"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
chown 65534:65534 "$work/key.pem" && chmod 600 "$work/key.pem" && chmod 644 "$work/cert.pem"
mkdir -m 700 "$work/logs" "$work/cache" && chown 65534:65534 "$work/logs" "$work/cache"
if [ ${#fs[@]} -gt 0 ]; then
  "${fs[@]}" sh -c "touch '$work/public/x' 2>/dev/null || touch /etc/folio-x 2>/dev/null" && fail "the file system sandbox left / writable"
  "${fs[@]}" sh -c "touch '$work/logs/.probe'" || fail "the file system sandbox made the log directory read-only"
  rm -f "$work/logs/.probe"
  echo "controls: ${work}/public and /etc read-only, the log directory writable in the file system sandbox"
fi

# Three free privileged ports.
read -r https_port http_port tier_port < <(/usr/bin/python3 - <<'PY'
import socket
ports = []
for p in range(600, 1024):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); ports.append(p)
    except OSError:
        pass
    finally:
        s.close()
    if len(ports) == 3:
        break
print(*ports)
PY
)

wait_port() {  # PORT: until it accepts (10 s)
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  fail "nothing listens on $1"
}

"${fs[@]}" "${sandbox[@]}" "$work/folio-edge" --root "$work/public" --host 127.0.0.1 --port "$https_port" --threads 2 \
  --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --http-port "$http_port" --admin-listen 127.0.0.1:0 \
  --memory-budget 4096 --access-log "$work/logs/access.log" --access-log-format combined \
  > "$work/edge.out" 2> "$work/edge.err" &
edge=$!; pids+=("$edge")
wait_port "$https_port"
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
[ "$(status_of "$edge" Uid)" = 65534 ] || fail "the edge does not run as nobody"
[ "$(status_of "$edge" CapEff)" = 0000000000000400 ] || fail "effective capabilities are not CAP_NET_BIND_SERVICE alone: $(status_of "$edge" CapEff)"
[ "$(status_of "$edge" CapBnd)" = 0000000000000400 ] || fail "bounding set is not CAP_NET_BIND_SERVICE alone"
[ "$(status_of "$edge" NoNewPrivs)" = 1 ] || fail "NoNewPrivs is not set"
[ "$(status_of "$edge" Seccomp)" = 2 ] || fail "no seccomp filter"
echo "edge $edge: uid 65534, CapEff/CapBnd 0x400 (CAP_NET_BIND_SERVICE), NoNewPrivs 1, Seccomp 2 ($(status_of "$edge" Seccomp_filters) filters)"

get() { curl -sS --cacert "$work/cert.pem" -o /dev/null -w '%{http_code} %{http_version}' "$@"; }
[ "$(get --http1.1 "https://localhost:$https_port/manifest.plist")" = "200 1.1" ] || fail "HTTPS/1.1 GET"
[ "$(get --http2 "https://localhost:$https_port/manifest.plist")" = "200 2" ] || fail "HTTP/2 GET"
[ "$(get --http2 -H 'Accept-Encoding: br' "https://localhost:$https_port/manifest.plist")" = "200 2" ] || fail "HTTP/2 GET with br"
[ "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_port/manifest.plist")" = 308 ] || fail "the http listener does not redirect"
admin=$(sed -n 's|^admin listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/edge.out")
[ "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin/metrics")" = 200 ] || fail "the admin listener's /metrics"
echo "origin: HTTPS/1.1 200, HTTP/2 200, http 308 on :$http_port, admin /metrics 200"

# A cache tier in front, with its cache on disk, on a privileged port.
"${fs[@]}" "${sandbox[@]}" "$work/folio-edge" --origin "https://localhost:$https_port" --origin-ca "$work/cert.pem" \
  --host 127.0.0.1 --port "$tier_port" --threads 2 --cache-dir "$work/cache" --cache-size 64M \
  --access-log "$work/logs/tier.log" --access-log-format json > "$work/tier.out" 2> "$work/tier.err" &
tier=$!; pids+=("$tier")
wait_port "$tier_port"
for _ in 1 2; do
  [ "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$tier_port/manifest.plist")" = 200 ] || fail "tier GET"
done
[ -n "$(ls -A "$work/cache")" ] || fail "the tier wrote nothing to its disk cache"
echo "tier: 200 through https to the origin, disk cache written"

# Reload, log reopen, then a graceful stop: each must leave the process alive, then exit 0.
mv "$work/logs/access.log" "$work/logs/access.log.1"
kill -HUP "$edge"; kill -USR1 "$edge"; sleep 0.5
[ "$(get --http1.1 "https://localhost:$https_port/manifest.plist")" = "200 1.1" ] || fail "GET after SIGHUP and SIGUSR1"
kill -0 "$edge" || fail "the edge died after SIGHUP/SIGUSR1"
for p in "$tier" "$edge"; do
  kill -TERM "$p"
  set +e; wait "$p"; status=$?; set -e
  [ "$status" -eq 0 ] || fail "folio-edge $p exited $status after SIGTERM (159: killed by the seccomp filter)"
done
pids=()
grep -q '"GET /manifest.plist HTTP/2.0" 200' "$work/logs/access.log.1" || fail "no HTTP/2 line in the access log"
[ -s "$work/logs/access.log" ] || fail "SIGUSR1 did not reopen the access log"
echo "SIGHUP, SIGUSR1 (log reopened), SIGTERM: both edges exited 0"
echo "PASS: folio-edge serves under the unit's seccomp filters and capabilities${fs:+, in its file system}"
