#!/usr/bin/env bash
# Builds the fuzz targets with clang++ (libFuzzer, AddressSanitizer,
# UndefinedBehaviorSanitizer) in build-fuzz/ and runs each for N seconds
# (default 60), starting from a copy of its corpus in the repository:
#   fuzz_checkpoint  the safetensors reader (and config/tokenizer), tests/data/checkpoint_corpus/
#   fuzz_config      config.json,                                  tests/data/fuzz/config/
#   fuzz_tokenizer   glassllm_tokenizer.json and UTF-8,            tests/data/fuzz/tokenizer/
#   fuzz_hf_tokenizer  a whole Hugging Face tokenizer.json,        tests/data/fuzz/hf_tokenizer/
#   fuzz_numbers     the command line's numbers and printable(),   tests/data/fuzz/numbers/
#   bash fuzz/run.sh                     # every target, 60 seconds each
#   bash fuzz/run.sh 600                 # ten minutes each
#   bash fuzz/run.sh 60 fuzz_numbers     # one target
# As many targets run at once as there are cores, each for N seconds, with
# its output in build-fuzz/<target>.log (the end of it printed when it ends).
# A crash stops that target, fails the run and leaves the input in
# build-fuzz/crashes/<target>/;
# replay it with build-fuzz/fuzz/<target> <file>, and add it to the target's
# corpus once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_checkpoint fuzz_config fuzz_tokenizer fuzz_hf_tokenizer fuzz_numbers)
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DGLASSLLM_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target "${targets[@]}" -j"$(nproc)"
# One target: its fuzzer's output goes to build-fuzz/<target>.log.
fuzz_one() {
  local target=$1 corpus dict
  case $target in
    fuzz_checkpoint) corpus=tests/data/checkpoint_corpus dict=(-dict=fuzz/checkpoint.dict) ;;
    fuzz_config) corpus=tests/data/fuzz/config dict=(-dict=fuzz/checkpoint.dict) ;;
    fuzz_tokenizer) corpus=tests/data/fuzz/tokenizer dict=() ;;
    fuzz_hf_tokenizer) corpus=tests/data/fuzz/hf_tokenizer dict=() ;;
    fuzz_numbers) corpus=tests/data/fuzz/numbers dict=() ;;
    *) echo "unknown fuzz target $target" >&2; return 2 ;;
  esac
  # The fuzzer adds inputs to its corpus folder: work on a copy, so the
  # committed corpus stays as it is.
  rm -rf "build-fuzz/corpus/$target"
  mkdir -p "build-fuzz/corpus/$target" "build-fuzz/crashes/$target"
  cp "$corpus"/* "build-fuzz/corpus/$target/"
  "build-fuzz/fuzz/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    "${dict[@]}" -artifact_prefix="build-fuzz/crashes/$target/" -print_final_stats=1 \
    "build-fuzz/corpus/$target" >"build-fuzz/$target.log" 2>&1
}

# Each fuzzer runs on one core: as many run at once as there are cores, each
# for its full time. A target's log is printed when it ends; the run fails
# if any target found a crash (or could not start).
slots=$(nproc)
failed=()
for ((i = 0; i < ${#targets[@]}; i += slots)); do
  batch=("${targets[@]:i:slots}")
  echo "== ${batch[*]} for $seconds s each =="
  pids=()
  for target in "${batch[@]}"; do
    fuzz_one "$target" &
    pids+=($!)
  done
  for j in "${!batch[@]}"; do
    status=0
    wait "${pids[$j]}" || status=$?
    echo "-- ${batch[$j]} (exit status $status) --"
    tail -n 40 "build-fuzz/${batch[$j]}.log" 2>/dev/null || true
    [ "$status" -eq 0 ] || failed+=("${batch[$j]}")
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found a problem in: ${failed[*]} (inputs in build-fuzz/crashes/, logs in build-fuzz/*.log)" >&2
  exit 1
fi
