#!/usr/bin/env bash
# scripts/lesson.sh 1 --no-pause runs lesson 1's commands: the ones its page
# shows (counted here from the page independently), in order, each printed
# before its output, all succeeding, and none printing over 100 columns
# (the projector). It runs them in a temporary folder so that the page the
# lesson makes does not land in the source tree. --lang pt does the same
# from the Portuguese plan, docs/pt/ensino/aula-1-*.md.
# Usage: lesson_runner.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
source "$(dirname "$0")/lib_cli.sh"

# run_lesson PLAN [--lang pt]: lesson 1 from PLAN, in a fresh folder.
run_lesson() {
  local plan=$1 dir
  shift
  dir=$(mktemp -d "$work/lesson-XXXXXX")
  ln -s "$build" "$dir/build"
  ln -s "$src/models" "$dir/models"
  out=$(bash "$src/scripts/lesson.sh" 1 --no-pause --dir "$dir" "$@" 2>&1) ||
    fail "lesson 1 $* failed: $out"
  grep -qF "from ${plan#"$src"/}" <<<"$out" || fail "lesson 1 $* did not read $plan: $out"
  # The commands the page shows: the lines of its sh blocks and the $ lines.
  mapfile -t shown < <(sed -n '/^```sh$/,/^```$/p' "$plan" | grep -v '^```' | grep -v '^$'
    grep '^\$ ' "$plan" | sed 's/^\$ //')
  [ ${#shown[@]} -ge 4 ] || fail "lesson 1 $* shows only ${#shown[@]} commands"
  for cmd in "${shown[@]}"; do
    grep -qF "] \$ $cmd" <<<"$out" || fail "lesson.sh $* did not print '$cmd': $out"
  done
  grep -qx "Lesson 1: ${#shown[@]} commands, 0 failed" <<<"$out" || fail "summary: $out"
  # Printed before its output: the generate command, then the model's answer.
  grep -A1 -F '$ ./build/glassllm generate models/demo --prompt "R stressed="' <<<"$out" |
    grep -qx 'R stressed=desserts' || fail "generate's output does not follow it: $out"
  [ -f "$dir/lesson1.html" ] || fail "the lesson's page was not made in --dir"
  wide=$(awk 'length > 100' <<<"$out")
  [ -z "$wide" ] || fail "lines over 100 columns: $wide"
}

run_lesson "$(ls "$src"/docs/teaching/lesson-1-*.md)"
run_lesson "$(ls "$src"/docs/pt/ensino/aula-1-*.md)" --lang pt

one_line_error "lesson.sh: N must be a lesson number, not 'x'" bash "$src/scripts/lesson.sh" x
one_line_error "lesson.sh: --lang must be en or pt, not 'fr'" \
  bash "$src/scripts/lesson.sh" 1 --lang fr
echo "lesson_runner: OK"
