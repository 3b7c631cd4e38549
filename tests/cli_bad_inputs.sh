#!/usr/bin/env bash
# The bad-input suite: every command given what a careless or hostile user
# may give it, from a table (tests/data/bad_inputs.tsv), one case a line:
#   <exit status> TAB <word the message must contain> TAB <command>
# For each case it checks that the command
#   - exits with that status (docs/errors-and-safety.md lists them) within 60 s,
#   - writes exactly one line on stderr, starting "glassllm", containing the
#     word, with no raw control character (a file's escape sequences are
#     printed escaped),
#   - leaves every file that existed before byte-identical (sha256), and
#     leaves no temporary file behind.
# The command runs under `eval` with these set:
#   $G  the glassllm binary          $W  the scratch folder
#   $M  a small checkpoint           $NAN  $M with a nan in lm_head.weight
#   $BIG  $M claiming 2^31 positions $RUN  a finished training run of $M's size
#   $FIFO  a named pipe with no writer
#   $W/small_disk.sh CMD...   runs CMD with a 2 KiB file-size limit (a full disk)
#   $W/with_lock.sh F CMD...  runs CMD while another process holds a lock on F
#   $W/as_user.sh CMD...      runs CMD as a user who cannot write in $W/read_only
# $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"
table="$(dirname "$0")/data/bad_inputs.tsv"
export GLASSLLM_THREADS=1

G=$bin
W=$work
M=$work/m
NAN=$work/nan
BIG=$work/big
RUN=$work/run
FIFO=$work/fifo
tiny=(--d-model 16 --n-layers 1 --n-heads 2 --n-kv-heads 1 --d-ff 32 --max-len 40)

# ---- fixtures ------------------------------------------------------------------------
"$bin" init --out "$M" "${tiny[@]}" >/dev/null || fail "init"
cp -r "$M" "$NAN"
# The last 4 bytes of the weight file are lm_head.weight's last element
# (written last): a float32 nan, little-endian.
size=$(stat -c %s "$NAN/model.safetensors")
printf '\x00\x00\xc0\x7f' | dd of="$NAN/model.safetensors" bs=1 seek=$((size - 4)) \
  conv=notrunc status=none
cp -r "$M" "$BIG"
sed -i 's/"max_position_embeddings": 40/"max_position_embeddings": 2147483648/' \
  "$BIG/config.json"
grep -q 2147483648 "$BIG/config.json" || fail "big config"
"$bin" train --task copy --out "$RUN" "${tiny[@]}" --batch-size 2 --steps 2 --eval-every 0 \
  --eval-batches 1 >/dev/null || fail "train fixture"
mkfifo "$FIFO"
# Checkpoint folders with one file replaced by something that is not a file.
for f in model.safetensors config.json glassllm_tokenizer.json; do
  cp -r "$M" "$W/fifo_$f" && rm "$W/fifo_$f/$f" && mkfifo "$W/fifo_$f/$f"
done
cp -r "$M" "$W/dir_config" && rm "$W/dir_config/config.json" && mkdir "$W/dir_config/config.json"
cp -r "$M" "$W/dev_weights" && rm "$W/dev_weights/model.safetensors" &&
  ln -s /dev/zero "$W/dev_weights/model.safetensors"
cp -r "$M" "$W/esc_config"
sed -i 's/"model_type": "llama"/"model_type": "\\u001b[2J\\u001b]0;pwned\\u0007llama"/' \
  "$W/esc_config/config.json"
