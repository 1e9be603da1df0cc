#!/usr/bin/env bash
# The whole test suite, as CI runs it: install, start a Docker engine if none answers, build the
# sandbox image (cached), run pytest, stop the engine if this run started it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
# A Docker engine for the sandbox, stopped on exit only if this run started it.
source scripts/own-dockerd.sh
automemo sandbox build

export MINIWOB_CHROME_BINARY=/usr/bin/chromium MINIWOB_CHROMEDRIVER=/usr/bin/chromedriver
mkdir -p artifacts
# Two workers, a test file each at a time (its fixtures and order stay together): most of the
# slow tests wait on subprocess searches, browsers and kill loops, so two of them share the two
# cores well (2026-11-29: 894 s against 1379-1478 s in one process, the same 1374 tests passed).
python3 -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=15 "$@"
