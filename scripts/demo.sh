#!/usr/bin/env bash
# The end-to-end demo behind `make demo`: publish, serve, fetch and revalidate with curl,
# sync and read with the client, localized strings and negotiation, read again offline, diff
# two versions and take the second as a delta, then a signed release: keys, a signed publish, a verified sync and a refusal;
# then release channels: a beta channel promoted as a signed 10% rollout, and a halt; last, the
# strict build CI runs on content/.
set -euo pipefail
bin=${BIN:-.build/release}
public=${PUBLIC:-public}
work=$(mktemp -d /tmp/folio-demo.XXXXXX)
edge_pid=""
cleanup() {
    if [ -n "$edge_pid" ] && kill -0 "$edge_pid" 2>/dev/null; then kill "$edge_pid"; wait "$edge_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
# Starts folio-edge with the given arguments; sets edge_pid and url.
start_edge() {
    "$bin/folio-edge" --port 0 --no-access-log "$@" > "$work/edge.out" 2> "$work/edge.err" &
    edge_pid=$!
    for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.out" 2>/dev/null && break; sleep 0.1; done
    url=$(sed -n 's/^listening on //p' "$work/edge.out")
}
stop_edge() {
    kill -TERM "$edge_pid"
    wait "$edge_pid" || true
    edge_pid=""
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

step "published $public/ (version $(python3 -c "import json; print(json.load(open('$public/manifest.json'))['version'])"))"
ls "$public"
echo "objects: $(ls "$public/objects" | wc -l) files"

step "start folio-edge on a free port"
start_edge --root "$public"
echo "folio-edge (pid $edge_pid) listening on $url"

step "GET /content/sonnets/018.plist (gzip)"
curl -sS -D "$work/headers" -o "$work/018.plist.gz" -H 'Accept-Encoding: gzip' "$url/content/sonnets/018.plist"
cat "$work/headers"
etag=$(tr -d '\r' < "$work/headers" | sed -n 's/^ETag: //p')
gunzip -c "$work/018.plist.gz" > "$work/018.plist"
"$bin/folio" plist print "$work/018.plist"

step "the same request with If-None-Match: $etag"
curl -sS -D - -o /dev/null -H 'Accept-Encoding: gzip' -H "If-None-Match: $etag" "$url/content/sonnets/018.plist"

folio() { "$bin/folio" --edge "$url" --cache-dir "$work/cache" "$@"; }

step "folio sync (into an empty cache)"
folio sync

step "folio sync --force (one conditional GET, 304)"
folio sync --force --json

step "folio read sonnet 18"
folio read sonnet 18 --verbose

step "app content: structured data, a Markdown article, an index and an image (folio ls)"
folio ls
step "folio show app/home.plist (from content/app/home.yaml, checked by its schema)"
folio show app/home.plist
step "folio show articles/index.plist (the project file's light index, newest first)"
folio show articles/index.plist --json
step "the image: its own type and cache policy, served with Range"
curl -sS -D - -o /dev/null -r 0-15 "$url/content/images/quill.png"
folio get images/quill.png -o "$work/quill.png"
file "$work/quill.png" 2>/dev/null || ls -l "$work/quill.png"

step "a catalog negotiated from Accept-Language: es-MX gets es-419 (CLDR parent)"
curl -sS -D - -o /dev/null -H 'Accept-Language: es-MX, en;q=0.5' -H 'Accept-Encoding: gzip' "$url/content/catalogs/Localizable.plist"

step "folio strings: plural forms by locale (gettext for ru, CLDR for pl and cy), fallback said on stderr"
for n in 1 2 5 21; do printf 'ru %-3s ' "$n"; folio strings list.count --count "$n" --locale ru; done
for n in 0 1 2 3 6 7; do printf 'cy %-3s ' "$n"; folio strings reader.lines --count "$n" --locale cy; done
folio strings button.cancel --locale es-MX
LANG=fr_FR.UTF-8 folio read sonnet 18 --verbose > /dev/null

step "stop folio-edge (SIGTERM drains and exits 0)"
kill -TERM "$edge_pid"
wait "$edge_pid" && echo "folio-edge exited with status 0"
edge_pid=""

step "folio read sonnet XVIII, offline: from the cache"
folio read sonnet XVIII --verbose --offline

step "folio status"
folio status

step "publish a second version (sonnet 18 edited) and diff the two"
cp -r "$(dirname "$public")/content" "$work/content" 2>/dev/null || cp -r content "$work/content"
sed -i 's/summer’s day/winter’s night/' "$work/content/sonnets/018.txt"
cp -r "$public" "$work/public-next"
"$bin/folio-build" --content "$work/content" --output "$work/public-next" --quiet
set +e
folio diff "$public" "$work/public-next"
status=$?
set -e
echo "(folio diff exit status: $status — 0 same, 1 different, 2 error)"

step "folio sync from an edge serving the second version: head.plist and one delta, not the objects whole"
ls "$work/public-next/deltas"
start_edge --root "$work/public-next"
folio sync --force --json
folio status | grep "last update"
stop_edge

step "signed releases: a root key (kept offline), a signing key, and a key list the root signs"
keys="$work/keys"
mkdir -p "$keys"
"$bin/folio" keys generate "$keys/root"
"$bin/folio" keys generate "$keys/signer"
"$bin/folio" keys authorize --root "$keys/root.key" "$keys/signer.pub" --valid-for 90d --output "$keys/keylist.plist"

step "folio-build --signing-key … --key-list …: a signed publish"
"$bin/folio-build" --content "$work/content" --output "$work/public-signed" --quiet \
    --signing-key "$keys/signer.key" --key-list "$keys/keylist.plist" --valid-for 7d
"$bin/folio" keys show "$work/public-signed/manifest.plist" --trust "$keys/root.pub"

step "folio-edge --trust root.pub serves it; folio sync --trust root.pub verifies it"
start_edge --root "$work/public-signed" --trust "$keys/root.pub"
signed() { "$bin/folio" --edge "$url" --cache-dir "$work/signed-cache" --trust "$keys/root.pub" "$@"; }
signed sync --json
signed status
stop_edge

step "an edge that serves content signed under another root: refused, the cache kept"
"$bin/folio" keys generate "$keys/rogue"
"$bin/folio" keys authorize --root "$keys/rogue.key" "$keys/rogue.pub" --output "$keys/rogue-list.plist" > /dev/null
sed -i 's/Shall I compare thee/Shall I not compare thee/' "$work/content/sonnets/018.txt"
cp -r "$work/public-signed" "$work/public-rogue"
"$bin/folio-build" --content "$work/content" --output "$work/public-rogue" --quiet \
    --signing-key "$keys/rogue.key" --key-list "$keys/rogue-list.plist"
start_edge --root "$work/public-rogue"
set +e
signed sync --force
status=$?
set -e
echo "(folio sync exit status: $status — 16: the key list is not signed by a trusted root)"
stop_edge
signed read sonnet 18 --offline | head -3

step "releases: a beta channel, promoted to production as a signed 10% rollout"
rel="$work/public-releases"
cp -r "$work/public-signed" "$rel"
sign=(--signing-key "$keys/signer.key" --key-list "$keys/keylist.plist")
sed -i 's/winter’s night/autumn evening/' "$work/content/sonnets/018.txt"
"$bin/folio-build" --content "$work/content" --output "$rel" --channel beta --quiet "${sign[@]}"
"$bin/folio-build" release promote --from beta --to production --rollout 10 --output "$rel" "${sign[@]}"
start_edge --root "$rel" --trust "$keys/root.pub"
installs() { "$bin/folio" --edge "$url" --cache-dir "$work/release-cache" --trust "$keys/root.pub" "$@"; }
installs sync --channel beta > /dev/null
installs read sonnet 18 --channel beta --offline | sed -n 3p

step "100 installs sync production: each decides by its own bucket (a hash of its id and the release)"
inside=""
count=0
for i in $(seq -w 1 100); do
    release=$(installs sync --force --json --install-id "demo-install-0$i" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("release", "-"))')
    if [ "$release" != "-" ]; then count=$((count + 1)); inside=${inside:-demo-install-0$i}; fi
done
echo "$count of 100 installs took the staged release (10% expected)"
if [ -n "$inside" ]; then
    installs sync --force --install-id "$inside" > /dev/null
    installs status --install-id "$inside" | sed -n '/^channel/,/^reading/p'
    step "folio-build release halt: a new signed version; the installs in the release come back at their next sync"
    "$bin/folio-build" release halt --output "$rel" "${sign[@]}"
    sleep 0.6
    installs sync --force --install-id "$inside"
    installs status --install-id "$inside" | sed -n '/^release/,/^reading/p'
fi
stop_edge
"$bin/folio-build" release list --output "$rel"

step "folio-build --strict on content/: what CI runs (partial translations are declared in folio.toml)"
"$bin/folio-build" --content "${CONTENT:-content}" --output "$work/public-strict" --strict --quiet
