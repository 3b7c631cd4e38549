#!/usr/bin/env bash
# The README's first command: install what building and running need (only
# that: no test tools), build (the inspector's WebAssembly engine first, so
# the page it leaves can run the model), check every op's gradient, run the
# bundled model on a default prompt, and trace it into the attention
# inspector (one self-contained page).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh run
bash scripts/build-wasm.sh
bash scripts/build.sh -DGLASSLLM_TESTS=OFF
./build/glassllm gradcheck
echo
echo "The bundled model (models/demo) copying a string it has never seen:"
./build/glassllm generate models/demo --prompt "C GlassLM2026="
mkdir -p out
./build/glassllm trace --prompt "C GlassLM2026=" --steps 12 \
  --out out/demo-trace.json --html out/inspector.html
echo
echo "The attention inspector, with that run inside (open it in a browser, offline):"
echo "  $(pwd)/out/inspector.html"
echo
echo "The lessons (docs/teaching/) type ./build/glassllm from this folder. To type"
echo "glassllm anywhere: cmake --install build --prefix ~/.local   (puts it in ~/.local/bin)"
