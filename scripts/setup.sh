#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# setup.sh: install the Debian 12 build dependencies that are missing, then configure and build one preset.
# Usage: scripts/setup.sh [PRESET]   (PRESET: dev (default), asan, release; see CMakePresets.json)
set -euo pipefail

preset="${1:-dev}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  build-essential cmake ninja-build ccache pkg-config
  qt6-base-dev qt6-svg-dev libqcustomplot-dev
  libboost-graph-dev libgtest-dev libgmock-dev libbenchmark-dev
  libhwloc-dev hwloc nlohmann-json3-dev libcli11-dev libfmt-dev zlib1g-dev
  libtracecmd-dev libtraceevent-dev libtracefs-dev trace-cmd rt-tests
  xvfb xauth libgl-dev parallel help2man desktop-file-utils clang-format
)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for pkg in "${packages[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
  done
else
  echo "setup.sh: dpkg-query not found (not Debian?); skipping package installation" >&2
fi

if ((${#missing[@]} > 0)); then
  if [[ "$(id -u)" -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "setup.sh: missing packages (${missing[*]}) and not root, no sudo to install them" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  # Recommends are kept on purpose: qt6-qpa-plugins (the offscreen/xcb platform plugins) is only a Recommends.
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

cd "$repo_root"
cmake --preset "$preset"
cmake --build --preset "$preset"
