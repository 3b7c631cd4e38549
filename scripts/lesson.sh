#!/usr/bin/env bash
# lesson.sh N [--no-pause] [--dir DIR] [--lang pt]: runs lesson N's commands
# (docs/teaching/lesson-N-*.md) in the order the plan shows them, each
# printed before its output, and waits for Enter between steps, so that a
# teacher can rehearse a lesson, or present it, from one terminal.
#
# The commands are read from the plan itself: every line of a ```sh block
# and every `$ ` line of a ```console block (the blocks docs_in_sync checks),
# so what runs is what the page shows. They run from the repository's folder
# (or DIR), as the page types them: ./build/glassllm ..., ./build/examples/...
# A command that fails is reported and the lesson goes on; the exit status
# is 1 if any failed.
#   --no-pause   do not wait between steps (a rehearsal, or a test)
#   --dir DIR    run the commands in DIR instead (it needs build/ and models/)
#   --lang pt    read the Portuguese plan, docs/pt/ensino/aula-N-*.md (the
#                same commands; the runner's own lines stay English)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage() { echo "lesson.sh: $1 (usage: scripts/lesson.sh N [--no-pause] [--dir DIR] [--lang en|pt])" >&2; exit 2; }
[ $# -ge 1 ] || usage "which lesson?"
n=$1; shift
pause=yes dir=$root lang=en
while [ $# -gt 0 ]; do
  case "$1" in
    --no-pause) pause=no ;;
    --dir) [ $# -ge 2 ] || usage "--dir needs a folder"; dir=$2; shift ;;
    --lang) [ $# -ge 2 ] || usage "--lang needs en or pt"; lang=$2; shift ;;
    *) usage "unknown option '$1'" ;;
  esac
  shift
done
[[ $n =~ ^[0-9]+$ ]] || usage "N must be a lesson number, not '$n'"
case "$lang" in
  en) folder=docs/teaching prefix=lesson ;;
  pt) folder=docs/pt/ensino prefix=aula ;;
  *) usage "--lang must be en or pt, not '$lang'" ;;
esac
shopt -s nullglob
plans=("$root/$folder/$prefix-$n"-*.md)
if [ ${#plans[@]} -ne 1 ]; then
  echo "lesson.sh: no lesson $n in $folder; the lessons are:" >&2
  for p in "$root/$folder/$prefix"-*.md; do echo "  $(basename "$p" .md)" >&2; done
  exit 2
fi
[ -d "$dir" ] || { echo "lesson.sh: --dir $dir is not a folder" >&2; exit 2; }

# The plan's commands, one a line, in order.
mapfile -t commands < <(awk '
  /^```/ { if (block == "") { block = ($0 ~ /^```sh$/) ? "sh" : ($0 ~ /^```console/) ? "console" : "other" } else block = ""; next }
  block == "sh" && NF && $1 !~ /^#/ { print; next }
  block == "console" && /^\$ / { print substr($0, 3) }
' "${plans[0]}")
if [ ${#commands[@]} -eq 0 ]; then
  echo "lesson.sh: ${plans[0]} shows no command" >&2
  exit 1
fi

echo "$(head -1 "${plans[0]}" | sed "s/^# //")"
echo "${#commands[@]} commands, from ${plans[0]#"$root"/}"
failed=0
for i in "${!commands[@]}"; do
  cmd=${commands[$i]}
  echo
  echo "[$((i + 1))/${#commands[@]}] \$ $cmd"
  (cd "$dir" && bash -c "$cmd")
  status=$?
  if [ $status -ne 0 ]; then
    echo "lesson.sh: that command exited with status $status"
    failed=$((failed + 1))
  fi
  if [ $pause = yes ] && [ $((i + 1)) -lt ${#commands[@]} ]; then
    read -r -p "-- Enter for the next step --" _ </dev/tty || true
  fi
done
echo
echo "Lesson $n: ${#commands[@]} commands, $failed failed"
[ $failed -eq 0 ]
