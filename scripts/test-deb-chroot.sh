#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test-deb-chroot.sh: installs the .deb that `cpack -G DEB` builds into a fresh Debian 12
# (bookworm) chroot made by debootstrap, with apt resolving its dependencies from the Debian
# mirror as on a new machine, then runs the installed programs there as a user would:
# `schedlab-cli scenarios` and `schedlab-cli run NAME` from the installed scenarios, the man page,
# and the window started from its desktop entry's Exec line under Xvfb (a screenshot proves it drew).
#
#   sudo scripts/test-deb-chroot.sh [BUILD_DIR] [CHROOT_DIR]
#
# Needs root (debootstrap, chroot) and the network (the Debian mirror); takes about 10 minutes
# and 1 GB of disk the first time (the chroot is reused and refreshed after). Not part of the
# test suite for those reasons. Exit status 0 when every check passed.
set -euo pipefail

BUILD=${1:-build/release}
ROOT=${2:-/tmp/schedlab-deb-chroot}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

fail() {
    echo "test-deb-chroot: $*" >&2
    exit 1
}
[ "$(id -u)" = 0 ] || fail "run as root (debootstrap and chroot need it)"
[ -d "$BUILD" ] || fail "$BUILD: no build directory (cmake --preset release first)"
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null

echo "== the package"
(cd "$BUILD" && cpack -G DEB >/dev/null)
DEB=$(ls -t "$BUILD"/schedlab_*_amd64.deb | head -1)
[ -f "$DEB" ] || fail "cpack made no .deb in $BUILD"
echo "$DEB ($(du -h "$DEB" | cut -f1))"

echo "== a fresh Debian 12 in $ROOT"
if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
    rm -rf "$ROOT"
    debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >/dev/null
fi
mounted=()
cleanup() {
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
for m in proc sys dev dev/pts; do
    mount --bind "/$m" "$ROOT/$m"
    mounted+=("$ROOT/$m")
done
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
in_root dpkg -s schedlab >/dev/null 2>&1 && in_root apt-get purge -y -qq schedlab >/dev/null
in_root apt-get update -qq

echo "== apt install ./$(basename "$DEB") (its dependencies from the mirror)"
cp "$DEB" "$ROOT/tmp/"
DEBIAN_FRONTEND=noninteractive in_root apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$DEB")" >/dev/null
in_root dpkg -s schedlab | grep -E '^(Version|Depends):'

echo "== the CLI, as installed"
in_root schedlab-cli --version
in_root schedlab-cli scenarios | head -3
in_root schedlab-cli run i7-4790-hackbench-small | grep -E 'Time:|steady|settled' | head -3 || fail "schedlab-cli run from the installed scenarios failed"
in_root sh -c 'test -f /usr/share/man/man1/schedlab-cli.1 || test -f /usr/share/man/man1/schedlab-cli.1.gz' || fail "no man page"
in_root test -f /usr/share/applications/schedlab.desktop || fail "no desktop entry"
in_root test -f /usr/share/icons/hicolor/scalable/apps/schedlab.svg || fail "no icon"

echo "== the window, from its desktop entry, under Xvfb"
DEBIAN_FRONTEND=noninteractive in_root apt-get install -y -qq --no-install-recommends xvfb xauth >/dev/null
EXEC=$(in_root sed -n 's/^Exec=//p' /usr/share/applications/schedlab.desktop | head -1 | sed 's/ %[fFuU]//g')
[ -n "$EXEC" ] || fail "the desktop entry has no Exec line"
echo "Exec=$EXEC"
rm -f "$ROOT/tmp/deb-window.png"
# shellcheck disable=SC2086  # Exec is a command line
in_root xvfb-run -a $EXEC --run-for 20ms --screenshot /tmp/deb-window.png >/dev/null 2>&1 || fail "the window did not start"
[ -s "$ROOT/tmp/deb-window.png" ] || fail "the window wrote no screenshot"
cp "$ROOT/tmp/deb-window.png" "${TMPDIR:-/tmp}/schedlab-deb-window.png"
echo "screenshot: ${TMPDIR:-/tmp}/schedlab-deb-window.png"
echo "== every check passed"
