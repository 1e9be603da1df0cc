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
python3 -m pytest -q -p no:cacheprovider --durations=15 "$@"