cp -r "$M" "$W/empty_weights" && : > "$W/empty_weights/model.safetensors"
cp -r "$M" "$W/junk_tokenizer" && echo '{"format": 1' > "$W/junk_tokenizer/glassllm_tokenizer.json"
# Text files that are not text, or not in the vocabulary.
printf 'some text\0\1\2\3 and a NUL byte %.0s' $(seq 200) > "$W/binary.txt"
printf 'caf\xe9 latin-1, not UTF-8 %.0s' $(seq 200) > "$W/latin1.txt"
printf '\xe6\x96\x87\xe5\xad\x97%.0s' $(seq 400) > "$W/cjk.txt"
printf 'short\n' > "$W/short.txt"
mkdir "$W/a_folder"
echo "not a folder" > "$W/a_file"
# Outputs that exist already, and links to inputs.
echo "a good old result" > "$W/old.npy"
echo "a good old trace" > "$W/old.json"
echo "my own notes" > "$W/model.safetensors.tmp"
ln "$M/model.safetensors" "$W/hardlink.safetensors"
ln -s "$M/config.json" "$W/symlink.json"
# A user's folders named like a run's own.
mkdir "$W/user.saving" && echo "mine" > "$W/user.saving/notes.txt"
mkdir "$W/notrun" "$W/notrun.previous" && echo "mine" > "$W/notrun.previous/notes.txt"
esc_dir="$W/$(printf 'ckpt\033[31mred')"
# ---- hostile JSON, tokenizers, run states and model folders -------------------------
# N repeats of a string, without a shell loop.
rep() { yes "$2" | head -n "$1" | tr -d '\n'; }
deep=$(rep 100000 '[')$(rep 100000 ']')
# 8-byte little-endian length, then the header: a safetensors file.
safetensors() {
  local n=${#1}
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' $((n & 255)) \
    $(((n >> 8) & 255)) $(((n >> 16) & 255)) $(((n >> 24) & 255)))"
  printf '%s' "$1"
}
for f in deep_config deep_weights deep_index deep_gtok dup_config type_config layers_config \
  huge_layers wrap_shape; do cp -r "$M" "$W/$f"; done
printf '{"a": %s, "b": 1}' "$deep" > "$W/deep_config/config.json"
safetensors "{\"w\": $deep, \"b\": 1}" > "$W/deep_weights/model.safetensors"
rm "$W/deep_index/model.safetensors"
printf '{"weight_map": %s, "b": 1}' "$deep" > "$W/deep_index/model.safetensors.index.json"
printf '{"format": %s, "b": 1}' "$deep" > "$W/deep_gtok/glassllm_tokenizer.json"
sed -i 's/"hidden_size": 16,/"hidden_size": 16, "hidden_size": 16,/' "$W/dup_config/config.json"
sed -i 's/"num_hidden_layers": 1/"num_hidden_layers": "one"/' "$W/type_config/config.json"
sed -i 's/"num_hidden_layers": 1/"num_hidden_layers": 1000/' "$W/layers_config/config.json"
sed -i 's/"num_hidden_layers": 1/"num_hidden_layers": 2147483648/' "$W/huge_layers/config.json"
safetensors '{"w": {"dtype": "F32", "shape": [18446744073709551615], "data_offsets": [0, 0]}}' \
  > "$W/wrap_shape/model.safetensors"
# A small Hugging Face tokenizer folder, and hostile variants of it.
hf_tok='{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, '
hf_tok+='"added_tokens": [{"id": 3, "content": "<s>", "special": true}]'
mkdir "$W/hf"
printf '%s}' "$hf_tok" > "$W/hf/tokenizer.json"
printf '"ab"\n"ba"\n' > "$W/hf/texts.jsonl"
hf() {  # hf NAME TOKENIZER_JSON [TOKENIZER_CONFIG_JSON]
  mkdir "$W/$1" && printf '%s' "$2" > "$W/$1/tokenizer.json"
  [ $# -lt 3 ] || printf '%s' "$3" > "$W/$1/tokenizer_config.json"
}
seq_deep() {  # a PART (normalizer, ...) of Sequences N deep, with LIST its steps' key
  printf '"%s": %s null %s' "$1" "$(rep "$3" "{\"type\": \"Sequence\", \"$2\": [")" \
    "$(rep "$3" ']}')"
}
hf hf_deep_norm "$hf_tok, $(seq_deep normalizer normalizers 100000)}"
hf hf_deep_pre "$hf_tok, $(seq_deep pre_tokenizer pretokenizers 100000)}"
hf hf_deep_dec "$hf_tok, $(seq_deep decoder decoders 100000)}"
hf hf_deep_post "$hf_tok, $(seq_deep post_processor processors 100000)}"
hf hf_seq17 "$hf_tok, $(seq_deep normalizer normalizers 17)}"
hf hf_deep_model "{\"model\": $deep, \"b\": 1}"
hf hf_deep_config "$hf_tok}" "{\"bos_token\": $deep, \"b\": 1}"
hf hf_huge_id '{"model": {"type": "BPE", "vocab": {"a": 4611686018427387904}, "merges": []}}'
hf hf_neg_id '{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}'
hf hf_huge_added "${hf_tok/\"id\": 3/\"id\": 4611686018427387904}}"
hf hf_bad_type '{"model": {"type": "BPE", "byte_fallback": "yes", "vocab": {}, "merges": []}}'
hf hf_merge_type '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [7]}}'
hf hf_content_type "${hf_tok/\"content\": \"<s>\"/\"content\": 7}}"
hf hf_config_type "$hf_tok}" '{"add_bos_token": "yes"}'
hf hf_config_list "$hf_tok}" '[]'
hf hf_config_junk "$hf_tok}" '{"bos_token": }'
hf hf_template_neg "$hf_tok, \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}}, {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<s>\": {\"ids\": [-5]}}}}"
hf hf_regex "$hf_tok, \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a+)+\$\"}, \"behavior\": \"Isolated\"}}"
hf hf_dup_key '{"model": {"type": "BPE", "vocab": {"a": 0, "a": 1}, "merges": []}}'
hf hf_junk '{"model": {"type": "BPE", "vocab": {"a": 0,}, "merges": []}}'
hf hf_long_string "{\"model\": {\"type\": \"$(rep 100000 x)\"}}"
printf '%s\n' "\"$(rep 40 a)b\"" > "$W/hf_regex/text.jsonl"
printf '%s\n' "$deep" > "$W/deep.jsonl"
printf '"ab"\n7\n' > "$W/number.jsonl"
printf '"ab"\n{"a": \n' > "$W/junk.jsonl"
# A model whose vocabulary (99) is larger than its tokenizer.json's (3 + 1).
cp -r "$M" "$W/small_vocab" && rm "$W/small_vocab/glassllm_tokenizer.json"
printf '%s}' "$hf_tok" > "$W/small_vocab/tokenizer.json"
# A Hugging Face model folder (shards, index, tokenizer files) to write over.
cp -r "$M" "$W/hfm" && cp "$W/hf/tokenizer.json" "$W/hfm/tokenizer.json"
printf '{}' > "$W/hfm/tokenizer_config.json"
echo "my notes" > "$W/hfm/notes.txt"
cp "$M/model.safetensors" "$W/hfm/model-00001-of-00002.safetensors"
printf '{"weight_map": {}}' > "$W/hfm/model.safetensors.index.json"
ln -s "$W/hfm/tokenizer.json" "$W/tok_link.json"
ln "$W/hfm/tokenizer_config.json" "$W/tok_config_hardlink.json"
ln -s loop_b "$W/loop_a" && ln -s loop_a "$W/loop_b"
# Edited run states: each a copy of $RUN with one field changed.
state_case() {  # state_case NAME SED_EXPRESSION
  cp -r "$RUN" "$W/$1" && sed -i "$2" "$W/$1/trainer_state.json"
  grep -q . "$W/$1/trainer_state.json" || fail "state $1"
}
state_case st_steps 's/"steps": 2,/"steps": -5,/'
state_case st_step 's/"step": 2,/"step": -1,/'
state_case st_step_past 's/"step": 2,/"step": 99,/'
state_case st_threads 's/"threads": [0-9]*/"threads": 100000/'
state_case st_no_options 's/"options"/"opts"/'
state_case st_lr 's/"lr": [0-9.e-]*/"lr": "fast"/'
state_case st_dtype 's/"dtype": "float32"/"dtype": "float16"/'
state_case st_size 's/"d_model": 16/"d_model": 0/'
state_case st_format 's/"glassllm-trainer-state"/"other"/'
cp -r "$RUN" "$W/st_deep" && printf '{"format": %s, "b": 1}' "$deep" > "$W/st_deep/trainer_state.json"
cp -r "$RUN" "$W/st_junk" && printf '{"step": ' > "$W/st_junk/trainer_state.json"
cp -r "$RUN" "$W/mt_deep" && printf '%s\n' "$deep" >> "$W/mt_deep/metrics.jsonl"
cp -r "$RUN" "$W/mt_elapsed" && echo '{"step": 1, "elapsed_s": "x"}' >> "$W/mt_elapsed/metrics.jsonl"
cp -r "$RUN" "$W/mt_step" && echo '{"step": -3}' >> "$W/mt_step/metrics.jsonl"
cp -r "$RUN" "$W/mt_junk" && echo '{"step": 1' >> "$W/mt_junk/metrics.jsonl"
cat > "$W/small_disk.sh" <<'SH'
#!/usr/bin/env bash
# Runs "$@" with a 2 KiB file-size limit: writes past it fail with EFBIG.
trap '' XFSZ
ulimit -f 2
exec "$@"
SH
cat > "$W/with_lock.sh" <<'SH'
#!/usr/bin/env bash
# Runs "$@" (a second process) while this one holds an exclusive lock on $1.
lock=$1; shift
exec 9>>"$lock"
flock -x 9
"$@"
SH
cat > "$W/as_user.sh" <<'SH'
#!/usr/bin/env bash
# Runs "$@" as a user who may not write into folders it does not own: as
# nobody when this runs as root (for root, a read-only folder is writable),
# else as this user.
if [ "$(id -u)" -eq 0 ]; then
  exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
fi
exec "$@"
SH
chmod +x "$W/small_disk.sh" "$W/with_lock.sh" "$W/as_user.sh"
# A read-only folder (for nobody, a folder root owns is one too). The scratch
# folder is opened to others so that nobody can read the fixtures.
mkdir "$W/read_only" && chmod 555 "$W/read_only"
chmod 755 "$W"

# ---- the cases -----------------------------------------------------------------------
snapshot() {  # every regular file under $work and models/demo, with its checksum
  find "$work" models/demo -path "$work/stderr" -prune -o -type f -print0 |
    xargs -0 sha256sum | LC_ALL=C sort
}
cases=0 failed=0
while IFS=$'\t' read -r want_status word cmd; do
  [ -z "$want_status" ] || [ "${want_status:0:1}" = "#" ] && continue
  cases=$((cases + 1))
  before=$(snapshot)
  eval "timeout -k 5 60 $cmd" </dev/null >/dev/null 2>"$work/stderr"
  status=$?
  after=$(snapshot)
  err=$(cat "$work/stderr")
  problem=""
  if [ "$status" -eq 124 ]; then
    problem="timed out (hung)"
  elif [ "$status" -ne "$want_status" ]; then
    problem="exit status $status, expected $want_status"
  elif [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || [ -z "$err" ]; then
    problem="stderr is not one line"
  elif [ "${err:0:8}" != "glassllm" ]; then
    problem="message does not start with 'glassllm'"
  elif ! printf '%s' "$err" | grep -qF -- "$word"; then
    problem="message does not contain '$word'"
  elif LC_ALL=C tr -d '\n' <"$work/stderr" | LC_ALL=C grep -q '[[:cntrl:]]'; then
    problem="raw control characters on stderr"
  elif changed=$(LC_ALL=C comm -23 <(printf '%s\n' "$before") <(printf '%s\n' "$after")) &&
    [ -n "$changed" ]; then
    problem="changed or removed: $(printf '%s' "$changed" | awk '{print $2}' | tr '\n' ' ')"
  elif leftover=$(find "$work" -name '*.tmp-*') && [ -n "$leftover" ]; then
    problem="temporary file left: $leftover"
  fi
  if [ -n "$problem" ]; then
    failed=$((failed + 1))
    echo "FAIL case $cases: $cmd"
    echo "     $problem"
    echo "     stderr: $err"
  fi
done < "$table"

# A weight file whose one BF16 tensor is 512 GiB (a sparse file: it takes no
# disk) needs 1 TiB as float32: refused from its header, before any copy is
# allocated. Not a table case: the table's checksums would read it all.
cp -r "$M" "$W/terabyte"
safetensors '{"w": {"dtype": "BF16", "shape": [274877906944], "data_offsets": [0, 549755813888]}}' \
  > "$W/terabyte/model.safetensors"
truncate -s +512G "$W/terabyte/model.safetensors" || fail "cannot make a sparse 512 GiB file"
cases=$((cases + 1))
err=$(timeout -k 5 60 "$bin" forward "$W/terabyte" --tokens 1 --out "$W/o.npy" 2>&1 >/dev/null)
status=$?
if [ $status -ne 4 ] || [[ $err != "glassllm forward: $W/terabyte/model.safetensors: loading its tensors needs about 1 TiB, more than the "* ]]; then
  failed=$((failed + 1))
  echo "FAIL: a 512 GiB BF16 tensor: exit $status: $err"
fi
rm -rf "$W/terabyte"
echo "cli_bad_inputs: $cases cases, $failed failed"
[ "$cases" -ge 100 ] || fail "only $cases cases"
[ "$failed" -eq 0 ] || exit 1
