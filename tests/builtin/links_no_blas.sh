#!/usr/bin/env bash
# A -DGLASSLLM_BLAS=builtin build links no BLAS library and opens none at run
# time: ldd lists no *blas*/lapack library for the tool and the tests, and
# the dynamic loader's log of a run that multiplies matrices (the gradient
# check of matmul) mentions none.
# Usage: links_no_blas.sh GLASSLLM_BIN TESTS_BIN
set -uo pipefail
bin=$1 tests=$2
source "$(dirname "$0")/../lib_cli.sh"
for exe in "$bin" "$tests"; do
  libs=$(ldd "$exe") || fail "ldd $exe failed"
  if printf '%s\n' "$libs" | grep -iE 'blas|lapack|mkl|accelerate'; then
    fail "$exe links a BLAS library"
  fi
done
LD_DEBUG=files "$bin" gradcheck --op matmul >"$work/out" 2>"$work/loader" ||
  fail "glassllm gradcheck --op matmul failed: $(cat "$work/out")"
grep -q "PASS" "$work/out" || fail "no PASS row: $(cat "$work/out")"
grep -q "file=" "$work/loader" || fail "the loader's log is empty (LD_DEBUG not supported?)"
if grep -iE 'file=[^ ]*(blas|lapack)' "$work/loader"; then
  fail "a BLAS library was opened at run time"
fi
echo "builtin_links_no_blas: OK"
