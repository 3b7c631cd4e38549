#!/usr/bin/env bash
# Writes tests/data/checkpoint_corpus/: small hand-made safetensors, config.json
# and tokenizer files, most of them broken in one named way. The tests check
# the error each one gives; the fuzzer (fuzz/run.sh) starts from them.
#
# Run it from anywhere; it rewrites the folder's content byte for byte, so a
# diff after running it shows any change:  bash tools/make_checkpoint_corpus.sh
set -euo pipefail
export LC_ALL=C  # ${#s} counts bytes, not characters
out="$(cd "$(dirname "$0")/.." && pwd)/tests/data/checkpoint_corpus"
mkdir -p "$out"

# le64 N: N as 8 little-endian bytes (the safetensors header length).
le64() {
  local n=$1 i fmt=""
  for i in 0 1 2 3 4 5 6 7; do fmt+=$(printf '\\x%02x' $(((n >> (8 * i)) & 255))); done
  printf "$fmt"
}

# st FILE JSON DATA: a safetensors file with the header JSON (its true length)
# and DATA, a printf format string for the data buffer's bytes.
st() {
  { le64 ${#2}; printf '%s' "$2"; printf "$3"; } > "$out/$1"
}

# text FILE CONTENT: a file holding exactly CONTENT.
text() { printf '%s' "$2" > "$out/$1"; }

zeros() { local i s=""; for ((i = 0; i < $1; i++)); do s+='\x00'; done; printf '%s' "$s"; }

# ---- safetensors: valid -----------------------------------------------------------
# "a": F32 [1.0, -2.0] = 00 00 80 3f, 00 00 00 c0; "b": F64 [0.5] = 3fe0000000000000.
st valid_f32_f64.safetensors \
  '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F64","shape":[1],"data_offsets":[8,16]}}' \
  '\x00\x00\x80\x3f\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\xe0\x3f'
# "h": F16 [1.0, 2^-24 (smallest subnormal), inf, -2.0] = 3c00 0001 7c00 c000;
# "b": BF16 [1.0, -inf] = 3f80 ff80.
st valid_f16_bf16.safetensors \
  '{"h":{"dtype":"F16","shape":[4],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}}' \
  '\x00\x3c\x01\x00\x00\x7c\x00\xc0\x80\x3f\x80\xff'
st valid_empty.safetensors '{}' ''
st valid_metadata.safetensors \
  '{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}}    ' \
  '\x00\x00\x40\x40'

# ---- safetensors: broken ----------------------------------------------------------
printf '\x01\x02\x03\x04\x05' > "$out/too_short.safetensors"
{ le64 1000; printf '{"a":1}'; } > "$out/header_too_long.safetensors"
{ le64 $((1 << 40)); printf '{}'; } > "$out/header_absurd.safetensors"
st not_json_header.safetensors '{not json}' ''
st header_not_object.safetensors '[1,2]' ''
st entry_not_object.safetensors '{"w":5}' ''
st bad_dtype.safetensors '{"w":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}' '\x00'
st negative_shape.safetensors '{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}' '\x00\x00\x00\x00'
st bad_offsets.safetensors '{"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}' "$(zeros 8)"
st offsets_past_end.safetensors '{"w":{"dtype":"F32","shape":[16],"data_offsets":[0,64]}}' "$(zeros 8)"
st truncated_data.safetensors '{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}' "$(zeros 10)"
st size_mismatch.safetensors \
  '{"lm_head.weight":{"dtype":"F32","shape":[5,4],"data_offsets":[0,100]}}' "$(zeros 100)"
st overlapping_offsets.safetensors \
  '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}' \
  "$(zeros 12)"
st gap_in_data.safetensors \
  '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}' \
  "$(zeros 12)"
st trailing_bytes.safetensors '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}' "$(zeros 8)"
st duplicate_name.safetensors \
  '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}' \
  "$(zeros 8)"
st number_overflow.safetensors '{"w":{"dtype":"F32","shape":[1E400],"data_offsets":[0,4]}}' '\x00\x00\x00\x00'
st metadata_not_string.safetensors '{"__metadata__":{"format":1}}' ''
st shape_overflow.safetensors \
  '{"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}}' '\x00\x00\x00\x00'

# ---- config.json ------------------------------------------------------------------
config() {  # config FILE BODY: a config.json with BODY spliced in before the sizes
  text "$1" "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", $2\"intermediate_size\": 16, \"num_attention_heads\": 2, \"num_hidden_layers\": 1, \"num_key_value_heads\": 1, \"max_position_embeddings\": 8, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"vocab_size\": 5, \"tie_word_embeddings\": false, \"hidden_act\": \"silu\", \"torch_dtype\": \"float32\"}"
}
config config_valid.json '"hidden_size": 8, '
config config_missing_hidden_size.json ''
config config_wrong_type.json '"hidden_size": "8", '
config config_negative_size.json '"hidden_size": -8, '
config config_bad_head_dim.json '"hidden_size": 8, "head_dim": 2, '
config config_rope_scaling.json '"hidden_size": 8, "rope_scaling": {"type": "linear", "factor": 2.0}, '
config config_attention_bias.json '"hidden_size": 8, "attention_bias": true, '
config config_duplicate_key.json '"hidden_size": 8, "hidden_size": 16, '
sed 's/"silu"/"gelu"/' "$out/config_valid.json" > "$out/config_gelu.json"
text config_not_llama.json '{"model_type": "gpt2", "n_embd": 8}'
text config_not_json.json '{"model_type": "llama",'
# Found by the fuzzer: nlohmann reports a number beyond a double as out_of_range.
text config_number_overflow.json '{"model_type": "llama", "hidden_size": 1E400}'

# ---- glassllm_tokenizer.json ------------------------------------------------------
tok() { text "$1" "{\"format\": \"glassllm-char-tokenizer\", \"version\": $2, \"tokens\": $3, \"unk_token\": \"\\uFFFD\"}"; }
tok tokenizer_valid.json 1 '["a", "b", "\n", "\u00e9", "\uFFFD"]'
tok tokenizer_duplicate.json 1 '["a", "b", "a", "\uFFFD"]'
tok tokenizer_two_chars.json 1 '["ab", "\uFFFD"]'
tok tokenizer_unk_not_last.json 1 '["\uFFFD", "a"]'
tok tokenizer_not_string.json 1 '["a", 7, "\uFFFD"]'
tok tokenizer_wrong_version.json 2 '["a", "\uFFFD"]'
printf '{"format": "glassllm-char-tokenizer", "version": 1, "tokens": ["a", "\xff", "\\uFFFD"], "unk_token": "\\uFFFD"}' \
  > "$out/tokenizer_bad_utf8.json"
text tokenizer_wrong_format.json '{"format": "bpe", "version": 1, "tokens": [], "unk_token": "\uFFFD"}'
