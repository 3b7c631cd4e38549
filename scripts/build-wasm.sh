#!/usr/bin/env bash
# Builds the inspector page's engine -- GlassLM in WebAssembly, one JavaScript
# file -- into build/wasm/glassllm_engine.js with Debian's emscripten
# (scripts/install-deps.sh run installs it), then reconfigures build/ (when
# it exists) so the next scripts/build.sh embeds it in the inspector page.
# A separate step: it roughly doubles a clean build's time (README).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v emcmake >/dev/null 2>&1; then
  echo "build-wasm: emcmake not found; install emscripten and node-acorn (scripts/install-deps.sh run)" >&2
  exit 1
fi
# Debian's emscripten runs its JavaScript tools with Node and finds acorn there.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
emcmake cmake -S web -B build/wasm -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build/wasm -j"$(nproc)"
if [ -f build/CMakeCache.txt ]; then cmake build >/dev/null; fi
echo "build-wasm: wrote build/wasm/glassllm_engine.js ($(wc -c <build/wasm/glassllm_engine.js) bytes)"
