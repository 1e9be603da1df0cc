#!/usr/bin/env bash
# The whole test suite, as CI runs it: install, start a Docker engine if none answers, build the
# sandbox image (cached), run pytest, stop the engine we started.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
# Stop the engine we started whatever happens: a background dockerd left holding CI's output
# pipe would keep the CI run open until its time limit.
trap 'bash scripts/stop-dockerd.sh' EXIT
bash scripts/start-dockerd.sh
automemo sandbox build

export MINIWOB_CHROME_BINARY=/usr/bin/chromium MINIWOB_CHROMEDRIVER=/usr/bin/chromedriver
mkdir -p artifacts
python3 -m pytest -q -p no:cacheprovider --durations=15 "$@"
