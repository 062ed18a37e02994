#!/usr/bin/env bash
# Runs a guide's commands as written: every ```sh block of GUIDE, in order, in one bash (set -e),
# as root, from the repository's top, in a private mount namespace whose /etc, /usr/local, /var
# and /run are overlays in a scratch directory, so that nothing outside it changes.
#
#   scripts/guide-test.sh GUIDE.md
#
# A line `<!-- guide-test: start UNIT.service -->` in the guide does what `systemctl start`
# would, since systemd cannot run here: it copies the unit's LoadCredential= files (drop-ins
# included) to /run/credentials/UNIT/, makes its State/Cache/LogsDirectory, and starts its
# ExecStart under systemd-socket-activate with the sockets of every socket unit naming it
# (ListenStream ports bound on 127.0.0.1 only, FileDescriptorName as LISTEN_FDNAMES).
#
# Environment: INSTALL_FROM (the programs `make install` installs, not built again), GUIDE_HOSTS (lines
# for /etc/hosts), GUIDE_CA (PEM files trusted through /etc/ssl/certs/ca-certificates.crt), and
# whatever variables the guide reads. Prints the guide's output; exits with its status.
set -euo pipefail
guide=$(realpath "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${GUIDE_IN_NAMESPACE:-}" ]; then
    exec unshare --mount --propagation private env GUIDE_IN_NAMESPACE=1 "$0" "$@"
fi
work=$(mktemp -d /tmp/folio-guide.XXXXXX)
export work
cleanup() {
    local pid
    for pid in $(cat "$work/pids" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    for pid in $(cat "$work/pids" 2>/dev/null); do
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    done
    for dir in /run /var /usr/local /etc; do umount "$dir" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

for dir in /etc /usr/local /var /run; do
    name=${dir//\//_}
    mkdir -p "$work/$name/up" "$work/$name/work"
    mount -t overlay overlay -o "lowerdir=$dir,upperdir=$work/$name/up,workdir=$work/$name/work" "$dir"
done
[ -n "${GUIDE_HOSTS:-}" ] && printf '%s\n' "$GUIDE_HOSTS" >> /etc/hosts
for pem in ${GUIDE_CA:-}; do { echo; cat "$pem"; echo; } >> /etc/ssl/certs/ca-certificates.crt; done

# systemctl start UNIT, as far as the guide needs it.
guide_start() {
    local unit=$1 dir=/usr/local/lib/systemd/system
    local files=("$dir/$unit") line key value addresses=() names=()
    for f in /etc/systemd/system/"$unit".d/*.conf; do [ -f "$f" ] && files+=("$f"); done
    while IFS= read -r line; do
        key=${line%%=*} value=${line#*=}
        case $key in
            LoadCredential)
                mkdir -p "/run/credentials/$unit"
                install -m 400 "${value#*:}" "/run/credentials/$unit/${value%%:*}" ;;
            StateDirectory) mkdir -p "/var/lib/$value" ;;
            CacheDirectory) mkdir -p "/var/cache/$value" ;;
            LogsDirectory) mkdir -p "/var/log/$value" ;;
            ExecStart) exec_start=$value ;;
        esac
    done < <(cat "${files[@]}")
    for socket in "$dir"/*.socket; do
        grep -q "^Service=$unit$" "$socket" || continue
        value=$(sed -n 's/^ListenStream=//p' "$socket")
        addresses+=(-l "127.0.0.1:${value##*:}")
        names+=("$(sed -n 's/^FileDescriptorName=//p' "$socket")")
    done
    local joined
    joined=$(IFS=:; echo "${names[*]}")
    # shellcheck disable=SC2086
    systemd-socket-activate "${addresses[@]}" --fdname="$joined" $exec_start > "$work/$unit.log" 2>&1 &
    echo $! >> "$work/pids"
    echo "guide-test: started $unit ($exec_start) on ${addresses[*]} named $joined"
}

# The guide's sh blocks, and its markers as calls.
{ echo "set -euo pipefail"; awk '
    /^<!-- guide-test: start [^ ]+ -->$/ { print "guide_start " $4; next }
    /^```sh$/ { on = 1; next }
    /^```/ { on = 0; next }
    on { print }
' "$guide"; } > "$work/guide.sh"

cd "$repo"
export PATH=/usr/local/bin:$PATH TMPDIR=$work HOME=$work
export -f guide_start
set +e
bash "$work/guide.sh"
status=$?
set -e
for unit_log in "$work"/*.service.log; do
    [ -f "$unit_log" ] && { echo "--- $(basename "$unit_log")"; tail -n 40 "$unit_log"; }
done
exit $status
