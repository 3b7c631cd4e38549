#!/usr/bin/env bash
# Command-line tests of `glassllm trace --html`: one self-contained page with
# the trace inside, whose token text cannot end the script element.
# $1: the glassllm binary. The page itself is tested in tests/viewer/.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"

"$bin" init --out "$work/m" >/dev/null || fail "init"
prompt='a</script><script>alert(1)</script><!--<script> b'
out=$("$bin" trace "$work/m" --prompt "$prompt" --steps 1 --html "$work/p.html") || fail "trace --html: $out"
echo "$out" | grep -q "wrote $work/p.html: 2 steps" || fail "summary: $out"
[ ! -e "$work/p.html.tmp" ] || fail "temporary file left behind"
grep -q '<script type="application/json" id="trace">{"format":"glassllm-trace","version":2,' "$work/p.html" || fail "no embedded trace"
[ "$(grep -o '<script' "$work/p.html" | wc -l)" -eq "$(grep -o '</script>' "$work/p.html" | wc -l)" ] ||
  fail "unbalanced script elements"
grep -q 'alert(1)' "$work/p.html" && fail "the prompt's text appears unescaped"
grep -qE '<script[^>]* src=|<link[^>]* href=' "$work/p.html" && fail "the page loads another file"
err=$("$bin" trace "$work/m" --prompt ab 2>&1 >/dev/null) && fail "no output accepted"
printf '%s' "$err" | grep -q "nowhere to write" || fail "error: $err"
echo "ok"
