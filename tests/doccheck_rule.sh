#!/usr/bin/env bash
# doccheck's comparison rule (docs/README.md, "Contributing to the docs") on
# the small pages in tests/data/doccheck/: blocks whose numbers differ only
# by rounding pass; every real change is reported; --update rewrites the
# stale blocks and only those.
# Usage: doccheck_rule.sh DOCCHECK
set -uo pipefail
doccheck=$1
data="$(cd "$(dirname "$0")" && pwd)/data/doccheck"
source "$(dirname "$0")/lib_cli.sh"

out=$("$doccheck" "$data/pass" "$data/build" 2>&1) || fail "pass page reported stale: $out"
[ "$out" = "doccheck: 5 blocks, 0 stale" ] || fail "pass page: $out"

out=$("$doccheck" "$data/fail" "$data/build" 2>&1) && fail "fail page passed: $out"
grep -qx "doccheck: 9 blocks, 9 stale" <<<"$out" || fail "fail page: $out"
# Each stale block is named by the line of its opening fence.
for line in 6 13 24 35 44 55 65 74 80; do
  grep -q "page.md:$line: block" <<<"$out" || fail "block at line $line not reported: $out"
done

# --update on copies: the stale blocks become the program's output, and the
# blocks that match by the rule keep the page's digits.
cp -r "$data/pass" "$data/fail" "$work/"
"$doccheck" "$work/pass" "$data/build" --update >/dev/null 2>&1 || fail "--update on the pass page"
cmp -s "$work/pass/docs/page.md" "$data/pass/docs/page.md" || fail "--update changed a matching block"
"$doccheck" "$work/fail" "$data/build" --update >/dev/null 2>&1 || fail "--update on the fail page"
"$doccheck" "$work/fail" "$data/build" >/dev/null || fail "the fail page is still stale after --update"
grep -q "max abs err 1.2e-02" "$work/fail/docs/page.md" || fail "--update did not write the new output"

# Training runs: figures and answers may differ, the steps, the format and
# the questions may not; the run gets a fresh folder, removed afterwards.
train="$data/training"
mkdir -p "$work/tmp"
out=$(TMPDIR="$work/tmp" "$doccheck" "$train/pass" "$train/build" 2>&1) ||
  fail "training pass page reported stale: $out"
[ "$out" = "doccheck: 1 blocks, 0 stale" ] || fail "training pass page: $out"
[ -z "$(ls -A "$work/tmp")" ] || fail "the run folder was left behind: $(ls "$work/tmp")"
out=$(TMPDIR="$work/tmp" "$doccheck" "$train/fail" "$train/build" 2>&1) &&
  fail "training fail page passed: $out"
grep -qx "doccheck: 4 blocks, 4 stale" <<<"$out" || fail "training fail page: $out"

# A bad rounding level in a marker: one line naming the file, the value and what is allowed.
mkdir -p "$work/bad/docs"
printf '```console rounding level below tiny\n$ ./build/examples/numbers\n```\n' \
  >"$work/bad/docs/page.md"
one_line_error "page.md:1: rounding level 'tiny' is not a positive number (e.g. 1e-4)" \
  "$doccheck" "$work/bad" "$data/build"

# The old hidden markers are refused: the command must be visible.
mkdir -p "$work/hidden/docs"
printf '<!-- output: examples/numbers.cpp -->\n```text\n```\n' >"$work/hidden/docs/page.md"
one_line_error "page.md:1: hidden command marker '<!-- output: examples/numbers.cpp -->...'; show the command instead, as the first line of a \`\`\`console block: \$ ./build/..." \
  "$doccheck" "$work/hidden" "$data/build"

# Variables before the command: a value the shell would expand is not a
# command line (the block is not run), and a variable's effect is compared.
mkdir -p "$work/vars/docs"
printf '```console\n$ GLASSLLM_LANG=$(touch %s) ./build/examples/language\n```\n' \
  "$work/ran" >"$work/vars/docs/page.md"
out=$("$doccheck" "$work/vars" "$data/build" 2>&1) || fail "shell syntax: $out"
[ "$out" = "doccheck: 0 blocks, 0 stale" ] || fail "shell syntax was run as a command: $out"
[ ! -e "$work/ran" ] || fail "a variable's value was expanded by the shell"
printf '```console\n$ GLASSLLM_LANG=pt ./build/examples/language\nGLASSLLM_LANG=en VAR=unset\n```\n' \
  >"$work/vars/docs/page.md"
out=$("$doccheck" "$work/vars" "$data/build" 2>&1) && fail "a wrong language passed: $out"
grep -q "page.md:1: block for 'GLASSLLM_LANG=pt ./build/examples/language' differs" <<<"$out" ||
  fail "the stale block with a variable was not named: $out"

# A lesson plan's command block wider than a projector (100 columns) fails.
mkdir -p "$work/wide/docs/teaching"
{
  printf '```console\n$ ./build/examples/numbers\n'
  "$data/build/examples/numbers"
  printf '```\n'
} >"$work/wide/docs/teaching/lesson.md"
"$doccheck" "$work/wide" "$data/build" >/dev/null 2>&1 || fail "a lesson's narrow block failed"
sed -i 's/^loss 4.5911 after 12 steps in float64$/&&&/' "$work/wide/docs/teaching/lesson.md"
out=$("$doccheck" "$work/wide" "$data/build" 2>&1) && fail "a 111-column lesson line passed: $out"
grep -q "lesson.md:5: 111 columns; a lesson's command must print at most 100" <<<"$out" ||
  fail "the wide line was not named: $out"
# The same rule holds for the Portuguese lesson plans, docs/pt/ensino/, and
# for no other folder named ensino or pt.
mkdir -p "$work/wide-pt/docs/pt/ensino" "$work/wide-pt/docs/ensino" "$work/wide-pt/docs/pt/outro"
cp "$work/wide/docs/teaching/lesson.md" "$work/wide-pt/docs/pt/ensino/aula.md"
out=$("$doccheck" "$work/wide-pt" "$data/build" 2>&1) && fail "a 111-column pt lesson line passed: $out"
grep -q "ensino/aula.md:5: 111 columns; a lesson's command must print at most 100" <<<"$out" ||
  fail "the wide pt line was not named: $out"
mv "$work/wide-pt/docs/pt/ensino/aula.md" "$work/wide-pt/docs/ensino/aula.md"
cp "$work/wide-pt/docs/ensino/aula.md" "$work/wide-pt/docs/pt/outro/aula.md"
out=$("$doccheck" "$work/wide-pt" "$data/build" 2>&1)
grep -q "columns" <<<"$out" && fail "a page outside the lesson folders was held to 100 columns: $out"
echo "doccheck_rule: OK"
