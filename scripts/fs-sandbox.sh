#!/usr/bin/env bash
# The file system folio-edge.service gives the edge, for scripts/hardened-edge-test.sh: run as
# root in a mount namespace of its own (`unshare -m --propagation private fs-sandbox.sh ...`),
# it mounts, then execs COMMAND (same process):
#   PrivateTmp=yes            a fresh /tmp and /var/tmp (WORK stays at its path)
#   PrivateDevices=yes        /dev with null, zero, full, random, urandom, tty alone
#   ProtectHome=yes           /home, /root, /run/user empty and read-only
#   ProtectSystem=strict      every mount read-only but /proc, /sys, /dev, the private /tmp, and
#   StateDirectory= & co.       the directories WRITABLE... (the unit's State/Cache/LogsDirectory)
#   ProtectKernelTunables=yes /proc/sys and /sys read-only
#
#   fs-sandbox.sh WORK [WRITABLE...] -- COMMAND ARGS...
set -euo pipefail
work=$1; shift
writable=()
while [ "$1" != -- ]; do writable+=("$1"); shift; done
shift

mount --make-rprivate /
mount --bind "$work" /mnt
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
mkdir -p "$work"
mount --move /mnt "$work"

dev=$(mktemp -d /tmp/dev.XXXXXX)
mount -t tmpfs -o mode=755 tmpfs "$dev"
for node in null zero full random urandom tty; do
  touch "$dev/$node"
  mount --bind "/dev/$node" "$dev/$node"
done
mkdir -m 1777 "$dev/shm"
ln -s /proc/self/fd "$dev/fd"
ln -s /proc/self/fd/0 "$dev/stdin"; ln -s /proc/self/fd/1 "$dev/stdout"; ln -s /proc/self/fd/2 "$dev/stderr"
mount --move "$dev" /dev

for dir in /home /root /run/user; do
  [ -d "$dir" ] && mount -t tmpfs -o ro,mode=755 tmpfs "$dir"
done

findmnt -rn -o TARGET | while read -r target; do
  case $target in /proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /tmp | /var/tmp) continue ;; esac
  mount -o remount,bind,ro "$target" 2>/dev/null || true
done
for dir in "${writable[@]}"; do
  mount --bind "$dir" "$dir"
  mount -o remount,bind,rw "$dir"
done
for dir in /proc/sys /sys; do
  mount --bind "$dir" "$dir" && mount -o remount,bind,ro "$dir" 2>/dev/null || true
done
exec "$@"
