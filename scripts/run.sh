#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh: build the release preset, then run schedlab's main job: the GUI on its default scenario
# (hackbench -g 32 -f 20 --threads --pipe on 2 x EPYC 9654, baseline vs idle-delay-v2, side by side).
# Extra arguments go to the GUI (e.g. --scenario resources/scenarios/aaron-hackbench-spr-g20.json).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

bash scripts/setup.sh release

main_job=(build/release/app/schedlab)

# The GUI needs a display; without one, give it a virtual X server and say so.
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" && -z "${QT_QPA_PLATFORM:-}" ]]; then
  echo "run.sh: no display; starting the GUI under xvfb-run (invisible). For a picture instead:" >&2
  echo "  build/release/app/schedlab --run-for 60ms --screenshot schedlab.png" >&2
  main_job=(xvfb-run -a "${main_job[@]}")
fi

exec "${main_job[@]}" "$@"
