#!/usr/bin/env bash
# Each exercise's grader, run on its solution with one typical mistake
# planted (tests/planted_mistakes.txt, compiled into
# glassllm_exercises_planted), fails it and prints a hint that names that
# mistake: the hints are chosen by the checks that failed.
# Usage: planted_mistakes.sh SOURCE_DIR PLANTED_GRADER
set -uo pipefail
src=$1 grader=$2
fail() { echo "FAIL: $*"; exit 1; }
sep=' ||| '
count=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  n=${line%%"$sep"*}
  hint=${line##*"$sep"}
  out=$("$grader" "$n" 2>&1) && fail "exercise $n passed with its planted mistake: $out"
  grep -q "^Exercise $n (.*): FAIL$" <<<"$out" || fail "exercise $n: no FAIL verdict: $out"
  # The report is wrapped at 100 columns: join each hint with its continuation lines.
  hints=$(awk '/^  hint: /{if (h != "") print h; h = $0; next}
    /^      / && h != "" {sub(/^ +/, ""); h = h " " $0; next}
    {if (h != "") print h; h = ""} END {if (h != "") print h}' <<<"$out")
  grep -qF -- "$hint" <<<"$hints" ||
    fail "exercise $n: no hint naming the planted mistake ('$hint'): $out"
  wide=$(awk 'length > 100' <<<"$out")
  [ -z "$wide" ] || fail "exercise $n: lines over 100 columns: $wide"
  # Chosen, not the whole list: the one hint of that mistake, no other.
  [ "$(grep -c '  hint: ' <<<"$out")" -eq 1 ] || fail "exercise $n printed more than one hint: $out"
  count=$((count + 1))
done <"$src/tests/planted_mistakes.txt"
[ $count -eq 10 ] || fail "expected a planted mistake for each of the 10 exercises, found $count"
echo "planted_mistakes: OK ($count exercises)"
