#!/usr/bin/env bash
# The long differential run: 20,000 random op graphs (every op of ops.h,
# broadcasting, reuse, 0-d and size-0 shapes, float32 and float64) through
# the engine and through PyTorch, values and gradients compared; a failing
# graph is shrunk and printed (tests/differential/differential.py). ctest
# runs 300 of them as differential_short; .ci/run runs this.
# Usage: scripts/differential.sh [BUILD_DIR [GRAPHS [SEED]]]
# Needs BUILD_DIR/opgraph (scripts/build.sh) and Debian's python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
graphs=${2:-20000}
seed=${3:-2}
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "differential: python3-torch is missing; run scripts/install-deps.sh" >&2
  exit 1
fi
if [ ! -x "$build/opgraph" ]; then
  echo "differential: $build/opgraph is missing; run scripts/build.sh" >&2
  exit 1
fi
exec /usr/bin/python3 tests/differential/differential.py --engine "$build/opgraph" \
  --graphs "$graphs" --seed "$seed"
