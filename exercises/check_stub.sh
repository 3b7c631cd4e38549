#!/bin/bash
# check_stub.sh GRADER N: passes iff GRADER fails exercise N and says
# "Exercise N: not implemented" (CI runs it on the untouched stubs: a grader
# must be able to fail, and say why).
out=$("$1" "$2")
status=$?
echo "$out"
if [[ $status -eq 0 ]]; then
  echo "check_stub: exercise $2 passed, but its untouched stub must fail"
  exit 1
fi
if ! grep -q "Exercise $2: not implemented" <<<"$out"; then
  echo "check_stub: the output does not say 'Exercise $2: not implemented'"
  exit 1
fi
