#!/usr/bin/env bash
# Builds the checkpoint fuzzer with clang++ (libFuzzer, AddressSanitizer,
# UndefinedBehaviorSanitizer) in build-fuzz/ and runs it for N seconds
# (default 60), starting from a copy of tests/data/checkpoint_corpus/.
#   bash fuzz/run.sh        # 60 seconds
#   bash fuzz/run.sh 600    # ten minutes
# A crash stops the run and leaves the input in build-fuzz/crashes/; replay it
# with build-fuzz/fuzz/fuzz_checkpoint build-fuzz/crashes/crash-..., add it
# to tools/make_checkpoint_corpus.sh once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DGLASSLLM_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz_checkpoint -j"$(nproc)"
# The fuzzer adds inputs to its corpus folder: work on a copy, so the
# committed corpus stays as it is.
mkdir -p build-fuzz/corpus build-fuzz/crashes
cp tests/data/checkpoint_corpus/* build-fuzz/corpus/
build-fuzz/fuzz/fuzz_checkpoint -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -dict=fuzz/checkpoint.dict -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1 \
  build-fuzz/corpus
