#!/usr/bin/env bash
# Command-line tests of train and eval: a tiny run, its folder, metrics.jsonl,
# the refusal to overwrite, Ctrl-C (SIGINT) saving and --resume, eval.
# $1: the glassllm binary.
set -u
bin=$1
source "$(dirname "$0")/lib_cli.sh"
export GLASSLLM_THREADS=1
tiny=(--d-model 16 --n-layers 1 --n-heads 2 --n-kv-heads 1 --d-ff 32 --max-len 40 --batch-size 4)

# A tiny run: output is not a terminal, so plain lines every --log-every steps.
out=$("$bin" train --task copy --out "$work/run" --steps 20 --log-every 5 --eval-every 10 \
  --eval-batches 1 "${tiny[@]}") || fail "train: $out"
for f in model.safetensors config.json glassllm_tokenizer.json optimizer.safetensors \
  trainer_state.json metrics.jsonl; do
  [ -f "$work/run/$f" ] || fail "train wrote no $f"
done
[ "$(echo "$out" | grep -c '^step ')" -eq 4 ] || fail "expected 4 progress lines: $out"
echo "$out" | grep -q '^step 20/20 loss [0-9.]* lr .* tok/s | ETA' || fail "progress line: $out"
echo "$out" | grep -q '^eval at step 20: loss [0-9.]* | accuracy [0-9.]*% (copy ' || fail "eval line: $out"
echo "$out" | grep -q "^finished 20 steps: saved $work/run" || fail "final line: $out"
# Each evaluation shows two held-out questions with the model's answers.
[ "$(echo "$out" | grep -cE '^  C [0-9A-Za-z]+= -> .*   (right|wrong, expected [0-9A-Za-z]+)$')" -eq 6 ] \
  || fail "expected 2 sample answers at each of 3 evaluations: $out"
# metrics.jsonl: 4 step objects and 3 evaluations (steps 0, 10, 20).
[ "$(grep -c '"loss"' "$work/run/metrics.jsonl")" -eq 4 ] || fail "metrics step lines"
[ "$(grep -c '"eval_loss"' "$work/run/metrics.jsonl")" -eq 3 ] || fail "metrics eval lines"
grep -q '"tokens_per_s"' "$work/run/metrics.jsonl" || fail "no tokens_per_s"
[ ! -e "$work/run.saving" ] && [ ! -e "$work/run.previous" ] || fail "save left a folder behind"

# --out a/b/run in a folder without a/: train makes the folders above the
# run, and the lock and the mark work there as in an existing folder.
out=$("$bin" train --task copy --out "$work/a/b/run" --steps 2 --eval-every 0 \
  "${tiny[@]}") || fail "train --out a/b/run: $out"
[ -f "$work/a/b/run/trainer_state.json" ] || fail "--out a/b/run wrote no run"
[ -f "$work/a/b/run.lock" ] || fail "--out a/b/run has no lock file beside it"
[ -f "$work/a/b/run/.glassllm-run" ] || fail "--out a/b/run has no run-folder mark"
one_line_error "a training run exists; pass --resume to continue it or choose another --out" \
  "$bin" train --task copy --out "$work/a/b/run" "${tiny[@]}"
touch "$work/file"
one_line_error "cannot make the folder $work/file/b for the run" \
  "$bin" train --task copy --out "$work/file/b/run" "${tiny[@]}"

# The run is a checkpoint like any other.
"$bin" generate "$work/run" --prompt "C ab=" --max-new-tokens 3 >/dev/null || fail "generate"
ev=$("$bin" eval "$work/run" --batches 2) || fail "eval"
echo "$ev" | grep -q '^copy, held-out, [0-9]* targets, [0-9]* examples: loss [0-9.]* | accuracy' \
  || fail "eval output: $ev"
ev=$("$bin" eval "$work/run" --task mix --batches 1) || fail "eval mix"
echo "$ev" | grep -q '(add .*, copy .*, reverse .*, sort .*)' || fail "eval mix output: $ev"

# --init-from: a new run starting from the first one's weights (every token
# row found by its text), its sizes by default; other sizes are refused.
out=$("$bin" train --task copy --out "$work/tuned" --init-from "$work/run" --steps 2 \
  --eval-every 0 --batch-size 4) || fail "init-from: $out"
echo "$out" | grep -q "^starting from $work/run: every weight, and 99 of 99 token rows" \
  || fail "init-from message: $out"
