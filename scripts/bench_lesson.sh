#!/usr/bin/env bash
# bench_lesson.sh: how long the lesson-length run takes to learn. Runs
#   glassllm train --task TASK --out TMP [FLAGS...]
# (copy with the tool's defaults unless told otherwise), then reads its
# metrics.jsonl and prints the wall time to the first held-out evaluation
# at >= 95% exact match, the whole run's wall time and its final accuracy,
# with the CPU model and the load average (the machine is shared: compare
# medians of several runs, not single figures).
#
#   scripts/bench_lesson.sh                      # copy, the defaults
#   scripts/bench_lesson.sh reverse --steps 400  # a lesson command of docs/teaching
#   RUNS=3 BUDGET=60 scripts/bench_lesson.sh     # 3 runs; exit 1 if the median misses 60 s
#
# Exit status 1 when a run never reaches 95% or the median time to 95% is
# over BUDGET seconds (default 60): a regression cannot pass unnoticed.
# Environment: GLASSLLM (the tool; default build/glassllm), RUNS (default 1),
# BUDGET (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${GLASSLLM:-build/glassllm}
runs=${RUNS:-1}
budget=${BUDGET:-60}
task=${1:-copy}
[ $# -gt 0 ] && shift
[ -x "$tool" ] || { echo "bench_lesson: no $tool; build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

times=()
for run in $(seq "$runs"); do
  start=$(date +%s.%N)
  "$tool" train --task "$task" --out "$work/run$run" "$@" > "$work/log$run" 2>&1 \
    || { cat "$work/log$run"; exit 1; }
  end=$(date +%s.%N)
  # elapsed_s of the step lines; eval_accuracy of the evaluations (same step).
  read -r to95 acc < <(awk -v start=0 '
    /"elapsed_s"/ { match($0, /"step":[0-9]+/); s = substr($0, RSTART + 7, RLENGTH - 7);
                    match($0, /"elapsed_s":[0-9.e+-]+/); t[s] = substr($0, RSTART + 12, RLENGTH - 12) }
    /"eval_accuracy"/ { match($0, /"step":[0-9]+/); s = substr($0, RSTART + 7, RLENGTH - 7);
                    match($0, /"eval_accuracy":[0-9.e+-]+/); a = substr($0, RSTART + 16, RLENGTH - 16);
                    last = a; if (a >= 0.95 && hit == "") hit = (s in t ? t[s] : 0) }
    END { printf "%s %s\n", (hit == "" ? "never" : hit), last }' "$work/run$run/metrics.jsonl")
  wall=$(echo "$end - $start" | bc)
  [ "$to95" = never ] || to95=$(printf '%.1f' "$to95")
  printf 'run %d: %s, 95%% held-out exact match after %s s of training; whole run %.1f s wall; final accuracy %.1f%%\n' \
    "$run" "$task" "$to95" "$wall" "$(echo "$acc * 100" | bc -l)"
  [ "$to95" = never ] && { echo "bench_lesson: run $run never reached 95%"; exit 1; }
  times+=("$wall")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}')
median=$(printf '%.1f' "$median")
echo "median whole-run wall time: $median s over $runs run(s) (budget $budget s)"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v m="$median" -v b="$budget" 'BEGIN { exit !(m > b) }'; then
  echo "bench_lesson: the median run took $median s, over the budget of $budget s"
  exit 1
fi
