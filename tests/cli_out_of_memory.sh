#!/usr/bin/env bash
# Running out of memory is reported, not a crash: with the process's memory
# limited to 600 MB (ulimit -v), `glassllm init` of a model that needs more
# fails with exit status 4 and one line, "out of memory; choose smaller
# sizes", and writes no folder. This holds on the tool's allocator
# (cli/allocator.cpp): mimalloc's own operator new would abort instead of
# throwing std::bad_alloc. Skipped for a sanitized build, whose runtime
# reserves far more address space than the limit at start-up.
# $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"

if ldd "$bin" | grep -qE 'libasan|libtsan|libubsan'; then
  echo "skipped: $bin is built with a sanitizer"
  exit 0
fi
big=(--d-model 1024 --n-layers 16 --n-heads 8 --n-kv-heads 4 --d-ff 4096 --max-len 512)
err=$( (ulimit -v 600000 && "$bin" init --out "$work/big" "${big[@]}") 2>&1 >/dev/null)
status=$?
[ $status -eq 4 ] || fail "init under a 600 MB limit: exit $status, not 4: $err"
[ "$err" = "glassllm init: out of memory; choose smaller sizes" ] ||
  fail "init under a 600 MB limit said: $err"
[ ! -e "$work/big" ] || fail "init left $work/big behind"
# The same model without the limit is only a few hundred MB too many for
# it, not an impossible size: init of a quarter of it fits and succeeds.
small=(--d-model 512 --n-layers 4 --n-heads 8 --n-kv-heads 4 --d-ff 2048 --max-len 512)
(ulimit -v 600000 && "$bin" init --out "$work/small" "${small[@]}" >/dev/null) ||
  fail "init of a smaller model under the same limit failed"
echo "ok"
