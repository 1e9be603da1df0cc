#!/usr/bin/env bash
# The quickstart search: install, start a Docker engine if none answers, build the sandbox
# image, then run a fully offline search on the embedded Mini-Gallery preset (offline parameter
# mutator as meta agent, retrieval scoring, real sandbox, real MiniLM embeddings).
# Extra arguments go to `automemo search` (e.g. --steps 5).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
bash scripts/start-dockerd.sh
automemo sandbox build
automemo search --preset minigallery "$@"
