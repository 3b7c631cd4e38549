#!/usr/bin/env bash
# Each exercise's grader, run on its solution with one typical mistake
# planted (tests/planted_mistakes.txt, compiled into
# glassllm_exercises_planted), fails it and prints a hint that names that
# mistake: the hints are chosen by the checks that failed.
# With `pt`, the same in Brazilian Portuguese (GLASSLLM_LANG=pt): the verdict,
# the check lines' OK/ERRO and the hints, whose parts to find are in
# tests/planted_mistakes_pt.txt.
# Usage: planted_mistakes.sh SOURCE_DIR PLANTED_GRADER [en|pt]
set -uo pipefail
src=$1 grader=$2 lang=${3:-en}
fail() { echo "FAIL: $*"; exit 1; }
sep=' ||| '
if [ "$lang" = pt ]; then
  run() { env -u LC_ALL -u LC_MESSAGES LANG=C GLASSLLM_LANG=pt "$grader" "$@"; }
  verdict='Exercício %s (.*): FALHOU$' hint_prefix='  dica: ' ok=OK bad=ERRO
  hints_file=$src/tests/planted_mistakes_pt.txt
else  # English whatever the environment says
  run() { env -u LC_ALL -u LC_MESSAGES -u GLASSLLM_LANG LANG=C "$grader" "$@"; }
  verdict='Exercise %s (.*): FAIL$' hint_prefix='  hint: ' ok=PASS bad=FAIL
  hints_file=$src/tests/planted_mistakes.txt
fi
count=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  n=${line%%"$sep"*}
  hint=${line##*"$sep"}
  out=$(run "$n" 2>&1) && fail "exercise $n passed with its planted mistake: $out"
  # shellcheck disable=SC2059
  grep -q "^$(printf "$verdict" "$n")" <<<"$out" || fail "exercise $n: no FAIL verdict: $out"
  # Every check line ends with this language's word for passed or failed.
  other=$(grep -E '^  [^ ].*  [A-Z]+$' <<<"$out" | grep -Ev "  ($ok|$bad)$")
  [ -z "$other" ] || fail "exercise $n: check lines in another language: $other"
  grep -qE "  $bad$" <<<"$out" || fail "exercise $n: no failed check line: $out"
  # The report is wrapped at 100 columns: join each hint with its continuation lines.
  hints=$(awk -v p="$hint_prefix" 'index($0, p) == 1 {if (h != "") print h; h = $0; next}
    /^      / && h != "" {sub(/^ +/, ""); h = h " " $0; next}
    {if (h != "") print h; h = ""} END {if (h != "") print h}' <<<"$out")
  grep -qF -- "$hint" <<<"$hints" ||
    fail "exercise $n: no hint naming the planted mistake ('$hint'): $out"
  # A table row fits whole: its status is never wrapped onto a line of its own.
  ! grep -qE "^ +($ok|$bad)$" <<<"$out" || fail "exercise $n: a status wrapped alone: $out"
  # Columns are characters (an accented letter is two bytes), as bash counts in UTF-8.
  wide=$(LC_ALL=C.UTF-8 && while IFS= read -r l; do ((${#l} <= 100)) || echo "$l"; done <<<"$out")
  [ -z "$wide" ] || fail "exercise $n: lines over 100 columns: $wide"
  # Chosen, not the whole list: the one hint of that mistake, no other.
  [ "$(grep -c "$hint_prefix" <<<"$out")" -eq 1 ] ||
    fail "exercise $n printed more than one hint: $out"
  count=$((count + 1))
done <"$hints_file"
[ $count -eq 10 ] || fail "expected a planted mistake for each of the 10 exercises, found $count"
echo "planted_mistakes ($lang): OK ($count exercises)"
