#!/usr/bin/env bash
# Builds the libraries' DocC catalogs with the toolchain's own `docc` (no swift-docc-plugin
# here), warnings as errors: each library's public symbols are extracted from the debug build's
# modules (swift symbolgraph-extract; FolioKit's with the FolioKitCore types it re-exports),
# then `docc convert` builds Sources/<Library>/<Library>.docc against them.
#
#   scripts/docc.sh [BUILD_DIR]        # BUILD_DIR: .build/debug by default, built already
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/.build/debug}" && pwd)
swift=${SWIFT:-swift}
docc=${DOCC:-$(dirname "$(readlink -f "$(command -v "$swift")")")/docc}
[ -x "$docc" ] || { echo "docc.sh: no docc next to $swift" >&2; exit 1; }
out=$repo/.build/docc
rm -rf "$out"
triple=$("$swift" -print-target-info | sed -n 's/.*"triple": "\(.*\)".*/\1/p' | head -n 1)
includes=(-I "$build/Modules")
for shim in "$repo"/Shims/*/; do includes+=(-I "$shim"); done
for library in FolioKit FolioPlist FolioLocalization; do
    reexported=""
    [ "$library" = FolioKit ] && reexported=-experimental-allowed-reexported-modules=FolioKitCore
    mkdir -p "$out/symbols/$library"
    "$swift" symbolgraph-extract -module-name "$library" -target "$triple" "${includes[@]}" \
        -minimum-access-level public -output-dir "$out/symbols/$library" $reexported
    "$docc" convert "$repo/Sources/$library/$library.docc" --additional-symbol-graph-dir "$out/symbols/$library" \
        --output-path "$out/$library.doccarchive" --warnings-as-errors \
        --fallback-display-name "$library" --fallback-bundle-identifier "org.folio.$library"
    echo "docc.sh: $library built without warnings ($out/$library.doccarchive)"
done
