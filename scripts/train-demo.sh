#!/usr/bin/env bash
# train-demo.sh OUT: trains the bundled model (models/demo/) again from
# scratch with ./build/glassllm, into the new folder OUT. Nothing else is
# touched: to replace the bundled model, copy OUT's files into models/demo/
# yourself (models/demo/README.md shows how).
#
# Two runs, both written down here so that one command repeats them:
#   1. from random weights, 8000 steps of mix+accents (the four tasks, half
#      the strings with accented letters) at the design's full size;
#   2. 1000 steps more at a tenth of the peak learning rate on fresh data
#      (seed 1), starting from run 1's weights (--init-from): it lifts sort
#      and add by a point or two, which the end of run 1's schedule did not.
# Run 1 goes to OUT.scratch, which is kept. With the same thread count
# (GLASSLLM_THREADS, 2 here) and the same machine the result repeats bit
# for bit; another CPU's BLAS kernels round differently, so its model is
# different but as good.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage() { echo "train-demo.sh: $1 (usage: scripts/train-demo.sh OUT)" >&2; exit 2; }
[ $# -eq 1 ] || usage "give one folder to write"
out="$1"
for dir in "$out" "$out.scratch"; do
  [ ! -e "$dir" ] || usage "$dir exists; name a new folder (nothing is overwritten)"
done
glassllm="$root/build/glassllm"
[ -x "$glassllm" ] || { echo "train-demo.sh: $glassllm not found; run scripts/build.sh" >&2; exit 1; }
export GLASSLLM_THREADS="${GLASSLLM_THREADS:-2}"

"$glassllm" train --task mix+accents --out "$out.scratch" --steps 8000 --batch-size 16 \
  --lr 1e-3 --warmup 100 --n-layers 4 --d-ff 384 --max-len 128 \
  --eval-every 500 --save-every 500 --log-every 100
"$glassllm" train --task mix+accents --init-from "$out.scratch" --out "$out" --steps 1000 \
  --batch-size 16 --lr 1e-4 --warmup 30 --seed 1 \
  --eval-every 250 --save-every 250 --log-every 100
# The optimizer state is only needed to resume; the bundled folder leaves it out.
rm "$out/optimizer.safetensors"
"$glassllm" eval "$out" --seed 20261130 --batches 256
