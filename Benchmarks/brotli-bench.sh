#!/usr/bin/env bash
# Bytes of a full sync of content/ with brotli against gzip only: the same content published
# twice (folio-build's default, and --no-brotli), each served by folio-edge on loopback, each
# synced by `folio sync --json` into an empty cache. Prints the body bytes and all bytes (heads
# too) of both, and how much smaller the brotli sync is; checks that both publishes have the
# same entries and that each sync fetched all of them.
#
#   Benchmarks/brotli-bench.sh CONTENT_DIR RELEASE_DIR
set -euo pipefail
content=${1:?usage: brotli-bench.sh CONTENT_DIR RELEASE_DIR}
bin=${2:?usage: brotli-bench.sh CONTENT_DIR RELEASE_DIR}
work=$(mktemp -d /tmp/folio-brotli-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

for mode in br gzip; do
  extra=()
  [ "$mode" = gzip ] && extra=(--no-brotli)
  SOURCE_DATE_EPOCH=1700000000 "$bin/folio-build" -q --content "$content" --output "$work/pub-$mode" "${extra[@]}" \
    >/dev/null 2>"$work/build-$mode.err" || { cat "$work/build-$mode.err" >&2; exit 2; }
  "$bin/folio-edge" --root "$work/pub-$mode" --port 0 --no-access-log >"$work/edge-$mode.log" 2>&1 &
  pids+=($!)
done
for mode in br gzip; do
  for _ in $(seq 100); do grep -q '^listening on' "$work/edge-$mode.log" && break; sleep 0.1; done
  url=$(sed -n 's/^listening on \(http:\/\/[0-9.:]*\).*/\1/p' "$work/edge-$mode.log")
  [ -n "$url" ] || { cat "$work/edge-$mode.log" >&2; exit 2; }
  "$bin/folio" --cache-dir "$work/cache-$mode" --edge "$url" sync --json >"$work/sync-$mode.json"
done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
s = {m: json.load(open(f"{work}/sync-{m}.json")) for m in ("br", "gzip")}
published = {m: json.load(open(f"{work}/pub-{m}/manifest.json")) for m in ("br", "gzip")}
paths = {m: sorted((e["path"], e["sha256"]) for e in published[m]["entries"]) for m in published}
if paths["br"] != paths["gzip"] or not paths["br"]:
    sys.exit("the two publishes differ in their entries")
for m in s:
    if s[m]["objectsFetched"] != len(paths[m]) or s[m]["versionAfter"] != published[m]["version"]:
        sys.exit(f"the {m} sync did not fetch every object of version {published[m]['version']}: {s[m]}")
print(f"{'full sync of content/':24} {'objects':>8} {'body bytes':>11} {'all bytes':>10}")
for m in ("gzip", "br"):
    print(f"{'br, gzip' if m == 'br' else 'gzip only':24} {s[m]['objectsFetched']:>8} {s[m]['bodyBytes']:>11,} {s[m]['bytes']:>10,}")
body = 1 - s["br"]["bodyBytes"] / s["gzip"]["bodyBytes"]
total = 1 - s["br"]["bytes"] / s["gzip"]["bytes"]
print(f"brotli: bodies {body:.1%} smaller, all bytes {total:.1%} smaller (target: 15% below gzip)")
PY
