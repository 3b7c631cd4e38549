#!/usr/bin/env bash
# Command-line tests of init, forward, grads, check and generate.
# $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"

# init: a small float64 checkpoint, and a default one.
"$bin" init --out "$work/tiny" --d-model 16 --n-layers 2 --n-heads 4 --n-kv-heads 2 --d-ff 24 \
  --max-len 16 --dtype float64 --seed 3 >/dev/null || fail "init tiny"
for f in model.safetensors config.json glassllm_tokenizer.json; do
  [ -f "$work/tiny/$f" ] || fail "init wrote no $f"
done
grep -q '"torch_dtype": "float64"' "$work/tiny/config.json" || fail "torch_dtype not float64"
# Each size flag lands in its own config.json field.
for field in '"hidden_size": 16' '"num_hidden_layers": 2' '"num_attention_heads": 4' \
  '"num_key_value_heads": 2' '"intermediate_size": 24' '"max_position_embeddings": 16'; do
  grep -q "$field" "$work/tiny/config.json" || fail "config.json lacks $field"
done
one_line_error "n_kv_heads (3) must divide n_heads (4)" "$bin" init --out "$work/bad" --n-kv-heads 3
[ ! -e "$work/bad" ] || fail "a failed init left a folder behind"

# forward: a .npy of shape (1, 3, 99), float64, with the NumPy header.
"$bin" forward "$work/tiny" --tokens 4,5,6 --out "$work/logits.npy" >/dev/null || fail "forward"
head -c 128 "$work/logits.npy" | grep -q "'descr': '<f8', 'fortran_order': False, 'shape': (1, 3, 99)" \
  || fail "npy header: $(head -c 128 "$work/logits.npy" | tail -c 118)"
# 128-byte header + 3*99 float64 values
[ "$(stat -c %s "$work/logits.npy")" -eq $((128 + 3 * 99 * 8)) ] || fail "npy size"
"$bin" forward "$work/tiny" --tokens 4,5,6 --attention grouped --dtype float32 \
  --out "$work/logits32.npy" >/dev/null || fail "forward grouped float32"
head -c 128 "$work/logits32.npy" | grep -q "'<f4'" || fail "--dtype float32 not applied"
one_line_error "token id 200 at position (0, 1) is out of range [0, 99)" "$bin" forward "$work/tiny" --tokens 4,200 --out "$work/x.npy"
one_line_error "'x' is not an integer" "$bin" forward "$work/tiny" --tokens 4,x --out "$work/x.npy"
one_line_error "unknown" "$bin" forward "$work/tiny" --tokens 4 --attention fast --out "$work/x.npy"
one_line_error "config.json" "$bin" forward "$work/nothing" --tokens 4 --out "$work/x.npy"

# grads: one gradient per weight, by name.
"$bin" grads "$work/tiny" --tokens 4,5,6 --targets 5,6,-100 --out "$work/g.safetensors" >/dev/null \
  || fail "grads"
head -c 4000 "$work/g.safetensors" | grep -q "model.layers.1.mlp.down_proj.weight" || fail "grads names"
one_line_error "3 tokens but 2 targets" "$bin" grads "$work/tiny" --tokens 4,5,6 --targets 5,6 --out "$work/g2.safetensors"

# check: four PASS lines, exit 0.
out=$("$bin" check "$work/tiny" --prompt-len 5 --steps 6) || fail "check failed: $out"
[ "$(echo "$out" | grep -c 'PASS$')" -eq 4 ] || fail "check lines: $out"
# It fits a projector (100 columns): what was compared under each check.
[ -z "$(echo "$out" | awk 'length > 100')" ] || fail "check prints over 100 columns: $out"
[ "$(echo "$out" | grep -c '^    compared: ')" -eq 4 ] || fail "check's compared lines: $out"
# --wide: one line per check, what was compared in a column.
out=$("$bin" check "$work/tiny" --prompt-len 5 --steps 6 --wide) || fail "check --wide: $out"
echo "$out" | grep -qE '^incremental == full +prompt 5 \+ 6 decode steps, every logit +[0-9.e+-]+ +1e-10  PASS$' ||
  fail "check --wide: $out"
one_line_error "must be between 1 and max_len 16" "$bin" check "$work/tiny" --prompt-len 10 --steps 10

# generate: greedy is deterministic and starts with the prompt.
a=$("$bin" generate "$work/tiny" --prompt "ab" --max-new-tokens 5) || fail "generate"
b=$("$bin" generate "$work/tiny" --prompt "ab" --max-new-tokens 5 --cache preallocated) || fail "generate prealloc"
[ "$a" = "$b" ] || fail "greedy differs between caches: '$a' vs '$b'"
case "$a" in ab*) ;; *) fail "output does not start with the prompt: $a" ;; esac
s1=$("$bin" generate "$work/tiny" --prompt "ab" --temperature 1 --top-k 5 --seed 7)
s2=$("$bin" generate "$work/tiny" --prompt "ab" --temperature 1 --top-k 5 --seed 7)
[ "$s1" = "$s2" ] || fail "seeded sampling differs"
one_line_error "--prompt is empty" "$bin" generate "$work/tiny" --prompt ""

# The bundled model ends its answers with the end-of-text token (config.json's
# eos_token_id): generation stops there and does not print it.
demo="$(dirname "$0")/../models/demo"
out=$("$bin" generate "$demo" --prompt "R stressed=") || fail "generate demo"
[ "$out" = "R stressed=desserts" ] || fail "expected exactly 'R stressed=desserts', got '$out'"
# --max-new-tokens still caps an answer; --stop ends it at a string, not printed.
out=$("$bin" generate "$demo" --prompt "R stressed=" --max-new-tokens 3)
[ "$out" = "R stressed=des" ] || fail "--max-new-tokens 3: '$out'"
out=$("$bin" generate "$demo" --prompt "C abcabc=" --stop c)
[ "$out" = "C abcabc=ab" ] || fail "--stop c: '$out'"
out=$("$bin" generate "$demo" --prompt "C abcabc=" --stop x --stop bc)
[ "$out" = "C abcabc=a" ] || fail "--stop x --stop bc: '$out'"
one_line_error "--stop: the string is empty" "$bin" generate "$demo" --prompt "C ab=" --stop ""

# A corrupted checkpoint is an error, never a crash.
cp -r "$work/tiny" "$work/broken"
head -c 100 "$work/tiny/model.safetensors" > "$work/broken/model.safetensors"
one_line_error "model.safetensors" "$bin" forward "$work/broken" --tokens 4 --out "$work/x.npy"

for cmd in init forward grads check generate bench; do
  "$bin" "$cmd" --help >/dev/null || fail "$cmd --help"
done
echo "cli_model: all passed"
