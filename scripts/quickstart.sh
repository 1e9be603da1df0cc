#!/usr/bin/env bash
# The quickstart search: install, start a Docker engine if none answers, build the sandbox
# image, then run a fully offline search on ten real Mem-Gallery scenarios shipped inside the
# package (offline generator as meta agent, retrieval scoring, real sandbox, real MiniLM
# embeddings); its last lines compare the selection with the best hand design on the held-out
# scenarios.
# Extra arguments go to `automemo search` (e.g. --steps 5).
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS=0
bash scripts/install.sh search
bash scripts/start-dockerd.sh
automemo sandbox build
automemo search --preset memgallery-sample "$@"
echo "quickstart: done in $((SECONDS / 60)) min $((SECONDS % 60)) s (install, sandbox image, search, held-out comparison)"
