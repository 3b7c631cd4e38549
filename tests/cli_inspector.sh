#!/usr/bin/env bash
# Command-line tests of `glassllm inspector --out page.html [DIR]`: the page
# with the WebAssembly engine and the model inside, or, in a build without the
# engine, one line saying how to build it. $1: the glassllm binary, $2: its
# build folder. The page itself is tested in tests/viewer/live.test.mjs.
set -u
bin=$1
build=$2
source "$(dirname "$0")/lib_cli.sh"

"$bin" inspector --help | grep -q -- "--out" || fail "inspector --help"
"$bin" init --out "$work/m" >/dev/null || fail "init"
if grep -q '<script id="engine"></script>' "$build/viewer/inspector.html"; then
  # Built without the engine: the page template has an empty engine element.
  one_line_error "built without the WebAssembly engine; run scripts/build-wasm.sh, then scripts/build.sh" \
    "$bin" inspector --out "$work/p.html" "$work/m"
  [ ! -e "$work/p.html" ] || fail "a page was written without the engine"
  "$bin" trace "$work/m" --prompt ab --steps 1 --html "$work/t.html" 2>"$work/err" >/dev/null ||
    fail "trace --html without the engine"
  [ ! -s "$work/err" ] || fail "trace --html printed: $(cat "$work/err")"
  grep -q '<script type="application/json" id="model"></script>' "$work/t.html" ||
    fail "a page without the engine holds a model"
  echo "ok (no engine)"
  exit 0
fi

out=$("$bin" inspector --out "$work/p.html" "$work/m") || fail "inspector: $out"
echo "$out" | grep -q "wrote $work/p.html: the inspector with $work/m and its engine" || fail "summary: $out"
grep -q '<script type="application/json" id="model">{"folder":"m","config":"{' "$work/p.html" ||
  fail "no embedded model"
grep -q '<script type="application/json" id="trace"></script>' "$work/p.html" || fail "a trace in it"
grep -q 'var GlassLMEngine' "$work/p.html" || fail "no engine"
grep -qE '<script[^>]* src=|<link[^>]* href=' "$work/p.html" && fail "the page loads another file"
# The weights, base64 in the page, are the file's bytes.
python3 - "$work/p.html" "$work/m/model.safetensors" <<'PY' || fail "weights differ"
import base64, json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
model = json.loads(re.search(r'<script type="application/json" id="model">(.*?)</script>', page, re.S).group(1))
assert base64.b64decode(model["weights"]) == open(sys.argv[2], "rb").read()
PY

# trace --html puts the model in its page too.
"$bin" trace "$work/m" --prompt ab --steps 1 --html "$work/t.html" >/dev/null || fail "trace --html"
grep -q '<script type="application/json" id="model">{"folder":"m"' "$work/t.html" || fail "trace page: no model"

# Too big for a page (16 MiB): refused, by name and size; trace --html notes it and writes the page.
"$bin" init --out "$work/big" --d-model 512 --n-layers 3 --d-ff 2048 >/dev/null || fail "init big"
one_line_error "the page cannot run $work/big: model.safetensors is 45 MiB; a page holds a model of at most 16 MiB" \
  "$bin" inspector --out "$work/b.html" "$work/big"
[ ! -e "$work/b.html" ] || fail "a page was written for a model too big"
err=$("$bin" trace "$work/big" --prompt ab --steps 1 --html "$work/bt.html" 2>&1 >/dev/null) || fail "trace --html big: $err"
printf '%s' "$err" | grep -q "note: the page has no live generation: the page cannot run" || fail "note: $err"
grep -q '<script type="application/json" id="model">{"refused":"the page cannot run' "$work/bt.html" ||
  fail "the big model's page does not say why"

# No glassllm_tokenizer.json; the output over an input; a broken folder.
mkdir -p "$work/nt" && cp "$work/m/config.json" "$work/m/model.safetensors" "$work/nt/"
one_line_error "it has no glassllm_tokenizer.json" "$bin" inspector --out "$work/n.html" "$work/nt"
one_line_error "--out" "$bin" inspector --out "$work/m/config.json" "$work/m"
printf '{' >"$work/m/config.json"
one_line_error "$work/m/config.json" "$bin" inspector --out "$work/x.html" "$work/m"
[ ! -e "$work/x.html" ] || fail "a page was written for a broken folder"
echo "ok"
