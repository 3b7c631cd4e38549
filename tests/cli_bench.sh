#!/usr/bin/env bash
# Command-line test of bench --only: the groups asked for are measured and
# printed, the others are not (the whole bench takes a minute; one group a
# second). Timings are only checked to be positive numbers: speed is measured
# by the bench, never asserted by a test.
# $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"

out=$("$bin" bench --json --only ops --runs 3) || fail "bench --only ops: $out"
# One "key": value line each (the JSON is printed two-space indented).
for key in add_1x4x1x32_no_grad_us add_1x4x1x32_tape_us; do
  echo "$out" | awk -v k="\"$key\":" '$1 == k { v = $2 + 0; found = 1 } END { exit !(found && v > 0) }' ||
    fail "bench --only ops: no positive $key in $out"
done
echo "$out" | grep -q '"blas_backend":' || fail "bench --only ops: no blas_backend"
# The allocator it names is the one the binary is linked with (ldd).
if ldd "$bin" | grep -q libmimalloc; then want='"allocator": "mimalloc '; else
  want='"allocator": "the C library'"'"'s malloc"'
fi
echo "$out" | grep -qF "$want" || fail "bench --only ops: no $want in $out"
# No other group ran.
for key in train_step_ms_float32 attention_exaone_grouped_ms matmul_16x4x128x32_f32_gflops \
  tracer_overhead_ratio train_step_contended_ms_float32 decode_smollm2_135m_tokens_per_s; do
  echo "$out" | grep -q "\"$key\"" && fail "bench --only ops measured $key"
done
text=$("$bin" bench --only ops --runs 3) || fail "bench --only ops (text): $text"
echo "$text" | grep -q "recording the tape" || fail "no per-op overhead printed: $text"
echo "$text" | grep -q "Matrix products" && fail "--only ops printed the matrix products"
one_line_error "unknown --only group 'nope'" "$bin" bench --only ops,nope
echo "ok"
