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
chmod +x "$W/small_disk.sh" "$W/with_lock.sh"

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
echo "cli_bad_inputs: $cases cases, $failed failed"
[ "$cases" -ge 100 ] || fail "only $cases cases"
[ "$failed" -eq 0 ] || exit 1
