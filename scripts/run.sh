#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/glassllm gradcheck
