#!/usr/bin/env bash
# Installs Folio's programs and the edge's service files (`make install`), or removes them
# (`make uninstall`).
#
#   scripts/install.sh install BIN_DIR    the programs built in BIN_DIR (.build/release)
#   scripts/install.sh uninstall
#
# PREFIX (default /usr/local), SYSCONFDIR (default /etc) and DESTDIR (a staging root) as in
# make. Installed under DESTDIR+PREFIX:
#   bin/folio-build, bin/folio-edge, bin/folio                  stripped
#   share/folio/seed.folioseed                                  the client's bundled seed
#   lib/systemd/system/folio-edge.service, folio-edge*.socket   with PREFIX filled in
#   share/man/man1/*.1                                          every program and subcommand
#   share/bash-completion/completions/NAME, share/zsh/site-functions/_NAME,
#   share/fish/vendor_completions.d/NAME.fish
#   share/folio/installed-files                                 the list uninstall removes
# and DESTDIR+SYSCONFDIR/folio/edge.toml, an example, only when there is none: uninstall leaves
# it (and any other configuration) in place.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
PREFIX=${PREFIX:-/usr/local}
SYSCONFDIR=${SYSCONFDIR:-/etc}
DESTDIR=${DESTDIR:-}
root=$DESTDIR$PREFIX
manifest=$root/share/folio/installed-files
programs=(folio-build folio-edge folio)

die() { echo "install.sh: error: $*" >&2; exit 1; }

# Installs one file (install(1) arguments before SRC) and records its path.
put() {  # MODE SRC DEST [install flags...]
  local mode=$1 src=$2 dest=$3; shift 3
  install -D -m "$mode" "$@" "$src" "$DESTDIR$dest"
  echo "$dest" >> "$list"
}

install_programs() {  # BIN_DIR
  local name
  for name in "${programs[@]}"; do
    [ -x "$1/$name" ] || die "$1/$name not found: build first (make build), or name the directory holding the three programs"
    put 755 "$1/$name" "$PREFIX/bin/$name" -s
  done
  local seed=$1/Folio_Client.resources/seed.folioseed
  [ -f "$seed" ] || die "$seed not found: the client's resource bundle is built beside the programs"
  put 644 "$seed" "$PREFIX/share/folio/seed.folioseed"
}

install_units() {
  local unit tmp
  tmp=$(mktemp)
  for unit in "$repo"/dist/systemd/*; do
    sed -e "s|@BINDIR@|$PREFIX/bin|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" "$unit" > "$tmp"
    put 644 "$tmp" "$PREFIX/lib/systemd/system/$(basename "$unit")"
  done
  rm -f "$tmp"
}

install_man_pages() {  # BIN_DIR
  local out page
  out=$(mktemp -d)
  /usr/bin/env python3 "$here/man-pages.py" --date "$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)" "$out" \
    "$1/folio-build" "$1/folio-edge" "$1/folio" || die "cannot write the man pages"
  for page in "$out"/*.1; do put 644 "$page" "$PREFIX/share/man/man1/$(basename "$page")"; done
  rm -rf "$out"
}

install_completions() {  # BIN_DIR
  local name tmp
  tmp=$(mktemp -d)
  for name in "${programs[@]}"; do
    "$1/$name" --generate-completion-script bash > "$tmp/$name.bash"
    "$1/$name" --generate-completion-script zsh > "$tmp/_$name"
    "$1/$name" --generate-completion-script fish > "$tmp/$name.fish"
    put 644 "$tmp/$name.bash" "$PREFIX/share/bash-completion/completions/$name"
    put 644 "$tmp/_$name" "$PREFIX/share/zsh/site-functions/_$name"
    put 644 "$tmp/$name.fish" "$PREFIX/share/fish/vendor_completions.d/$name.fish"
  done
  rm -rf "$tmp"
}

install_config() {
  local dest=$DESTDIR$SYSCONFDIR/folio/edge.toml
  if [ -e "$dest" ]; then
    echo "kept $SYSCONFDIR/folio/edge.toml (it exists; the example is $repo/dist/edge.toml)"
  else
    install -D -m 644 "$repo/dist/edge.toml" "$dest"
    echo "wrote $SYSCONFDIR/folio/edge.toml (an example: set root, then systemctl enable --now folio-edge)"
  fi
}

do_install() {  # BIN_DIR
  local bin=${1:?usage: install.sh install BIN_DIR}
  [ -d "$bin" ] || die "$bin is not a directory"
  list=$(mktemp)
  trap 'rm -f "$list"' EXIT
  install_programs "$bin"
  install_units
  install_man_pages "$bin"
  install_completions "$bin"
  install_config
  echo "$PREFIX/share/folio/installed-files" >> "$list"
  install -D -m 644 "$list" "$manifest"
  echo "installed $(wc -l < "$list") files under ${DESTDIR:-}$PREFIX"
}

# Removes the files the manifest lists (nothing else), then the directories of ours left empty.
do_uninstall() {
  [ -f "$manifest" ] || die "$manifest not found: nothing installed under ${DESTDIR:-}$PREFIX (or PREFIX differs from the install's)"
  local path count=0
  while IFS= read -r path; do
    case $path in "$PREFIX"/*) ;; *) die "$manifest names $path, outside $PREFIX: not removing it" ;; esac
    if [ -e "$DESTDIR$path" ] || [ -L "$DESTDIR$path" ]; then rm -f "$DESTDIR$path" && count=$((count + 1)); fi
  done < "$manifest"
  rmdir "$root/share/folio" 2>/dev/null || true
  echo "removed $count files under ${DESTDIR:-}$PREFIX; left $SYSCONFDIR/folio/edge.toml and other configuration in place"
}

case ${1:-} in
  install) do_install "${2:-}" ;;
  uninstall) do_uninstall ;;
  *) die "usage: install.sh install BIN_DIR | install.sh uninstall" ;;
esac
