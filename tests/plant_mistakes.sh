#!/usr/bin/env bash
# Writes a copy of every exercise's solution with the mistake of
# tests/planted_mistakes.txt planted in it, into OUT_DIR (the build compiles
# them into glassllm_exercises_planted). Fails if a solution no longer has
# the line a mistake replaces, so the list cannot silently go stale.
# Usage: plant_mistakes.sh SOURCE_DIR OUT_DIR
set -euo pipefail
src=$1 out=$2
mkdir -p "$out"
sep=' ||| '
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  n=${line%%"$sep"*}; rest=${line#*"$sep"}
  from=${rest%%"$sep"*}; rest=${rest#*"$sep"}
  to=${rest%%"$sep"*}
  solution=$(ls "$src"/exercises/solutions/"$(printf 'ex%02d_' "$n")"*.cpp)
  text=$(<"$solution")
  planted=${text/"$from"/"$to"}
  if [[ $planted == "$text" ]]; then
    echo "plant_mistakes: $solution has no line '$from' (tests/planted_mistakes.txt, exercise $n)" >&2
    exit 1
  fi
  printf '%s\n' "$planted" >"$out/$(basename "$solution").tmp"
  # Rewrite only what changed, so that the build does not recompile the rest.
  if cmp -s "$out/$(basename "$solution").tmp" "$out/$(basename "$solution")"; then
    rm "$out/$(basename "$solution").tmp"
  else
    mv "$out/$(basename "$solution").tmp" "$out/$(basename "$solution")"
  fi
done <"$src/tests/planted_mistakes.txt"
