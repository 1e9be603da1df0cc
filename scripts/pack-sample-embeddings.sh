#!/usr/bin/env bash
# Rebuild the MiniLM vectors shipped with the quickstart's data set
# (automemo/data/mem-gallery-sample/embeddings.all-MiniLM-L6-v2.npz): run the quickstart search
# (its held-out comparison included, so the test split's texts are embedded too), then pack every
# text vector of its embedding cache. Run it after changing the sample, a seed or the generator;
# a stale pack is not wrong (it is ignored, or serves only the texts it holds), only slower.
# Extra arguments go to `automemo search`.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=$(mktemp -d)
python3 -m automemo search --preset memgallery-sample --runs-dir "$runs" "$@"
python3 -m automemo.toolkit.embedding_pack "$runs"/*/episodes/embeddings.sqlite automemo/data/mem-gallery-sample
rm -rf "$runs"
