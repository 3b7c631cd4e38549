#!/bin/bash
# reset.sh N | all: puts a fresh copy of exercise N's stub (or of every stub)
# into exercises/student/, the working copy that the exNN tests grade. A file
# already there that differs from the stub is kept as FILE.bak.
#   exercises/reset.sh all     # the first time: copy every stub
#   exercises/reset.sh 6       # start exercise 6 again
# Then rebuild (cmake --build build) and grade: ctest --test-dir build -L ex06.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -ne 1 || ! ( $1 == all || $1 =~ ^[0-9]+$ ) ]]; then
  echo "usage: $0 N | all" >&2
  exit 2
fi
if [[ $1 == all ]]; then
  pattern="ex*.cpp"
else
  pattern=$(printf "ex%02d_*.cpp" "$((10#$1))")
fi
shopt -s nullglob
stubs=("$here"/stubs/$pattern)
if [[ ${#stubs[@]} -eq 0 ]]; then
  echo "$0: no exercise $1 (see exercises/stubs/)" >&2
  exit 2
fi
mkdir -p "$here/student"
for stub in "${stubs[@]}"; do
  mine="$here/student/$(basename "$stub")"
  if [[ -f $mine ]] && ! cmp -s "$stub" "$mine"; then
    cp "$mine" "$mine.bak"
    echo "kept your old $(basename "$mine") as $(basename "$mine").bak"
  fi
  cp "$stub" "$mine"
  echo "exercises/student/$(basename "$stub"): fresh stub"
done
