#!/usr/bin/env bash
# run.sh: build the release preset, then run schedlab's main job. Extra arguments go to the main job.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

bash scripts/setup.sh release

# The main job. To launch the GUI instead, set: main_job=(build/release/app/schedlab)
# Until the GUI lands: four wakeups explained, then a simulated baseline-vs-patch table.
main_job=(build/release/app/schedlab-cli compare resources/scenarios/i7-4790-hackbench-small.json)
build/release/app/schedlab-cli demo
echo

# The GUI needs a display; without one, give it a virtual X server.
if [[ "$(basename "${main_job[0]}")" == "schedlab" && -z "${DISPLAY:-}" ]]; then
  main_job=(xvfb-run -a "${main_job[@]}")
fi

exec "${main_job[@]}" "$@"