grep -q '"init_from": "'"$work/run"'"' "$work/tuned/trainer_state.json" || fail "init_from not saved"
grep -q '"d_model": 16' "$work/tuned/trainer_state.json" || fail "init-from sizes not the checkpoint's"
one_line_error "--init-from $work/run: --d-model is 16 there but 32 here; pass --d-model 16" \
  "$bin" train --task copy --out "$work/x" --init-from "$work/run" --d-model 32

# Refusals, each one line.
one_line_error "a training run exists; pass --resume to continue it or choose another --out" \
  "$bin" train --task copy --out "$work/run" "${tiny[@]}"
one_line_error "was trained with --d-model 16, not 32" \
  "$bin" train --out "$work/run" --resume --d-model 32
one_line_error "holds no training run" "$bin" train --out "$work/none" --resume
one_line_error "unknown task 'cpy'" "$bin" train --task cpy --out "$work/x" "${tiny[@]}"
one_line_error "use --max-len 36 or more" "$bin" train --task copy --out "$work/x" --max-len 16
[ ! -e "$work/x" ] || fail "a refused run left a folder behind"

# Ctrl-C: the current step finishes, the run is saved, status 130; --resume continues.
"$bin" train --task copy --out "$work/long" --steps 1000000 --save-every 0 --eval-every 0 \
  --log-every 1000 "${tiny[@]}" > "$work/long.log" 2>&1 &
pid=$!
for _ in $(seq 50); do  # wait for the first save (step 0), then let a few steps run
  [ -f "$work/long/trainer_state.json" ] && break
  sleep 0.1
done
sleep 0.5
kill -INT $pid
wait $pid; status=$?
[ $status -eq 130 ] || fail "Ctrl-C: exit status $status, expected 130: $(cat "$work/long.log")"
grep -q "^interrupted at step [0-9]*: saved $work/long; continue with --resume" "$work/long.log" \
  || fail "Ctrl-C message: $(cat "$work/long.log")"
step=$(sed -n 's/^interrupted at step \([0-9]*\):.*/\1/p' "$work/long.log")
grep -q "\"step\": $step," "$work/long/trainer_state.json" || fail "saved state is not step $step"
out=$("$bin" train --out "$work/long" --resume --steps $((step + 3))) || fail "resume: $out"
echo "$out" | grep -q "^resuming $work/long at step $step of $((step + 3))" || fail "resume: $out"
echo "$out" | grep -q "^finished $((step + 3)) steps" || fail "resume end: $out"

for cmd in train eval; do "$bin" "$cmd" --help >/dev/null || fail "$cmd --help"; done

# Run folders keep what they hold: a file and a folder of the user's survive
# every save; a symlinked --out is followed (the link stays, the target gets
# the run); a run reached by two names (a link) shares one lock.
"$bin" train --task copy --out "$work/keep" --steps 2 --eval-every 0 --eval-batches 1 \
  "${tiny[@]}" >/dev/null || fail "keep: first run"
echo "my notes" > "$work/keep/notes.txt"
mkdir "$work/keep/plots" && echo "a plot" > "$work/keep/plots/loss.txt"
"$bin" train --out "$work/keep" --resume --steps 4 >/dev/null 2>&1 || fail "keep: resume"
[ "$(cat "$work/keep/notes.txt")" = "my notes" ] || fail "a save lost the user's notes.txt"
[ "$(cat "$work/keep/plots/loss.txt")" = "a plot" ] || fail "a save lost the user's plots/"
grep -q '"step": 4' "$work/keep/trainer_state.json" || fail "keep: not at step 4"
mkdir "$work/target" && ln -s "$work/target" "$work/link"
"$bin" train --task copy --out "$work/link" --steps 2 --eval-every 0 --eval-batches 1 \
  "${tiny[@]}" >/dev/null || fail "train through a symlink"
[ -L "$work/link" ] || fail "the symlinked --out was replaced"
[ -f "$work/target/trainer_state.json" ] || fail "the link's target holds no run"
"$bin" train --out "$work/link" --resume --steps 4 >/dev/null 2>&1 || fail "resume through a link"
grep -q '"step": 4' "$work/target/trainer_state.json" || fail "link: target not at step 4"
exec 9>>"$work/target.lock"
flock -x 9
one_line_error "another glassllm train is using this run" \
  "$bin" train --out "$work/link" --resume
exec 9>&-
# A 250-character output name: the temporary file gets a short name instead.
long=$(printf 'x%.0s' $(seq 250))
"$bin" forward "$work/run" --tokens 1 --out "$work/$long" >/dev/null || fail "a 250-character name"
[ -f "$work/$long" ] || fail "no file with the 250-character name"
echo "cli_train: all passed"
