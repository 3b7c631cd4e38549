#!/usr/bin/env bash
# Command-line tests of `glassllm gradcheck`. $1: the glassllm binary.
set -u
bin=$1
fail() { echo "FAIL: $*"; exit 1; }

# One op: a header, its rows, a summary line, exit 0.
out=$("$bin" gradcheck --op softmax) || fail "gradcheck --op softmax exited $?"
echo "$out" | head -1 | grep -q "max abs err" || fail "no table header: $out"
[ "$(echo "$out" | grep -c '^softmax ')" -eq 2 ] || fail "expected two softmax rows: $out"
echo "$out" | grep -q "^2 passed, 0 failed" || fail "no summary: $out"
# Every op's table fits a projector (100 columns); --wide adds the input shapes.
out=$("$bin" gradcheck) || fail "gradcheck exited $?"
wide=$(echo "$out" | awk 'length > 100')
[ -z "$wide" ] || fail "gradcheck prints lines over 100 columns: $wide"
out=$("$bin" gradcheck --op softmax --wide) || fail "gradcheck --wide exited $?"
echo "$out" | grep -qE '^softmax +\(4,3\) axis 0 +\(4,3\) +[0-9.e-]+ +[0-9.e-]+  PASS$' ||
  fail "--wide has no input shapes column: $out"

# An unknown op: one line on stderr naming it, non-zero exit, nothing on stdout.
err=$("$bin" gradcheck --op nosuchop 2>&1 >/dev/null); status=$?
[ $status -ne 0 ] || fail "unknown op exited 0"
[ "$(echo "$err" | wc -l)" -eq 1 ] || fail "error is not one line: $err"
echo "$err" | grep -q "unknown op 'nosuchop'" || fail "error does not name the op: $err"

# Tolerances that no check can meet make it fail with a non-zero exit.
"$bin" gradcheck --op exp --atol 0 --rtol 0 >/dev/null && fail "impossible tolerance passed"

# --help for the tool and the subcommand; a bad flag is a usage error.
"$bin" --help | grep -q gradcheck || fail "--help does not list gradcheck"
"$bin" gradcheck --help | grep -q -- "--op" || fail "gradcheck --help does not list --op"
"$bin" gradcheck --bogus >/dev/null 2>&1 && fail "a bad flag exited 0"
echo "cli_gradcheck: all passed"
