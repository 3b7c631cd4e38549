#!/usr/bin/env bash
# The README's second command: install what building and the tests need,
# build (the live inspector's WebAssembly engine first, so the page embeds
# it), run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
bash scripts/build-wasm.sh
bash scripts/build.sh -DGLASSLLM_TESTS=ON
ctest --test-dir build --output-on-failure -j"$(nproc)"
