#!/usr/bin/env bash
# Command-line tests of the GEMM choice (glassllm/fast/gemm_choice.cpp): the
# first product of more than 8 rows measures which GEMM is faster for each
# kind of product and caches it in $XDG_CACHE_HOME/glassllm/gemm-choice.txt;
# a damaged file is said to be damaged (one line) and replaced; a folder
# that cannot be written changes nothing but the speed; GLASSLLM_GEMM
# overrides it, and a bad value is a one-line error. With the builtin
# backend there is nothing to choose and no file. Which GEMM wins is never
# asserted: it is measured.
# $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"
export GLASSLLM_THREADS=1
unset GLASSLLM_GEMM

"$bin" init --out "$work/m" --d-model 16 --n-layers 1 --n-heads 2 --n-kv-heads 1 --d-ff 32 \
  --max-len 40 >/dev/null || fail "init"
tokens=1,2,3,4,5,6,7,8,9,10,11,12  # 12 rows: past the few-rows kernels
forward() {  # forward CACHE_HOME: runs a forward pass, prints its stderr
  XDG_CACHE_HOME=$1 "$bin" forward "$work/m" --tokens $tokens --out "$work/o.npy" \
    2>&1 >/dev/null || fail "forward with XDG_CACHE_HOME=$1"
}
backend=$("$bin" bench --json --only ops --runs 1 | sed -n 's/^ *"blas_backend": "\(.*\)",$/\1/p')
[ -n "$backend" ] || fail "bench printed no blas_backend"
file=$work/cache/glassllm/gemm-choice.txt

# A bad value, in every build: one line naming the variable, the value and
# the choices.
one_line_error "GLASSLLM_GEMM='fast' is not a GEMM choice (library, builtin or measure)" \
  env GLASSLLM_GEMM=fast "$bin" forward "$work/m" --tokens $tokens --out "$work/o.npy"
# Every command reads it before it starts: train makes no run folder.
one_line_error "GLASSLLM_GEMM='fast' is not a GEMM choice (library, builtin or measure)" \
  env -u GLASSLLM_THREADS GLASSLLM_GEMM=fast "$bin" train --task copy --steps 1 --out "$work/run"
[ ! -e "$work/run" ] || fail "train with a bad GLASSLLM_GEMM made $work/run"
# A cache folder that cannot be made: no message, no failure.
err=$(forward /dev/null/cache)
[ -z "$err" ] || fail "unwritable cache: stderr $err"

err=$(forward "$work/cache")
[ -z "$err" ] || fail "forward wrote to stderr: $err"
if [ "$backend" != openblas ]; then
  # Nothing to choose: nothing measured, no file.
  [ ! -e "$file" ] || fail "a $backend build wrote $file"
  echo "ok ($backend backend: nothing to choose)"
  exit 0
fi

# The file: a header, the key, one line per dtype, kind and size.
[ -f "$file" ] || fail "no cache file $file"
[ "$(head -n 1 "$file")" = glassllm-gemm-choice ] || fail "header: $(cat "$file")"
sed -n 2p "$file" | grep -q '^key format 2; glassllm .*; cpu ' || fail "key: $(cat "$file")"
for d in float32 float64; do
  for k in NN NT TN; do
    for z in small large; do
      grep -Eq "^$d $k $z (library|builtin) [0-9.]+ [0-9.]+\$" "$file" ||
        fail "no $d $k $z: $(cat "$file")"
    done
  done
done
[ "$(wc -l <"$file")" -eq 14 ] || fail "not 14 lines: $(cat "$file")"
ls "$work/cache/glassllm" | grep -q tmp && fail "temporary file left: $(ls "$work/cache/glassllm")"

# A second process reads the file and leaves it as it was.
before=$(sha256sum <"$file")
err=$(forward "$work/cache")
[ -z "$err" ] || fail "second forward wrote to stderr: $err"
[ "$(sha256sum <"$file")" = "$before" ] || fail "the second process changed the file"

# The same logits whichever GEMM is forced, to float32 rounding: compared as
# numbers by the unit tests; here only that each override runs.
for mode in library builtin; do
  GLASSLLM_GEMM=$mode "$bin" forward "$work/m" --tokens $tokens --out "$work/o_$mode.npy" \
    >/dev/null || fail "GLASSLLM_GEMM=$mode"
done
[ "$(sha256sum <"$file")" = "$before" ] || fail "an override changed the file"

# A damaged file: one line saying so, then replaced by a good one.
echo "glassllm-gemm-choice" >"$file"
err=$(forward "$work/cache")
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "not one line about the damaged file: $err"
printf '%s' "$err" | grep -q "gemm-choice.txt is damaged" || fail "message: $err"
[ "$(wc -l <"$file")" -eq 14 ] || fail "damaged file not replaced: $(cat "$file")"

# A file made for another machine: replaced silently.
sed -i '2s/.*/key format 2; another machine/' "$file"
err=$(forward "$work/cache")
[ -z "$err" ] || fail "another key: stderr $err"
sed -n 2p "$file" | grep -q '; cpu ' || fail "another key's file not replaced: $(cat "$file")"

# GLASSLLM_GEMM=measure measures again and replaces the file.
GLASSLLM_GEMM=measure XDG_CACHE_HOME=$work/cache "$bin" forward "$work/m" --tokens $tokens \
  --out "$work/o.npy" >/dev/null 2>"$work/err" || fail "GLASSLLM_GEMM=measure"
[ ! -s "$work/err" ] || fail "measure: stderr $(cat "$work/err")"
[ "$(wc -l <"$file")" -eq 14 ] || fail "measure: $(cat "$file")"

# Overrides write no file.
GLASSLLM_GEMM=builtin XDG_CACHE_HOME=$work/none "$bin" forward "$work/m" --tokens $tokens \
  --out "$work/o.npy" >/dev/null || fail "GLASSLLM_GEMM=builtin"
[ ! -e "$work/none" ] || fail "GLASSLLM_GEMM=builtin wrote a cache"

echo "ok"
