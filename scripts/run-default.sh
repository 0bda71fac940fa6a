#!/usr/bin/env bash
# Fresh machine -> the main job: set up, build, predict the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/cli/trainsim run scenarios/default.json "$@"
