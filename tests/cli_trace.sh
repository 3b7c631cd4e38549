#!/usr/bin/env bash
# Command-line tests of trace and memory. $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"

# A default-config checkpoint and a 64-character prompt.
"$bin" init --out "$work/m" >/dev/null || fail "init"
prompt=$(printf 'The quick brown fox jumps over the lazy dog; pack my box with fi')
[ ${#prompt} -eq 64 ] || fail "prompt is ${#prompt} characters"

# trace: 1 prefill + 16 decode steps, under about 10 MB at the default precision.
out=$("$bin" trace "$work/m" --prompt "$prompt" --steps 16 --out "$work/t.json") || fail "trace: $out"
echo "$out" | grep -q "17 steps (1 prefill, 16 decode, 0 window reset)" || fail "trace summary: $out"
size=$(stat -c %s "$work/t.json")
[ "$size" -lt 10000000 ] || fail "default trace is $size bytes"
echo "default-config trace, 64-token prompt + 16 decode steps: $size bytes"
grep -q '"format":"glassllm-trace"' "$work/t.json" || fail "no format field"
grep -q '"version":2' "$work/t.json" || fail "no version field"

# --attention-only: only the scores and weights, in a file a third smaller or more.
"$bin" trace "$work/m" --prompt "$prompt" --steps 16 --attention-only --out "$work/a.json" >/dev/null ||
  fail "trace --attention-only"
grep -q '"name":"attn.q"' "$work/a.json" && fail "--attention-only recorded attn.q"
grep -q '"name":"resid.in"' "$work/a.json" && fail "--attention-only recorded resid.in"
grep -q '"name":"attn.softmax"' "$work/a.json" || fail "--attention-only lost attn.softmax"
grep -q '"vectors":false' "$work/a.json" || fail "--attention-only is not in the options"
lean=$(stat -c %s "$work/a.json")
[ $((lean * 3)) -le $((size * 2)) ] || fail "--attention-only trace is $lean bytes against $size"
echo "the same with --attention-only: $lean bytes"

# Window resets record one row each: 128 + 16 (16 resets) stays under 15 MB.
long=$(printf 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. %.0s' 1 2)
"$bin" trace "$work/m" --prompt "${long:0:128}" --steps 16 --out "$work/w.json" >/dev/null || fail "trace 128+16"
grep -c '"kind":"window_reset"' "$work/w.json" >/dev/null || fail "no window reset"
wsize=$(stat -c %s "$work/w.json")
[ "$wsize" -lt 15000000 ] || fail "128 + 16 trace is $wsize bytes"
echo "default-config trace, 128-token prompt + 16 steps (16 window resets): $wsize bytes"

# The repeat_kv path writes repeat_kv nodes; the grouped path none.
"$bin" trace "$work/m" --prompt "ab" --steps 2 --out "$work/r.json" >/dev/null || fail "trace repeat_kv"
"$bin" trace "$work/m" --prompt "ab" --steps 2 --attention grouped --grads --layers 0,3 --heads 1 \
  --precision 3 --out "$work/g.json" >/dev/null || fail "trace grouped --grads"
grep -q '"op":"repeat_kv"' "$work/r.json" || fail "no repeat_kv node on the repeat_kv path"
grep -q '"op":"repeat_kv"' "$work/g.json" && fail "a repeat_kv node on the grouped path"
grep -q '"grad":' "$work/g.json" || fail "--grads wrote no grad"
grep -q '"kind":"decode"' "$work/g.json" || fail "no decode step"

# Without DIR: the bundled model (models/demo), or a clear message without it.
if [ -f models/demo/config.json ]; then
  "$bin" trace --prompt "C ab=" --steps 2 --out "$work/b.json" >/dev/null || fail "trace of the bundled model"
  grep -q '"d_model":128' "$work/b.json" || fail "the bundled model's config is not in the trace"
  # The answer ends with the end-of-text token: 8 characters of "desserts",
  # then the token, chosen at the prefill and 8 decode steps, then no more.
  out=$("$bin" trace --prompt "R stressed=" --steps 20 --out "$work/e.json") || fail "trace eos: $out"
  echo "$out" | grep -q "9 steps (1 prefill, 8 decode, 0 window reset)" || fail "trace eos steps: $out"
  echo "$out" | grep -qx "continuation: desserts (then the end-of-text token)" || fail "trace eos: $out"
  out=$("$bin" trace --prompt "R stressed=" --steps 20 --stop ss --out "$work/s.json") || fail "trace --stop"
  echo "$out" | grep -qx "continuation: de (then a --stop string)" || fail "trace --stop: $out"
else
  one_line_error "there is no bundled model" "$bin" trace --prompt "ab" --out "$work/x.json"
fi
one_line_error "--layers: 4 is out of range [0, 4)" "$bin" trace "$work/m" --prompt ab --layers 4 --out "$work/x.json"
one_line_error "--prompt is empty" "$bin" trace "$work/m" --prompt "" --out "$work/x.json"

# memory: the exaone-4.0-1.2b preset with no flags is float16, the model's own
# dtype, and says so (docs/design.md's cache formula, and the article's figures: 60
# repeats, 960 MiB, 1.88 GiB written + read).
out=$("$bin" memory --preset exaone-4.0-1.2b) || fail "memory: $out"
echo "$out"
[ -z "$(echo "$out" | awk 'length > 100')" ] || fail "memory prints over 100 columns: $out"
echo "$out" | grep -qF "context 4096, float16 (the preset's dtype; --dtype to change)" \
  || fail "preset dtype not in the header"
echo "$out" | grep -qE "total +240.00 MiB +recorded 240.00 MiB" || fail "cache total"
echo "$out" | grep -qE "repeat_kv +60 +960.00 MiB +1920.00 MiB \(1.88 GiB\)" || fail "repeat_kv row"
echo "$out" | grep -qE "grouped +0 +0.00 MiB +0.00 MiB" || fail "grouped row"
# --dtype still overrides the preset's: float32 doubles every byte figure.
out=$("$bin" memory --preset exaone-4.0-1.2b --dtype float32) || fail "memory float32: $out"
echo "$out" | grep -qE "context 4096, float32$" || fail "float32 header: $out"
echo "$out" | grep -qE "total +480.00 MiB +recorded 480.00 MiB" || fail "float32 cache total"
echo "$out" | grep -qE "repeat_kv +60 +1920.00 MiB" || fail "float32 repeat_kv row"
# Default shape: 4 layers, 4 heads, 2 K/V heads, hd 32, 128 positions,
# float32: per layer 2 * 128 * 2 * 32 * 4 = 64 KiB; 8 repeats (K and V x 4
# layers) of [1, 4, 128, 32] * 4 bytes = 64 KiB each = 512 KiB, written and
# read again: 1 MiB.
out=$("$bin" memory) || fail "memory default"
echo "$out" | grep -qE "per layer +64.00 KiB" || fail "default per layer: $out"
echo "$out" | grep -qE "repeat_kv +8 +512.00 KiB +1.00 MiB" || fail "default repeat_kv: $out"
one_line_error "unknown --preset" "$bin" memory --preset llama
one_line_error "must divide" "$bin" memory --n-heads 4 --n-kv-heads 3

for cmd in trace memory; do "$bin" "$cmd" --help >/dev/null || fail "$cmd --help"; done
echo "cli_trace: all passed"
